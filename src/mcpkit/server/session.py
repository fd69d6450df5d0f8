"""`ServerSession`: the one seam between a transport and an era.

A transport holds one session object per connection (or per legacy HTTP session) and never asks
which era it speaks: it hands requests to `handle`, notifications to `notification`, and, when
`forwards_changes` is set, offers each change of the server's lists and resources to `forward`,
sending what comes back. `ModernSession` is the 2026-07-28 path (stateless: the request carries
its own `_meta`, changes travel on `subscriptions/listen` streams, so nothing is forwarded);
`mcpkit.legacy.LegacySession` is the 2025-11-25 one. Imports the server's own modules and the
protocol only.
"""

from __future__ import annotations

from collections.abc import Awaitable
from typing import Any, Protocol

from mcpkit.protocol.codec import Notification, Request
from mcpkit.server.context import Notify

__all__ = [
    "ModernSession",
    "ServerSession",
]


class ServerSession(Protocol):
    """What a transport needs of a connection's era."""

    forwards_changes: bool
    """The client hears of changes without asking (a legacy session): see `forward`."""

    def handle(self, request: Request, notify: Notify | None = None,
               principal: Any = None) -> Awaitable[dict[str, Any]]:
        """Serve one request; await it for its response message (it never raises, but for
        cancellation)."""

    def notification(self, note: Notification) -> None:
        """A notification from the client (cancellation is the transport's, not this)."""

    def forward(self, change: Any, capabilities: dict[str, Any]) -> dict[str, Any] | None:
        """The notification one change means to this client, or None."""


class ModernSession:
    """The modern era: each request stands alone, served by `Server.handle`."""

    __slots__ = ("server",)

    forwards_changes = False

    def __init__(self, server: Any) -> None:
        self.server = server

    def handle(self, request: Request, notify: Notify | None = None,
               principal: Any = None) -> Awaitable[dict[str, Any]]:
        # The server's coroutine itself: the hot path pays for no extra frame.
        response: Awaitable[dict[str, Any]] = self.server.handle(request, notify=notify,
                                                                 principal=principal)
        return response

    def notification(self, note: Notification) -> None:
        """roots/list_changed and unknown notifications need no answer."""

    def forward(self, change: Any, capabilities: dict[str, Any]) -> dict[str, Any] | None:
        return None
