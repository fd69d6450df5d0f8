"""`LegacyRoute` and `SessionlessRoute`: the 2025-11-25 sessions (`LegacyEndpoint`) behind the
`Endpoint` seam, one for the traffic of a session and one for a POST naming none (`initialize`),
and the edge of their exchanges.

Every step a peer's message reaches checks what it reads, and handlers' exceptions are
answered where they are served; what still escapes a legacy POST, GET or DELETE (a session or
event store that fails, a bug) is logged once with its traceback and answered here in a form
the client can read, never as the ASGI server's bare 500 (and its traceback in a log line per
retry). How it is answered is a rule of the legacy era (`mcpkit.legacy.http_session.
escaped_answer`); the session stays: nothing of it is dropped for one failed exchange.
"""

from __future__ import annotations

import contextlib
import logging
from collections.abc import Awaitable, Callable
from typing import Any, Final

from mcpkit.errors import RPCError, StoreUnavailableError
from mcpkit.legacy.http_session import escaped_answer, exchange_named
from mcpkit.protocol.codec import Message, Request, encode
from mcpkit.protocol.framing import sse_event
from mcpkit.protocol.headers import RequestHeaders
from mcpkit.protocol.http import LEGACY, PRINCIPAL_SCOPE_KEY, SESSION
from mcpkit.store.legacy.sessions import MemorySessionStore
from mcpkit.tracing.spans import arrived, left
from mcpkit.transports.http_server.endpoint import Endpoint, Receive, Scope, Send, refuse
from mcpkit.transports.legacy.sessions import LegacyEndpoint

__all__ = [
    "LegacyRoute",
    "SessionlessRoute",
    "legacy_routes",
]

log = logging.getLogger("mcpkit.transport")

_END: Final = {"type": "http.response.body", "body": b"", "more_body": False}


class _Sent:
    """A `send` that remembers how far the response got, so that a failure can still be
    answered in a form the client can read (a JSON body, or the stream's last event)."""

    __slots__ = ("ended", "send", "started", "streaming")

    def __init__(self, send: Send) -> None:
        self.send = send
        self.started = False
        self.streaming = False
        self.ended = False

    async def __call__(self, message: dict[str, Any]) -> None:
        if message["type"] == "http.response.start":
            self.started = True
            self.streaming = any(name == b"content-type" and value == b"text/event-stream"
                                 for name, value in message.get("headers", ()))
        elif message["type"] == "http.response.body" and not message.get("more_body"):
            self.ended = True
        await self.send(message)


async def _guarded(work: Awaitable[None], sent: _Sent, message: Message | None, what: str
                   ) -> None:
    """Run one legacy exchange; an unexpected exception ends as `escaped_answer` says: a
    complete response when none had started, the request's error as the last event of a
    stream that had begun, else the end of what was sent."""
    try:
        await work
    except Exception as exc:
        what = exchange_named(what, message)
        unavailable = exc if isinstance(exc, StoreUnavailableError) else None
        if unavailable is None:
            log.exception("internal error while handling %s", what)
        else:  # no bug to trace: the store is down, and its error says so to the client
            log.warning("%s failed: %s", what, unavailable.message)
        if sent.ended:
            return
        answer = escaped_answer(message, what, unavailable)
        with contextlib.suppress(Exception):  # the client may be gone already
            if not sent.started:
                await refuse(sent, answer)
            elif sent.streaming and type(message) is Request and answer.message is not None:
                await sent({"type": "http.response.body", "body": sse_event(
                    encode(answer.message)), "more_body": False})
            else:
                await sent(_END)


class SessionlessRoute:
    """A 2025-11-25 POST naming no session as an `Endpoint` (an `initialize` opens one),
    guarded. `route` sends it POSTs only."""

    def __init__(self, sessions: LegacyEndpoint) -> None:
        self.sessions = sessions

    async def serve(self, scope: Scope, headers: RequestHeaders, message: Message | None,
                    receive: Receive, send: Send) -> None:
        sent = _Sent(send)
        assert message is not None
        await _guarded(self.sessions.open(message, sent, scope), sent, message, "a 2025-11-25 POST of")

    def close(self) -> None:
        """Nothing of its own: the sessions close with `LegacyRoute`."""

    def running(self) -> int:
        return 0  # an initialize is answered at once; the sessions' requests are LegacyRoute's

    def stop_running(self, error: Callable[[str], RPCError]) -> None:
        """Nothing of its own (see `running`)."""

    def stores(self) -> tuple[tuple[str, Any], ...]:
        return ()  # the sessions' stores are LegacyRoute's


class LegacyRoute:
    """The 2025-11-25 sessions as an `Endpoint`: POST, GET and DELETE naming an
    `Mcp-Session-Id`, each exchange guarded."""

    def __init__(self, sessions: LegacyEndpoint) -> None:
        self.sessions = sessions

    async def serve(self, scope: Scope, headers: RequestHeaders, message: Message | None,
                    receive: Receive, send: Send) -> None:
        sent = _Sent(send)
        sessions = self.sessions
        method = scope["method"]
        if method == "POST":
            assert message is not None
            traced = arrived(scope)  # the trace headers and session, for the request's span
            try:
                await _guarded(sessions.post(headers, message, receive, sent,
                                             scope.get(PRINCIPAL_SCOPE_KEY)),
                               sent, message, "a 2025-11-25 POST of")
            finally:
                left(traced)
        elif method == "GET":
            await _guarded(sessions.get(headers, receive, sent, scope["headers"],
                                        scope.get(PRINCIPAL_SCOPE_KEY)),
                           sent, None, "a 2025-11-25 session GET")
        else:
            assert method == "DELETE"  # `route` gives a session no other method
            await _guarded(sessions.delete(headers, sent, scope.get(PRINCIPAL_SCOPE_KEY)),
                           sent, None,
                           "a 2025-11-25 session DELETE")

    def close(self) -> None:
        self.sessions.close()

    def running(self) -> int:
        return self.sessions.running()

    def stop_running(self, error: Callable[[str], RPCError]) -> None:
        self.sessions.stop_running(error)

    def stores(self) -> tuple[tuple[str, Any], ...]:
        return (("the session store", self.sessions.store),
                ("the event store", self.sessions.events))


def legacy_routes(server: Any, options: Any) -> dict[str, Endpoint]:
    """The HTTP app's routes (`mcpkit.protocol.http.route`) that serve 2025-11-25 sessions,
    for an app whose `options` (an `HTTPOptions`) serve legacy clients: one `LegacyEndpoint`
    on the session store they name (a `MemorySessionStore` when none) behind both."""
    store = MemorySessionStore() if options.session_store is None else options.session_store
    sessions = LegacyEndpoint(server, store, options)
    return {LEGACY: SessionlessRoute(sessions), SESSION: LegacyRoute(sessions)}
