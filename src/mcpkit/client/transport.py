"""The seam between `Client` and the wire: one exchange at a time.

A `ClientTransport` sends one request and returns its response message, handing every
notification that belongs to that request (progress, log messages, listen-stream notifications)
to `on_notification` as it arrives. Requests a legacy server sends to us (elicitation, sampling,
roots, ping) go to the handler set with `set_request_handler`, whose return value (a result dict,
or an `RPCError` raised) is sent back. Cancelling the awaiting task cancels the request on the
wire (stdio: `notifications/cancelled`; HTTP: closing the response stream).
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any, Protocol

__all__ = ["ClientTransport", "NotificationHandler", "RequestHandler"]

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
