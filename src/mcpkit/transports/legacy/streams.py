"""Legacy (2025-11-25) Streamable HTTP, GET on a session: its stream of change notifications
(the one GET stream a session may have open), or a stream resumed from `Last-Event-ID`.

A session's stream carries what the session's `forward` lets through of the server's changes,
with an event id each (kept in the `EventStore`), so a dropped connection is resumed where it
ended; a request's stream resumed by a GET is carried on from its last event (LEG-12), here or,
when it already ended, replayed from the store. The session itself and what lives per process
for it are the endpoint's (`mcpkit.transports.legacy.sessions`).
"""

from __future__ import annotations

import secrets
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Any, Final

from mcpkit.legacy import LegacySession
from mcpkit.legacy.http_session import get_refusal, gets_priming, stream_open
from mcpkit.legacy.resumption import (
    is_session_stream,
    resume_from,
    retry_or_default,
    session_stream_id,
)
from mcpkit.protocol.codec import encode
from mcpkit.protocol.http import RequestHeaders, accepts
from mcpkit.store.legacy.events import EventReplayError
from mcpkit.transports.http_server.endpoint import refuse
from mcpkit.transports.http_server.exchange import Exchange
from mcpkit.transports.legacy.live import LiveSession
from mcpkit.transports.legacy.resume import Channel, refuse_resume, replay_only
from mcpkit.types.constants import Header

if TYPE_CHECKING:
    from mcpkit.transports.legacy.sessions import LegacyEndpoint

__all__ = [
    "SessionStreams",
]

Receive = Callable[[], Awaitable[dict[str, Any]]]
Send = Callable[[dict[str, Any]], Awaitable[None]]

_LAST_EVENT_ID: Final = Header.LAST_EVENT_ID.encode()
_END: Final = {"type": "http.response.body", "body": b"", "more_body": False}


class SessionStreams:
    """The GETs of one `LegacyEndpoint`'s sessions."""

    def __init__(self, endpoint: LegacyEndpoint) -> None:
        self.endpoint = endpoint

    async def get(self, headers: RequestHeaders, receive: Receive, send: Send,
                  raw_headers: list[tuple[bytes, bytes]] | None = None,
                  principal: Any = None) -> None:
        found = await self.endpoint.session(headers, send, None, principal)
        if found is None:
            return
        session_id, state = found
        last_ids = [value for name, value in raw_headers or () if name == _LAST_EVENT_ID]
        refusal = get_refusal(accepts(headers.accept)[1], last_ids)
        if refusal is not None:
            await refuse(send, refusal)
            return
        primes = gets_priming(state.protocol_version)
        live = self.endpoint.live_for(session_id)
        last_event_id = resume_from(last_ids)
        if last_event_id is not None:
            await self._resume(session_id, live, primes, last_event_id, receive, send)
            return
        if live.stream is not None:
            await refuse(send, stream_open(session_id))
            return
        channel = Channel(self.endpoint.events, session_id,
                          session_stream_id(secrets.token_hex(8)), None, primes)
        await self._stream(session_id, live, channel, None, receive, send)

    async def _stream(self, session_id: str, live: LiveSession, channel: Channel,
                      last_event_id: str | None, receive: Receive, send: Send) -> None:
        exchange = Exchange(send, receive, self.endpoint.options.keepalive_s)
        live.stream = exchange
        try:
            outcome = await exchange.run(self._changes(session_id, exchange, channel,
                                                       last_event_id))
        except EventReplayError as exc:  # evicted between the first look and the replay
            await refuse_resume(send, exc)
            return
        finally:
            channel.detach(exchange)
            if live.stream is exchange:
                live.stream = None
            self.endpoint.release(session_id)
        if outcome is None:
            await exchange.abandon()
        else:
            exchange.done = True
            await send(_END)

    async def _changes(self, session_id: str, exchange: Exchange, channel: Channel,
                       last_event_id: str | None) -> dict[str, Any]:
        server = self.endpoint.server
        async with server.broker.subscribe() as changes:
            # Subscribed before the headers go out: a change announced once the client sees
            # the stream open is never missed.
            if last_event_id is None:
                channel.sink = exchange
                await exchange.start_stream()
                if channel.primes:
                    await channel.emit(b"")
            elif await channel.follow(exchange, last_event_id) is None:
                return {}
            async for change in changes:
                # Subscriptions change while it is open; and a session that ended or expired
                # meanwhile ends its stream rather than carry news to nobody's session.
                state = await self.endpoint.store.load(session_id)
                if state is None:
                    return {}
                message = LegacySession(server, state).forward(change, server.capabilities())
                if message is not None:
                    await channel.emit(encode(message))
        # The server is stopping: the connection closes, the stream does not end, so the client
        # is told when to resume it (an instance sharing the stores, or this one restarted).
        await channel.poll(exchange, retry_or_default(self.endpoint.options.sse_retry_ms))
        return {}

    async def _resume(self, session_id: str, live: LiveSession, primes: bool, last_event_id: str,
                      receive: Receive, send: Send) -> None:
        """GET with `Last-Event-ID` (LEG-12): replay what the named stream carried after that
        event, then carry on with it on this connection."""
        try:
            replay = await self.endpoint.events.replay_after(session_id, last_event_id)
        except EventReplayError as exc:
            self.endpoint.release(session_id)
            await refuse_resume(send, exc)
            return
        if is_session_stream(replay.stream_id):
            if live.stream is not None:
                live.stream.cancel()  # the connection it replaces is stale
            channel = Channel(self.endpoint.events, session_id, replay.stream_id, None, primes)
            await self._stream(session_id, live, channel, last_event_id, receive, send)
            return
        running = live.streams.get(replay.stream_id)
        options = self.endpoint.options
        try:
            if running is None:
                await replay_only(send, replay, primes, options.sse_retry_ms)
            else:
                await running.carry(send, receive, last_event_id, options.keepalive_s,
                                    options.sse_retry_ms, options.sse_poll_after_s)
        finally:
            self.endpoint.release(session_id)
