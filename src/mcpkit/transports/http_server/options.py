"""What the Streamable HTTP endpoint is told: `HTTPOptions`, every field with a safe default.

Its own module so that what the app serves and how a listener runs it (`running`) both take
it, and so that the era's stores and limits it names (2025-11-25 sessions, their events) are
named in one place. Imports the stdlib, `mcpkit.legacy.session_quota`, the era's store seams
(`mcpkit.store.legacy`) and the listener's and probes' settings beside it.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from mcpkit.legacy.session_quota import SessionLimits
from mcpkit.store.legacy.events import EventStore
from mcpkit.store.legacy.sessions import SessionStore
from mcpkit.transports.http_server.health import HealthPaths
from mcpkit.transports.http_server.limits import ListenerLimits

__all__ = [
    "HTTPOptions",
]


@dataclass(frozen=True, slots=True)
class HTTPOptions:
    """How the HTTP endpoint behaves; every field has a safe default."""

    path: str | None = None
    """The one path served (others get 404); None serves every path (when mounted)."""
    allowed_hosts: tuple[str, ...] | None = None
    """`Host` values accepted (see `HostPolicy`); None: loopback names only."""
    allowed_origins: tuple[str, ...] = ()
    """Browser origins accepted besides those on an allowed host (see `HostPolicy`)."""
    max_body_bytes: int | None = None
    """Largest POST body; None: the server's `options.max_message_bytes` (4 MiB)."""
    keepalive_s: float = 15.0
    """Seconds of silence after which an open SSE stream gets a `:` comment; 0 disables."""
    legacy: bool = True
    """Serve 2025-11-25 clients (initialize, sessions, the GET stream) on the same URL."""
    session_store: SessionStore[Any] | None = None
    """Where legacy sessions live; None: a `MemorySessionStore` in this process."""
    peer_timeout_s: float = 600.0
    """How long a legacy request waits for the client to answer a request sent to it."""
    event_store: EventStore | None = None
    """Where legacy SSE events are kept for `Last-Event-ID` resumption; None: a bounded
    `MemoryEventStore` in this process. (2026-07-28 streams have no resumption.)"""
    sse_retry_ms: int | None = None
    """Polling for legacy requests: one still running after `sse_poll_after_s` has its SSE
    connection closed after an event carrying this `retry` (ms); the client resumes with GET +
    `Last-Event-ID`, where the rest and the response arrive. None: connections stay open."""
    sse_poll_after_s: float = 1.0
    """How long a legacy stream keeps its connection in polling mode (`sse_retry_ms`)."""
    session_idle_s: float = 3600.0
    """A legacy session unused this long ends (the default store's idle expiry; `mcpkit run
    --session-idle`): abandoned sessions, which clients rarely DELETE, do not pile up."""
    sessions: SessionLimits = field(default_factory=SessionLimits)
    """How many legacy sessions, how fast, per client and in all (see docs/security.md)."""
    listener: ListenerLimits = field(default_factory=ListenerLimits)
    """The listener's limits on heads, slow clients and connections, applied by `run_http`
    (under another ASGI server, that server's settings apply)."""
    auth: Any = None
    """A `ProtectedResource` (`mcpkit.transports.http_server.auth`, both eras), or an `AuthProxy`
    (`mcpkit.auth.proxy`: sign-in at an upstream identity provider); None: open to all."""
    health: HealthPaths = field(default_factory=HealthPaths)
    """Paths of the probes (`/healthz`, `/readyz`), served to anyone."""

    def __post_init__(self) -> None:
        if self.sse_retry_ms is not None and (type(self.sse_retry_ms) is not int
                                              or self.sse_retry_ms < 0):
            raise ValueError(f"HTTPOptions.sse_retry_ms must be None or milliseconds >= 0, not "
                             f"{self.sse_retry_ms!r}")
        if not self.sse_poll_after_s >= 0:
            raise ValueError(f"HTTPOptions.sse_poll_after_s must be seconds >= 0, not "
                             f"{self.sse_poll_after_s!r}")
        if type(self.session_idle_s) not in (int, float) or not self.session_idle_s > 0:
            raise ValueError(f"HTTPOptions.session_idle_s must be seconds > 0, not "
                             f"{self.session_idle_s!r}")

