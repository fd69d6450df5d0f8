"""The seam between the ASGI app and what serves a request: one `Endpoint` per era.

`HTTPApp` (`mcpkit.transports.http_server.app`) checks what every request must pass whatever its era
(path, Host/Origin, a POST's size, content type and JSON), asks the pure
`mcpkit.protocol.http.route` which route the request takes, and hands the request to the one
endpoint its table holds for that route: `ModernEndpoint` (`mcpkit.transports.http_server.modern`), or
the legacy sessions behind `SessionlessRoute` (a POST naming no session) and `LegacyRoute` (a
session's POST, GET and DELETE; both `mcpkit.transports.legacy.routes`). So the app never asks
which era it serves. Only ASGI here; no knowledge of eras or sessions.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any, Protocol

from mcpkit.errors import RPCError
from mcpkit.protocol.codec import Message
from mcpkit.protocol.headers import RequestHeaders
from mcpkit.protocol.http_refusals import Refusal
from mcpkit.transports.http_server.exchange import plain_response

__all__ = [
    "Endpoint",
    "Receive",
    "Scope",
    "Send",
    "refuse",
]

Scope = dict[str, Any]
Receive = Callable[[], Awaitable[dict[str, Any]]]
Send = Callable[[dict[str, Any]], Awaitable[None]]


class Endpoint(Protocol):
    """What serves the requests of one route (an era)."""

    async def serve(self, scope: Scope, headers: RequestHeaders, message: Message | None,
                    receive: Receive, send: Send) -> None:
        """Answer one HTTP request, completely (never leaving the response unstarted), after the
        checks every request passes: `scope` is the ASGI scope (its method; a GET reads every
        `Last-Event-ID` in its raw headers), `message` a POST's decoded body (None for any other
        method). ASGI's own shape, with what the app already read: no record is built per
        request, a cost every request would pay."""

    def close(self) -> None:
        """The server is stopping: end open streams gracefully."""

    def running(self) -> int:
        """How many requests it is serving now (a stopping server waits for them)."""

    def stop_running(self, error: Callable[[str], RPCError]) -> None:
        """The grace period is over: stop every request still running, each answered with
        `error(method)` instead of its result."""

    def stores(self) -> tuple[tuple[str, Any], ...]:
        """The stores of its own it serves from, each with the name a readiness check gives
        it (`/readyz` asks each one): none for the modern endpoint, whose state the server's
        store holds."""


async def refuse(send: Send, refusal: Refusal) -> None:
    """Send `refusal` as a complete response."""
    await plain_response(send, refusal.status, refusal.message, list(refusal.headers) or None)
