"""Multi round-trip requests on the server: rounds, the sealed `requestState`, single use.

In 2026-07-28 a server never sends a request to the client (MRTR-1). A handler that needs
input calls `ctx.ask(...)` (or `ctx.elicit`, `ctx.sample`, `ctx.roots`); when the request
does not yet carry the answer, the `InputRequired` signal ends this round and the method
answers an `InputRequiredResult`. The client retries the same request with `inputResponses`
and the echoed `requestState`, and the handler runs again from the top: each ask now returns
its answer. A `Round` is that bookkeeping for one request:

- on the way in it opens the presented `requestState` (every failure is -32602 naming the
  check, logged, and nothing of the state is used) and takes `inputResponses`;
- while the handler runs it answers asks from answers carried in the state, then from this
  request's `inputResponses`, and collects what is still missing;
- on the way out it seals `ctx.state` and the answers so far into a new `requestState`
  bound to the principal, the method and its target and arguments, with a short expiry.

So no server memory is used between rounds, and any instance holding the keys can serve a
retry. The keys are `ServerOptions.state_keys`, else MCPKIT_STATE_KEYS, else the ring kept in
the user's data folder (`mcpkit.store.state_keys`), which every server the user runs shares
with no configuration; only when that ring can be neither read nor created does a process seal
with a key of its own, and it says so once; a server whose store URL is PostgreSQL or Redis
keeps the ring there instead (`mcpkit.store.shared_ring`), shared by replicas on every host.
Single use (for one-time actions) records the state's nonce in the server's `Store`, which a
store URL (`ServerOptions.store`, MCPKIT_STORE) picks.

Imports: `mcpkit.protocol`, `mcpkit.errors`, `mcpkit.types`, `mcpkit.store`, `mcpkit.server.asking`.
"""

from __future__ import annotations

import base64
import contextlib
import logging
import os
from collections.abc import Awaitable, Callable, Mapping
from typing import TYPE_CHECKING, Any, Final

import orjson

from mcpkit.errors import InvalidParamsError, MissingRequiredClientCapabilityError
from mcpkit.protocol.envelope import missing_capabilities
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
from mcpkit.schema import json_type
from mcpkit.server.asking import Question, check_question
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
    "InputRequired",
    "Round",
    "Sealer",
    "begin_round",
    "in_rounds",
    "new_state_key",
    "principal_key",
]

log = logging.getLogger("mcpkit.server")

STATE_KEYS_ENV: Final = "MCPKIT_STATE_KEYS"
"""Environment variable read when `ServerOptions.state_keys` is empty: keys separated by
commas or spaces, the first one sealing."""

_EMPTY: Final[dict[str, Any]] = {}


def new_state_key() -> str:
    """A fresh 256-bit key for `ServerOptions.state_keys` or MCPKIT_STATE_KEYS."""
    return KeyRing.key_text(os.urandom(32))


class InputRequired(BaseException):
    """Ends a round that still needs input from the client.

    A BaseException, like cancellation, so that a handler's `except Exception` cannot
    swallow it by accident.
    """


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


def begin_round(ctx: Any, target: str, arguments: Any, params: dict[str, Any]) -> Round:
    """The round of one `tools/call`, `prompts/get` or `resources/read`; the context asks
    through it. The method catches `InputRequired` and answers `round.input_required()`.
    A request a handler made of its own server (`ctx.call_tool`) has its caller's round
    already, and asks through it (`mcpkit.server.calls`)."""
    if ctx._round is not None:
        return ctx._round  # type: ignore[no-any-return]
    rnd = Round(ctx.server.sealer, ctx.method, target, arguments, params, ctx.principal)
    ctx._round = rnd
    return rnd


async def in_rounds(
    ctx: Any, target: str, arguments: Any, params: dict[str, Any],
    work: Callable[[], Awaitable[dict[str, Any]]],
) -> dict[str, Any]:
    """Serve one `tools/call`, `prompts/get` or `resources/read` as a round: begin it (a bad
    presented state is refused before the handler runs), then run `work` for the method's
    result; when the handler still needs input, the result is the round's
    `InputRequiredResult` instead (never a cacheable one, MRTR-20)."""
    rnd = begin_round(ctx, target, arguments, params)
    try:
        return await work()
    except InputRequired:
        return rnd.input_required()


class _Ledger:
    """What a round that was answered, or that asks, keeps; most requests never make one."""

    __slots__ = ("carried", "opened", "pending", "redeemed", "responses", "state", "used")

    def __init__(self) -> None:
        self.responses: dict[str, Any] = _EMPTY
        self.opened: Opened | None = None
        self.carried: dict[str, Any] = _EMPTY
        self.state: dict[str, Any] | None = None
        self.pending: dict[str, Question] = {}
        self.used: dict[str, Any] = {}
        self.redeemed = False


class Round:
    """One request's part in a multi round-trip exchange."""

    __slots__ = ("_arguments", "_ledger", "_method", "_principal", "_sealer", "_target")

    def __init__(
        self, sealer: Sealer, method: str, target: str, arguments: Any, params: dict[str, Any],
        principal: Any,
    ) -> None:
        self._sealer = sealer
        self._method = method
        self._target = target
        self._arguments = arguments
        self._principal = principal
        self._ledger: _Ledger | None = None
        if "inputResponses" in params or "requestState" in params:
            self._take(params)

    @property
    def where(self) -> str:
        return f"{self._method} {self._target!r}"

    def _book(self) -> _Ledger:
        if self._ledger is None:
            self._ledger = _Ledger()
        return self._ledger

    def _take(self, params: dict[str, Any]) -> None:
        """Check what a retry brought, before the handler runs; nothing of a bad state is used."""
        book = self._book()
        responses = params.get("inputResponses", _EMPTY)
        if type(responses) is not dict:
            raise InvalidParamsError(
                f"{self.where}: inputResponses must be an object mapping each key of the "
                f"previous inputRequests to its result; got {json_type(responses)}"
            )
        book.responses = responses
        if "requestState" not in params:
            return
        token = params["requestState"]
        if type(token) is not str or not token:
            raise InvalidParamsError(
                f"{self.where}: requestState must be the string from the previous result, "
                "echoed unchanged"
            )
        try:
            opened = self._sealer.open_state(
                token, self._principal, self._method, self._target, self._arguments, self.where
            )
        except StateRejected as exc:
            log.warning("rejected requestState on %s: %s", self.where, exc.reason)
            raise
        body = orjson.loads(opened.body) if opened.body else _EMPTY
        state, carried = body.get("s"), body.get("a")
        book.state = state if type(state) is dict else None
        book.carried = carried if type(carried) is dict else _EMPTY
        book.opened = opened

    @property
    def given(self) -> dict[str, Any]:
        """Every answer this request has for its questions so far: carried in its state,
        sent in its `inputResponses`, or already used (a copy, by key)."""
        book = self._book()
        return {**book.carried, **book.responses, **book.used}

    @property
    def state(self) -> dict[str, Any]:
        book = self._book()
        if book.state is None:
            book.state = {}
        return book.state

    def can_ask(self, capabilities: dict[str, Any], question: Question) -> bool:
        return not missing_capabilities(capabilities, question.capability)

    async def ask(
        self,
        capabilities: dict[str, Any],
        questions: Mapping[str, Question],
        *,
        single_use: bool = False,
        skip_unsupported: bool = False,
    ) -> dict[str, Any]:
        """Each question's answer, or InputRequired for the ones this request lacks.

        An answer comes from the state (asked and answered in an earlier round) or else from
        this request's `inputResponses`. A `single_use` answer needs a valid state, which is
        then recorded as used, so replaying the retry is refused.
        """
        where = self.where
        lacking: dict[str, Any] = {}
        chosen: list[tuple[str, Question]] = []
        for key, question in questions.items():
            check_question(where, key, question)
            missing = missing_capabilities(capabilities, question.capability)
            if not missing:
                chosen.append((key, question))
            elif not skip_unsupported:
                for name, sub in missing.items():
                    lacking.setdefault(name, {}).update(sub)
        if lacking:
            names = ", ".join(sorted(lacking))
            raise MissingRequiredClientCapabilityError(
                lacking, f"{where} needs the client capability {names} to ask "
                f"{', '.join(repr(k) for k in questions)}; declare it in _meta "
                "io.modelcontextprotocol/clientCapabilities",
            )
        book = self._book()
        trusted = book.opened is not None or not single_use
        answers: dict[str, Any] = dict.fromkeys(questions)
        waiting: list[tuple[str, Question]] = []
        for key, question in chosen:
            question.request(where)  # checks the question where it is asked
            if key in book.carried:
                raw = book.carried[key]
            elif trusted and key in book.responses:
                raw = book.responses[key]
            else:
                waiting.append((key, question))
                continue
            answers[key] = question.read(raw, where, key)
            book.used[key] = raw
        if waiting:
            book.pending.update(waiting)
            raise InputRequired(where)
        if single_use:
            await self.redeem()
        return answers

    async def redeem(self) -> bool:
        """Use the presented state at most once; False when none was presented."""
        book = self._book()
        if book.opened is None:
            return False
        if not book.redeemed:
            await self._sealer.redeem(book.opened, self.where)
            book.redeemed = True
        return True

    def input_required(self) -> dict[str, Any]:
        """The `InputRequiredResult` that ends this round: what is still missing (MRTR-6) and
        the sealed state (always, so a retry can be bound to this request)."""
        book = self._book()
        carried = {**book.carried, **book.used} if book.used else book.carried
        body: dict[str, Any] = {}
        if book.state:
            body["s"] = book.state
        if carried:
            body["a"] = carried
        try:
            data = orjson.dumps(body) if body else b""
        except TypeError as exc:
            raise TypeError(
                f"{self.where}: ctx.state must hold only JSON data (dict, list, str, int, "
                f"float, bool, None): {exc}"
            ) from None
        result: dict[str, Any] = {"resultType": "input_required"}
        if book.pending:
            result["inputRequests"] = {
                key: question.request(self.where) for key, question in book.pending.items()
            }
        result["requestState"] = self._sealer.seal_state(
            self._principal, self._method, self._target, self._arguments, data
        )
        return result

