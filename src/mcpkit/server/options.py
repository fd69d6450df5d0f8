"""`ServerOptions`: the settings that apply to a whole server, each with a safe default.

Its own module because the layers below the server's class read it too (the sealing of
`requestState`, the command line's settings, the extensions' own options) without needing
the class that serves.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, TypeVar

from mcpkit.protocol.framing import DEFAULT_MAX_MESSAGE_BYTES
from mcpkit.server.extension_options import check_extension_options
from mcpkit.server.resources import CacheHint

if TYPE_CHECKING:
    from mcpkit.store import Store

__all__ = [
    "ServerOptions",
]

K = TypeVar("K")


@dataclass(frozen=True, slots=True)
class ServerOptions:
    """Settings that apply to the whole server; each has a safe default."""

    page_size: int = 100
    """Items per page of every list result."""
    list_cache: CacheHint = field(default_factory=lambda: CacheHint(60_000, "public"))
    """Caching hint of list results and `server/discover`."""
    read_cache: CacheHint = field(default_factory=lambda: CacheHint(0, "private"))
    """Default caching hint of `resources/read` (a resource may override it)."""
    logging: bool = True
    """Advertise `logging` so handlers may send log messages to clients that ask for them."""
    max_message_bytes: int = DEFAULT_MAX_MESSAGE_BYTES
    """Largest message a transport accepts."""
    state_keys: tuple[str | bytes, ...] = ()
    """Keys sealing `requestState` and handles (base64 text or raw bytes, 32 bytes
    recommended): the first seals, all open, so a key rotates in before the old one is
    dropped. Empty: the MCPKIT_STATE_KEYS environment variable, else the key ring persisted in
    the user's data folder (`mcpkit keys path`), which every server of this user on this host
    shares, so a retry may reach any of them; only when that ring can be neither read nor
    created, a key of this process's own (said once in the log). Replicas on several hosts
    need the same keys, here or in MCPKIT_STATE_KEYS (docs/state.md). Make one with
    `mcpkit keys new` or `mcpkit.server.sealing.new_state_key()`."""
    state_ttl: float = 300.0
    """Seconds a sealed `requestState` stays valid."""
    store: Store | str | None = None
    """Where state is kept: a `Store` for single-use nonces, or a store URL for every seam
    (`mcpkit.store.urls`: "memory", "sqlite:///state.db", "postgresql://...", "redis://...";
    with PostgreSQL or Redis, replicas share single use, legacy sessions, their events and
    the state keys). None: the MCPKIT_STORE environment variable, else single use in an
    SQLite file beside the key ring in the user's data folder (so a restarted server, or any
    other of this user on this host, refuses a replay) and everything else in this process;
    "memory" keeps single use in this process too."""
    clock: Callable[[], float] = time.time
    """Unix time in seconds, for state and handle expiry."""
    expose_errors: bool = False
    """Put an unexpected exception's type and message in what the client sees (a tool's
    `isError` text, the -32603 of a resource or prompt). Off by default because a message may
    hold secrets (paths, queries, tokens): the client then gets only an error id, and the
    traceback goes to the server log under the same id. Meant for development
    (`mcpkit run --dev`)."""
    extensions: Mapping[str, Any] = field(default_factory=dict)
    """The options of the extensions the server runs, each under the name its extension
    registered with its type (`mcpkit.server.extension_options.register_options`; the Tasks
    extension's: `{"tasks": mcpkit.ext.tasks.TaskOptions(...)}`). An extension left out runs
    with its defaults; it reads its own with `extension`."""
    scoped_lists: bool = False
    """Leave out of `tools/list`, `resources/list`, `resources/templates/list` and
    `prompts/list` what the caller's token does not grant the `scopes=` of (AUTH-12); a
    caller without a principal (stdio, an unprotected server) still sees everything."""
    grace_s: float = 5.0
    """How long a stopping server (SIGTERM, `mcpkit run --grace SECONDS`) lets the requests and
    the tasks it runs finish. Resumable tasks are handed back at once; a request still running
    when it ends is answered with a retryable error (HTTP 503 with Retry-After), a task still
    running ends `failed`, saying why."""
    max_call_depth: int = 8
    """How deep handlers may nest calls of their own server (`ctx.call_tool`,
    `ctx.read_resource`, `ctx.get_prompt`): one more is -32603 naming the call."""

    def __post_init__(self) -> None:
        grace = self.grace_s
        if not isinstance(grace, int | float) or isinstance(grace, bool) or not (
                0 <= grace < float("inf")):
            raise ValueError(f"ServerOptions.grace_s must be seconds, 0 or more, not {grace!r}")
        depth = self.max_call_depth
        if type(depth) is not int or depth < 1:
            raise ValueError(f"ServerOptions.max_call_depth must be a positive integer, not "
                             f"{depth!r}")
        object.__setattr__(self, "extensions", check_extension_options(self.extensions))

    def extension(self, name: str, kind: type[K]) -> K:
        """The options of the extension registered as `name` (of type `kind`): those given in
        `extensions`, else `kind()`, its defaults."""
        given = self.extensions.get(name)
        if given is None:
            return kind()
        if not isinstance(given, kind):
            raise TypeError(f"ServerOptions.extensions[{name!r}] is a "
                            f"{type(given).__name__}, not a {kind.__name__}")
        return given
