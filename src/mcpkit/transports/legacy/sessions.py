"""Legacy (2025-11-25) Streamable HTTP, the I/O: sessions, their POSTs, DELETE, and requests to
the client carried on the SSE stream of the POST being served; a session's GET (its stream of
changes, or a stream resumed) is `mcpkit.transports.legacy.streams`.

What a session must remember is a `LegacyState` (small, serialisable), kept behind the
`SessionStore` interface so a shared store can hold it for several instances. What only lives
while a connection is open stays here, per process: futures waiting for the client's answers,
the requests in flight (for `notifications/cancelled`), the one GET stream, and the request
streams a GET with `Last-Event-ID` may pick up. Their events, kept for that, sit behind the
`EventStore` interface (see `resume` and `mcpkit.store.legacy.events`).

The rules (which POSTs and GETs are refused and how, which sessions get priming events, which
requests are saved after) are `mcpkit.legacy.http_session`; what a notification changes is
`mcpkit.legacy.lifecycle`; stream ids, `Last-Event-ID` and polling `mcpkit.legacy.resumption`;
who may open a session, how fast, `mcpkit.legacy.session_quota`; which changes reach a GET
stream is the session's `forward`; our requests awaiting answers are an `Outstanding` table,
and answers posted to another replica come back through `relay`.
"""

from __future__ import annotations

import asyncio
import functools
import itertools
import logging
import secrets
import time
from collections.abc import Awaitable, Callable
from typing import Any, Final

from mcpkit.errors import RPCError, TransportError
from mcpkit.legacy import LegacySession
from mcpkit.legacy import session_quota as quota
from mcpkit.legacy.http_session import (
    STATEFUL,
    gets_priming,
    id_in_use_refusal,
    session_not_found,
    sessionless_answer,
    version_refusal,
)
from mcpkit.legacy.lifecycle import on_notification
from mcpkit.legacy.resumption import (
    polls,
    request_stream_id,
)
from mcpkit.legacy.session import LegacyState
from mcpkit.protocol.codec import (
    Message,
    Notification,
    Request,
    RequestId,
    Response,
    result_message,
)
from mcpkit.protocol.http import PRINCIPAL_SCOPE_KEY, RequestHeaders, Status, accepts
from mcpkit.protocol.outstanding import peer_id, unnamed_id
from mcpkit.protocol.rejections import error_response
from mcpkit.server.sealing import principal_key
from mcpkit.store.legacy.events import EventStore, MemoryEventStore
from mcpkit.store.legacy.sessions import MemorySessionStore, SessionStore
from mcpkit.transports.http_server.drain import stopping_error
from mcpkit.transports.http_server.endpoint import refuse
from mcpkit.transports.http_server.exchange import Exchange, plain_response
from mcpkit.transports.legacy.live import LiveSession
from mcpkit.transports.legacy.relay import SessionRelay
from mcpkit.transports.legacy.resume import Channel, ResumableExchange
from mcpkit.transports.legacy.streams import SessionStreams
from mcpkit.types.constants import Header

__all__ = [
    "LegacyEndpoint",
    "MemorySessionStore",
    "SessionStore",
]

log = logging.getLogger("mcpkit.transport")

Receive = Callable[[], Awaitable[dict[str, Any]]]
Send = Callable[[dict[str, Any]], Awaitable[None]]

_SESSION_HEADER: Final = Header.SESSION_ID.encode()


def _log_unnamed(value: Any) -> None:
    reason = unnamed_id(value)
    if reason is not None:
        log.warning("%s", reason)


class LegacyEndpoint:
    """The 2025-11-25 half of the endpoint: `initialize`, session traffic, GET and DELETE."""

    def __init__(self, server: Any, store: SessionStore[LegacyState], options: Any) -> None:
        self.server = server
        self.store = store
        self.options = options
        self.events: EventStore = (MemoryEventStore() if options.event_store is None
                                   else options.event_store)
        self._live: dict[str, LiveSession] = {}
        self._ids = itertools.count(1)
        self._tasks: set[asyncio.Task[bool]] = set()
        if options.session_store is None and isinstance(store, MemorySessionStore):
            # The store made for these options (none was given) takes their bounds.
            store.max_sessions, store.idle_s = options.sessions.max_sessions, options.session_idle_s
        self._rate = quota.CreationRate(options.sessions)
        """Each client's sessions opened lately (`mcpkit.legacy.session_quota`)."""
        self._relay = SessionRelay(server, self._answer)
        self._stopped: Callable[[str], RPCError] = stopping_error
        self.streams = SessionStreams(self)

    def live_for(self, session_id: str) -> LiveSession:
        live = self._live.get(session_id)
        if live is None:
            live = self._live[session_id] = LiveSession(self._ids, self._relay.prefix)
        return live

    def release(self, session_id: str) -> None:
        live = self._live.get(session_id)
        if live is not None and live.idle():
            del self._live[session_id]

    def running(self) -> int:
        """The requests of every session being served here now."""
        return sum(len(live.inflight) for live in self._live.values())

    def stop_running(self, error: Callable[[str], RPCError]) -> None:
        """Stop each request still running; each is answered `error(method)` on its stream."""
        self._stopped = error
        for live in list(self._live.values()):
            for exchange in list(live.inflight.values()):
                exchange.stop()

    def close(self) -> None:
        """The server is stopping. Session GET streams close with the broker (with a `retry`,
        to be resumed); a request stream stays open, on its POST or the GET that resumed it,
        until its request ends: running requests finish, and their answers must reach someone."""
        for live in self._live.values():
            for future in live.pending.waiters():
                if not future.done():
                    future.set_exception(TransportError("the server is shutting down"))

    async def session(self, headers: RequestHeaders, send: Send, request_id: RequestId | None,
                      principal: Any = None) -> tuple[str, LegacyState] | None:
        """The session a request names, or None after answering 404/400 for it. A session
        opened by a principal is that principal's: named with another's token (or none), it
        is answered as no session at all, which says nothing of whose it is."""
        assert headers.session_id is not None
        session_id = headers.session_id.decode("latin-1").strip()
        state = await self.store.load(session_id)
        if state is not None and state.principal != principal_key(principal):
            state = None
        refusal = (session_not_found(request_id, session_id) if state is None
                   else version_refusal(request_id, headers.version, state.protocol_version))
        if refusal is not None:
            await refuse(send, refusal)
            return None
        assert state is not None
        return session_id, state

    # -- POST -----------------------------------------------------------------------------------

    async def open(self, message: Message, send: Send, scope: dict[str, Any]) -> None:
        """A legacy POST naming no session: an `initialize` opens one (if its client is within
        its `SessionLimits`), anything else is answered by `sessionless_answer`."""
        answer = sessionless_answer(message)
        if answer is None:
            assert type(message) is Request
            await self._initialize(message, send, scope)
        else:
            await refuse(send, answer)

    async def post(self, headers: RequestHeaders, message: Message, receive: Receive,
                   send: Send, principal: Any = None) -> None:
        """A POST naming a session (`Mcp-Session-Id`), for `principal` (None: no token)."""
        request_id = message.id if isinstance(message, Request | Response) else None
        found = await self.session(headers, send, request_id, principal)
        if found is None:
            return
        session_id, state = found
        if type(message) is Request:
            await self._request(session_id, state, headers, message, receive, send, principal)
        elif type(message) is Notification:
            await self._notification(session_id, state, message)
            await plain_response(send, Status.ACCEPTED)
        else:
            assert type(message) is Response
            if self._answer(session_id, message):
                await plain_response(send, Status.ACCEPTED)
            else:  # another replica's handler may be the one waiting
                await self._relay.forward(session_id, message, send)

    async def _initialize(self, request: Request, send: Send, scope: dict[str, Any]) -> None:
        limits = self.options.sessions
        owner = quota.owner_of(scope)
        free = quota.exempt(scope, owner, limits)
        wait = None if free else self._rate.take(owner.key, time.monotonic())
        if wait is not None:
            await refuse(send, quota.rate_refusal(request.id, wait, limits))
            return
        try:
            session, result = LegacySession.open(self.server, request.params)
        except RPCError as exc:
            await plain_response(send, Status.OK, error_response(request.id, exc))
            return
        session_id = secrets.token_urlsafe(24)
        session.state.principal = principal_key(scope.get(PRINCIPAL_SCOPE_KEY))
        # False: full, and nothing may make room; None: a store that predates owners.
        if await self.store.create(session_id, session.state, owner,
                                   None if free else limits.per_client) is False:
            await refuse(send, quota.store_full_refusal(request.id, limits))
            return
        await plain_response(send, Status.OK, result_message(request.id, result),
                             [(_SESSION_HEADER, session_id.encode())])

    async def _request(self, session_id: str, state: LegacyState, headers: RequestHeaders,
                       request: Request, receive: Receive, send: Send, principal: Any) -> None:
        live = self.live_for(session_id)
        if request.id in live.inflight:
            await refuse(send, id_in_use_refusal(request.id))
            return
        _, sse_ok = accepts(headers.accept)
        options = self.options
        primes = gets_priming(state.protocol_version)
        exchange = ResumableExchange(
            send, receive, options.keepalive_s,
            lambda owner: self._open_channel(session_id, owner, primes),
            primes=primes, retry_ms=options.sse_retry_ms)
        live.inflight[request.id] = exchange

        async def ask_client(method: str, params: dict[str, Any] | None) -> dict[str, Any]:
            # A TransportError raised here becomes the request's error, naming both methods, in
            # the legacy session (`LegacySession._fulfil`).
            if not sse_ok:
                raise TransportError(
                    f"cannot send {method} to the client: its Accept header does not "
                    "include text/event-stream")
            return await self._ask(session_id, exchange, method, params)

        session = LegacySession(self.server, state)
        token = exchange.bind() if sse_ok else None
        timer = None
        if sse_ok and polls(primes, options.sse_retry_ms):
            timer = asyncio.get_running_loop().call_later(
                options.sse_poll_after_s, self._poll_later, exchange)
        try:
            response = await exchange.run(session.handle(
                request, exchange.notify if sse_ok else None, principal, request_peer=ask_client,
            ))
        finally:
            if timer is not None:
                timer.cancel()
            if token is not None:
                exchange.unbind(token)
            del live.inflight[request.id]
            self.release(session_id)
        if request.method in STATEFUL:
            await self.store.save(session_id, state)
        if response is None:
            if not exchange.stopping:
                await exchange.abandon()
                return
            response = error_response(request.id, self._stopped(request.method))
        await exchange.finish(response, Status.OK)

    def _open_channel(self, session_id: str, owner: ResumableExchange, primes: bool) -> Channel:
        """The stream a legacy request's response became, registered so a GET can resume it."""
        channel = Channel(self.events, session_id, request_stream_id(secrets.token_hex(8)),
                          owner, primes,
                          on_end=functools.partial(self._channel_ended, session_id))
        self.live_for(session_id).streams[channel.stream_id] = channel
        return channel

    def _channel_ended(self, session_id: str, channel: Channel) -> None:
        live = self._live.get(session_id)
        if live is not None:
            live.streams.pop(channel.stream_id, None)
            self.release(session_id)

    def _poll_later(self, exchange: ResumableExchange) -> None:
        """Polling mode: a request still running gets its connection closed (LEG-11)."""
        task = asyncio.get_running_loop().create_task(exchange.poll())
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    async def _ask(self, session_id: str, exchange: Exchange, method: str,
                   params: dict[str, Any] | None) -> dict[str, Any]:
        """Send a request to the client on this POST's stream and wait for its answer."""
        live = self.live_for(session_id)
        future: asyncio.Future[dict[str, Any]] = asyncio.get_running_loop().create_future()
        request_id, message = live.pending.send_request(method, params, future)
        try:
            await self._relay.ready()  # the answer may be posted to another replica
            await exchange.notify(message)
            async with asyncio.timeout(self.options.peer_timeout_s):
                return await future
        except TimeoutError:
            raise TransportError(
                f"the client did not answer {method} within {self.options.peer_timeout_s} s"
            ) from None
        except TransportError as exc:  # failed by close() or delete(), which know no method
            raise TransportError(f"no answer to {method} from the client: {exc}") from None
        finally:
            live.pending.pop(request_id)
            self.release(session_id)

    def _answer(self, session_id: str, response: Response) -> bool:  # False: none here waits
        live = self._live.get(session_id)
        _log_unnamed(response.id)
        request_id = peer_id(response.id)
        future = live.pending.get(request_id) if live and request_id is not None else None
        if future is None or future.done():
            if not self._relay.shared:
                log.warning("session %s answered an unknown request id %r", session_id,
                            response.id)
            return False
        if response.error is not None:
            future.set_exception(RPCError.from_wire(response.error))
        else:
            future.set_result(response.result or {})
        return True

    async def _notification(self, session_id: str, state: LegacyState, note: Notification) -> None:
        effect = on_notification(state, note)
        if effect.unnamed is not None:
            log.warning("%s", effect.unnamed)
        if effect.save:
            await self.store.save(session_id, state)
        if effect.cancel is not None:
            live = self._live.get(session_id)
            exchange = live.inflight.get(effect.cancel) if live else None
            if exchange is not None:
                exchange.cancel()

    # -- GET: the session's stream of change notifications, or a resumed stream ------------

    async def get(self, headers: RequestHeaders, receive: Receive, send: Send,
                  raw_headers: list[tuple[bytes, bytes]] | None = None,
                  principal: Any = None) -> None:
        """A GET naming a session: its stream of changes, or a stream resumed
        (`mcpkit.transports.legacy.streams`)."""
        await self.streams.get(headers, receive, send, raw_headers, principal)

    # -- DELETE ---------------------------------------------------------------------------------

    async def delete(self, headers: RequestHeaders, send: Send, principal: Any = None) -> None:
        found = await self.session(headers, send, None, principal)
        if found is None:
            return
        session_id, _ = found
        live = self._live.get(session_id)
        if live is not None:
            # Nothing of the session may outlive it: its requests stop (their streams end
            # without a response, and keep no more events), its GET stream ends.
            for channel in live.streams.values():
                channel.forgotten = True
            for exchange in live.inflight.values():
                exchange.cancel()
            if live.stream is not None:
                live.stream.cancel()
            for future in live.pending.waiters():
                if not future.done():
                    future.set_exception(TransportError(f"session {session_id!r} was ended"))
        await self.store.delete(session_id)
        await self.events.forget(session_id)
        await plain_response(send, Status.OK)
