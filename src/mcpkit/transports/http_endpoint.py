"""The seam between the ASGI app and what serves a request: one `Endpoint` per era.

`HTTPApp` (`mcpkit.transports.http_server`) checks what every request must pass whatever its era
(path, Host/Origin, a POST's size, content type and JSON), asks the pure
`mcpkit.protocol.http.route` which route the request takes, and hands an `HTTPCall` to the one
endpoint its table holds for that route: `ModernEndpoint` (`mcpkit.transports.http_modern`), or
the legacy sessions behind `SessionlessRoute` (a POST naming no session) and `LegacyRoute` (a
session's POST, GET and DELETE; both `mcpkit.transports.http_legacy`). So the app never asks
which era it serves. Only ASGI here; no knowledge of eras or sessions.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any, Protocol

from mcpkit.protocol.codec import Message
from mcpkit.protocol.headers import RequestHeaders
from mcpkit.protocol.http_refusals import Refusal
from mcpkit.transports.http_exchange import plain_response

__all__ = ["Endpoint", "HTTPCall", "Receive", "Send", "refuse"]

Receive = Callable[[], Awaitable[dict[str, Any]]]
Send = Callable[[dict[str, Any]], Awaitable[None]]


@dataclass(slots=True)
class HTTPCall:
    """One HTTP request as an endpoint gets it, after the checks every request passes.

    Not frozen: a frozen dataclass sets each field through `object.__setattr__`, a cost every
    request would pay (about 0.4 µs of the app's 7); nothing keeps or changes a call."""

    method: str
    """The HTTP method (`POST`, `GET`, `DELETE`, or any other, which is refused)."""
    route: str
    """What `mcpkit.protocol.http.route` decided: `MODERN`, `LEGACY` or `SESSION`."""
    headers: RequestHeaders
    raw_headers: list[tuple[bytes, bytes]]
    """The ASGI scope's headers (a GET reads every `Last-Event-ID` there)."""
    message: Message | None
    """A POST's decoded body; None for any other method."""
    receive: Receive
    send: Send


class Endpoint(Protocol):
    """What serves the requests of one route (an era)."""

    async def serve(self, call: HTTPCall) -> None:
        """Answer `call`, completely (never leaving the response unstarted)."""

    def close(self) -> None:
        """The server is stopping: end open streams gracefully."""


async def refuse(send: Send, refusal: Refusal) -> None:
    """Send `refusal` as a complete response."""
    await plain_response(send, refusal.status, refusal.message, list(refusal.headers) or None)
