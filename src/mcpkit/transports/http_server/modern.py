"""`ModernEndpoint`: the 2026-07-28 side of Streamable HTTP, stateless.

Nothing is kept between requests, so any instance behind a round-robin balancer answers any
request the same way. A request is checked (Accept, a method of the initialize era, the mirrored
headers against the body: `mcpkit.protocol.http_refusals.request_refusal`) before the server
sees it, and its response is JSON or a request-scoped SSE stream (see `Exchange`); a
notification is accepted with 202, a response refused, and any HTTP method but POST answered
with 405. Imports the layers below and the transports' HTTP modules only.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Final

from mcpkit.errors import RPCError
from mcpkit.protocol.codec import Message, Notification, Request, encode
from mcpkit.protocol.headers import RequestHeaders
from mcpkit.protocol.http import PRINCIPAL_SCOPE_KEY, Status, accepts, error_status, retry_after
from mcpkit.protocol.http_refusals import not_allowed, request_refusal, response_refusal
from mcpkit.protocol.rejections import error_response
from mcpkit.tracing.spans import active, in_scope
from mcpkit.transports.http_server.drain import stopping_error
from mcpkit.transports.http_server.endpoint import Receive, Scope, Send, refuse
from mcpkit.transports.http_server.exchange import Exchange, Watchlist, plain_response
from mcpkit.types.methods import Method

__all__ = ["ModernEndpoint"]

_JSON_TYPE: Final = (b"content-type", b"application/json")


class ModernEndpoint:
    """Serves modern POSTs for one `Server`; an `Endpoint`. `sessions`: 2025-11-25 sessions
    are served beside it (the 405 it answers names their GET and DELETE)."""

    def __init__(self, server: Any, keepalive_s: float, sessions: bool) -> None:
        self.server = server
        self._keepalive = keepalive_s
        self._sessions = sessions
        self._watchlist = Watchlist()
        self._running: dict[Exchange, str] = {}
        """The requests being served, with their methods (a stopping server waits for them)."""
        self._stopped: Callable[[str], RPCError] = stopping_error

    async def serve(self, scope: Scope, headers: RequestHeaders, message: Message | None,
                    receive: Receive, send: Send) -> None:
        if scope["method"] != "POST":
            await refuse(send, not_allowed(scope["method"], self._sessions))
            return
        decoded = message
        if type(decoded) is Request:
            # The modern request path, inline: it is the one every request takes.
            json_ok, sse_ok = accepts(headers.accept)
            refusal = request_refusal(headers, decoded, json_ok, sse_ok,
                                      self._tool_params(decoded)
                                      if decoded.method == Method.TOOLS_CALL else None)
            if refusal is not None:
                await refuse(send, refusal)
                return
            exchange = Exchange(send, receive, self._keepalive)
            work = exchange.run(self.server.handle(
                decoded, notify=exchange.notify if sse_ok else None,
                principal=scope.get(PRINCIPAL_SCOPE_KEY)), self._watchlist)
            running = self._running
            running[exchange] = decoded.method
            try:
                # While tracing, the span reads the request's trace headers from its scope.
                response = await (work if active() is None else in_scope(scope, work))
            finally:
                del running[exchange]
            if response is None:
                if not exchange.stopping:
                    await exchange.abandon()
                    return
                response = error_response(decoded.id, self._stopped(decoded.method))
            error_body = response.get("error")
            status, wait = Status.OK, None
            if error_body is not None:
                status, wait = error_status(error_body), retry_after(error_body)
            if exchange.streaming or not json_ok:
                if not exchange.streaming:  # the client accepts only a stream
                    await exchange.start_stream()
                await exchange.finish(response, status)
                return
            body = encode(response)
            out = [_JSON_TYPE, (b"content-length", b"%d" % len(body))]
            if wait is not None:
                out.append(wait)
            await send({"type": "http.response.start", "status": status, "headers": out})
            await send({"type": "http.response.body", "body": body})
        elif type(decoded) is Notification:
            await plain_response(send, Status.ACCEPTED)
        else:
            await refuse(send, response_refusal())

    def close(self) -> None:
        """Listen streams get their final result."""
        self.server.broker.close()

    def running(self) -> int:
        return len(self._running)

    def stop_running(self, error: Callable[[str], RPCError]) -> None:
        self._stopped = error
        for exchange in list(self._running):
            exchange.stop()

    def stores(self) -> tuple[tuple[str, Any], ...]:
        return ()

    def _tool_params(self, request: Request) -> dict[str, tuple[str, ...]] | None:
        """The `x-mcp-header` table of the tool a `tools/call` names, as the tool was
        registered with it (`Tool.header_params`)."""
        if request.method != Method.TOOLS_CALL or request.params is None:
            return None
        name = request.params.get("name")
        if type(name) is not str:
            return None
        tool = self.server.tools.get(name)
        return None if tool is None else tool.header_params  # unknown: the method reports it
