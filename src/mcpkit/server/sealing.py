"""Sealing a server's `requestState` and handles: its keys, its clock and state lifetime, the
principal a token is bound to, and the store that makes a token good for one use.

The keys are `ServerOptions.state_keys`, else MCPKIT_STATE_KEYS, else the ring kept in the
user's data folder (`mcpkit.store.state_keys`), which every server the user runs shares with no
configuration, so any of them can serve a retry; only when that ring can be neither read nor
created does a process seal with a key of its own, and it says so once; a server whose store URL
is PostgreSQL or Redis keeps the ring there instead (`mcpkit.store.shared_ring`), shared by
replicas on every host. Single use (for one-time actions) records the state's nonce in the
server's `Store`, which a store URL (`ServerOptions.store`, MCPKIT_STORE) picks.

Imports: `mcpkit.protocol`, `mcpkit.store`, `mcpkit.types`.
"""

from __future__ import annotations

import base64
import contextlib
import logging
import os
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any, Final

from mcpkit.protocol.principals import principal_text
from mcpkit.protocol.request_state import (
    REQUEST_STATE,
    KeyRing,
    Opened,
    StateRejected,
    arguments_digest,
    open_token,
    seal_token,
    target_digest,
)
from mcpkit.store.state_keys import (
    DATA_DIR_ENV,
    PersistedRing,
    data_dir,
    key_file,
    read_key_file,
)
from mcpkit.store.urls import Backend, open_backend, store_from_env
from mcpkit.types.methods import METHODS

if TYPE_CHECKING:
    from mcpkit.server.server import ServerOptions
    from mcpkit.store import Store

__all__ = [
    "STATE_KEYS_ENV",
    "Sealer",
    "new_state_key",
    "principal_key",
]

log = logging.getLogger("mcpkit.server")

STATE_KEYS_ENV: Final = "MCPKIT_STATE_KEYS"
"""Environment variable read when `ServerOptions.state_keys` is empty: keys separated by
commas or spaces, the first one sealing."""


def new_state_key() -> str:
    """A fresh 256-bit key for `ServerOptions.state_keys` or MCPKIT_STATE_KEYS."""
    return KeyRing.key_text(os.urandom(32))


def principal_key(principal: Any) -> str | None:
    """The stable identity a state or handle is bound to, or None for an anonymous caller.

    A string is itself; an object or mapping gives its issuer and subject (`issuer`/`iss`
    and `subject`/`sub`/`client_id`/`id`), so the same caller matches across processes. The
    text is `mcpkit.protocol.principals.principal_text`'s: the same in every store engine.
    """
    if principal is None:
        return None
    if isinstance(principal, str):
        return principal_text(None, principal)
    get: Callable[[str], Any]
    if isinstance(principal, Mapping):
        get = principal.get
    else:
        def get(name: str) -> Any:
            return getattr(principal, name, None)
    subject = next((v for n in ("subject", "sub", "client_id", "id")
                    if isinstance(v := get(n), str | int) and not isinstance(v, bool)), None)
    if subject is None:
        raise TypeError(
            f"cannot bind request state to a principal of type {type(principal).__name__}: "
            "give it a 'subject' (or 'sub') attribute, or authenticate callers as strings"
        )
    issuer = next((v for n in ("issuer", "iss") if isinstance(v := get(n), str)), "")
    return principal_text(issuer or None, str(subject))


class Sealer:
    """A server's keys, clock, state lifetime and store: everything sealing needs."""

    __slots__ = ("_fixed", "_persisted", "_store", "backend", "clock", "ttl")

    def __init__(self, options: ServerOptions) -> None:
        keys: tuple[str | bytes, ...] = tuple(options.state_keys)
        if not keys:
            keys = tuple(os.environ.get(STATE_KEYS_ENV, "").replace(",", " ").split())
        # Configured keys are checked now, so a bad one stops the server at start; the
        # persisted ring is read when a state is first sealed or opened, so a server that never
        # asks for input never touches the disk.
        self._fixed = KeyRing(keys, os.urandom) if keys else None
        self._persisted: PersistedRing | None = None
        if not options.state_ttl > 0:
            raise ValueError(f"state_ttl must be a positive number of seconds, got {options.state_ttl!r}")
        self.ttl = float(options.state_ttl)
        self.clock = options.clock
        self.backend: Backend | None = None
        """What a store URL opened (`ServerOptions.store`, else MCPKIT_STORE): its pools
        connect on first use, and with PostgreSQL or Redis it also holds the state keys."""
        given = options.store if options.store is not None else store_from_env()
        if isinstance(given, str):
            self.backend = open_backend(given, clock=options.clock)
            given = self.backend.store
        self._store = given

    @property
    def ring(self) -> KeyRing:
        """The keys in use: configured ones, else the persisted ring (as its file is now), else,
        when no ring can be kept, a key of this process's own."""
        if self._fixed is not None:
            return self._fixed
        if self.backend is not None and self.backend.keys is not None:
            return self.backend.keys.ring(self.clock())  # type: ignore[no-any-return]
        if self._persisted is None:
            path = None
            try:
                path = key_file()
                self._persisted = PersistedRing(path)
            except (OSError, RuntimeError) as exc:  # RuntimeError: no home folder to be found
                log.warning(
                    "cannot keep state keys in %s (%s): this process seals requestState with "
                    "a key of its own, so a retry that reaches another process fails; make "
                    "that folder writable, set %s to one that is, or set %s (`mcpkit keys "
                    "new` makes a key)", path or "the user data folder", exc, DATA_DIR_ENV,
                    STATE_KEYS_ENV,
                )
                self._fixed = KeyRing((os.urandom(32),), os.urandom, ephemeral=True)
                return self._fixed
        return self._persisted.ring(self.clock())

    def check_keys(self) -> None:
        """Refuse at start a persisted ring that exists but cannot be used (readable by others,
        malformed): `KeyFileError` naming the fix, before a client's retry fails on it. A ring
        not made yet is made when first needed, and no place for one is warned about then."""
        if self._fixed is not None or (self.backend is not None and self.backend.keys is not None):
            return
        try:
            path = key_file()
        except RuntimeError:  # no home folder to be found
            return
        with contextlib.suppress(FileNotFoundError, NotADirectoryError):
            read_key_file(path)

    @property
    def store(self) -> Store:
        """Where redeemed states are recorded: the configured store, else an SQLite file next
        to the key ring, so every process of this user on this host (a restarted server, a
        second one) refuses a replay; memory only when that folder cannot be written."""
        if self._store is None:
            self._store = _default_store(self.clock)
        return self._store

    @property
    def ephemeral(self) -> bool:
        """No key was configured and none could be persisted: states sealed here open only in
        this process."""
        return self.ring.ephemeral

    def seal_state(
        self, principal: Any, method: str, target: str, arguments: Any, body: bytes
    ) -> str:
        return seal_token(
            self.ring, REQUEST_STATE, now=self.clock(), ttl=self.ttl,
            principal=principal_key(principal), target=target_digest(method, target),
            arguments=arguments_digest(arguments), body=body,
        )

    def open_state(
        self, token: str, principal: Any, method: str, target: str, arguments: Any, where: str,
    ) -> Opened:
        # Only the methods that may answer `input_required` (MRTR-4) name their target's kind.
        info = METHODS.get(method)
        noun = info.asks if info is not None and info.asks is not None else "request"
        return open_token(
            self.ring, REQUEST_STATE, token, now=self.clock(), principal=principal_key(principal),
            target=target_digest(method, target), arguments=arguments_digest(arguments),
            where=where, target_noun=noun,
        )

    async def redeem(self, opened: Opened, where: str, what: str = "requestState") -> None:
        """Record the token's nonce; a second presentation is rejected (-32602)."""
        nonce = base64.urlsafe_b64encode(opened.nonce).decode("ascii")
        if not await self.store.add(f"once:{nonce}", b"", opened.expires_at):
            log.warning("rejected %s on %s: already used", what, where)
            raise StateRejected(
                "replayed", f"{where}: this {what} was already used and is good for one use "
                "only; start the request again without it"
            )


def _default_store(clock: Callable[[], float]) -> Store:
    """The single-use store of a server given none (`Sealer.store`)."""
    from mcpkit.store.sqlite import DEFAULT_FILE, SQLiteStore

    folder = None
    try:
        folder = data_dir()
        folder.mkdir(mode=0o700, parents=True, exist_ok=True)
        if not os.access(folder, os.W_OK | os.X_OK):
            raise PermissionError("not writable")
        return SQLiteStore(folder / DEFAULT_FILE, clock=clock)
    except (OSError, RuntimeError) as exc:  # RuntimeError: no home folder to be found
        from mcpkit.store.memory import MemoryStore

        log.warning(
            "cannot keep single-use records in %s (%s): a redeemed requestState is refused "
            "again by this process only, so a restarted or second server would accept its "
            "replay; make that folder writable, set %s to one that is, or give the server a "
            "store (ServerOptions.store, MCPKIT_STORE)", folder or "the user data folder", exc,
            DATA_DIR_ENV)
        return MemoryStore(clock=clock)
