"""The seam between `Client` and the wire: one exchange at a time.

A `ClientTransport` sends one request and returns its response message, handing every
notification that belongs to that request (progress, log messages, listen-stream notifications)
to `on_notification` as it arrives. Requests a legacy server sends to us (elicitation, sampling,
roots, ping) go to the handler set with `set_request_handler`, whose return value (a result dict,
or an `RPCError` raised) is sent back. Cancelling the awaiting task cancels the request on the
wire (stdio: `notifications/cancelled`; HTTP: closing the response stream).

Notifications that belong to no request in flight (a legacy server's list-changed and
resource-updated notifications, its session-wide log messages) go to the handler set with
`set_notification_handler`, when a transport offers that method; it is optional, so a transport
without unsolicited traffic need not have it.

A `Connector` knows how to open a transport to one server, and how to name that server (`key`:
the command line of a stdio server, the origin of an HTTP one) so its era can be remembered.
The client opens a second transport through it when a legacy stdio server dies on the
`server/discover` probe and must be restarted for the `initialize` handshake.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any, Protocol

__all__ = [
    "ClientTransport",
    "Connector",
    "NotificationHandler",
    "RequestHandler",
    "http_status",
]

NotificationHandler = Callable[[dict[str, Any]], Awaitable[None]]
RequestHandler = Callable[[str, dict[str, Any] | None], Awaitable[dict[str, Any]]]


class ClientTransport(Protocol):
    async def request(
        self, message: dict[str, Any], *, on_notification: NotificationHandler | None = None
    ) -> dict[str, Any]:
        """Send one JSON-RPC request; return its response message (result or error)."""

    async def notify(self, message: dict[str, Any]) -> None:
        """Send one JSON-RPC notification."""

    def set_request_handler(self, handler: RequestHandler | None) -> None:
        """Answer server-to-client requests (legacy era only) with `handler`."""

    async def close(self) -> None:
        """Release the connection (and, for stdio, end the server process)."""

    # Optional: `allowing(max_bytes)`, a context manager under which the transport accepts
    # a message up to `max_bytes` past its own limit (HTTP and stdio have it); the client
    # uses it for a read whose size it knows beforehand (`Client.read_resource(max_bytes=)`).


class Connector(Protocol):
    key: str
    """Names the server for the era cache: `stdio:<command line>`, an HTTP origin, ..."""
    kind: str
    """`"stdio"`, `"http"` or `"memory"`: which probing rules apply (VER-9 or VER-12)."""

    async def connect(self) -> ClientTransport:
        """Open a new transport to the server (for stdio: start a new process)."""


def http_status(exc: BaseException) -> int | None:
    """The HTTP status a transport error carries (`status_code`), if any."""
    status = getattr(exc, "status_code", None)
    return status if isinstance(status, int) else None
