"""Resumable SSE streams of legacy (2025-11-25) sessions: event ids, the priming event, closing
a connection early with `retry`, and carrying on a stream over the GET that resumes it.

A `Channel` is one stream as the client sees it: one sequence of event ids, carried by one
connection at a time — first the POST (or GET) that opened it, then each GET that resumed it
with `Last-Event-ID`. Every event goes to the `EventStore` before it is written, so a
connection that breaks (or that the server closes to free it) loses nothing the store still
keeps. `ResumableExchange` is the `Exchange` of a legacy request whose response may become such
a stream; the modern era never uses either (it has no resumability, HTTP-9), so the modern
`Exchange` stays as cheap as it was. What is a rule rather than a write (which events are
written, what a replay and an early close send, when polling applies) is
`mcpkit.legacy.resumption`. Imports the layers below, asyncio and the sibling transport
modules.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Awaitable, Callable
from contextvars import ContextVar
from typing import Any, Final

from mcpkit.legacy.http_session import resume_refusal
from mcpkit.legacy.resumption import (
    polls,
    replay_blocks,
    retry_block,
    retry_or_default,
    sse_block,
    worth_writing,
)
from mcpkit.protocol.codec import encode
from mcpkit.protocol.http import Status
from mcpkit.store.events import EventReplayError, EventStore, Replay
from mcpkit.transports.http_exchange import Exchange, plain_response

__all__ = [
    "Channel",
    "ResumableExchange",
    "close_sse_stream",
    "refuse_resume",
    "replay_only",
]

log = logging.getLogger("mcpkit.transport")

Send = Callable[[dict[str, Any]], Awaitable[None]]
Receive = Callable[[], Awaitable[dict[str, Any]]]

_END: Final = {"type": "http.response.body", "body": b"", "more_body": False}
_CURRENT: ContextVar[ResumableExchange | None] = ContextVar("mcpkit_legacy_exchange",
                                                            default=None)


async def close_sse_stream(retry_ms: int | None = None) -> bool:
    """Close the connection carrying the current legacy request's SSE stream, without ending
    the stream: the client waits `retry_ms` (default `HTTPOptions.sse_retry_ms`, else 1000)
    and resumes with GET + `Last-Event-ID`, where the rest of the stream and the response
    arrive. Await it from an async handler.

    Returns False, doing nothing, where this does not apply: a 2026-07-28 request (no
    resumability), a legacy session older than 2025-11-25 (no priming events), a client that
    does not accept SSE, another transport, or a response already sent.
    """
    if retry_ms is not None and (type(retry_ms) is not int or retry_ms < 0):
        raise ValueError(f"close_sse_stream: retry_ms must be None or milliseconds >= 0, not "
                         f"{retry_ms!r}")
    exchange = _CURRENT.get()
    if exchange is None:
        return False
    return await exchange.poll(retry_ms)


class Channel:
    """One resumable stream of one session, whichever connection carries it now."""

    __slots__ = (
        "ended",
        "events",
        "forgotten",
        "lock",
        "on_end",
        "owner",
        "primes",
        "release",
        "session_id",
        "sink",
        "stream_id",
    )

    def __init__(self, events: EventStore, session_id: str, stream_id: str,
                 owner: ResumableExchange | None, primes: bool,
                 on_end: Callable[[Channel], None] | None = None) -> None:
        self.events = events
        self.session_id = session_id
        self.stream_id = stream_id
        self.owner = owner
        """The exchange of the request whose response ends the stream; None for the session's
        GET stream, which has no end."""
        self.sink: Exchange | None = owner
        """The connection the stream is written to now; None between connections."""
        self.primes = primes
        """Empty events (priming, closing) may be sent: the session is 2025-11-25 or newer."""
        self.on_end = on_end
        self.lock = asyncio.Lock()
        self.ended = False
        self.forgotten = False
        """The session ended: events are no longer kept."""
        self.release: asyncio.Event | None = None
        """Set when the GET following the stream must end (the stream ended or moved)."""

    # -- writing --------------------------------------------------------------------------------

    async def emit(self, data: bytes, retry_ms: int | None = None) -> None:
        async with self.lock:
            await self.emit_locked(data, retry_ms)

    async def emit_locked(self, data: bytes, retry_ms: int | None = None, *,
                          final: bool = False) -> None:
        """Keep the event, then write it to the connection (the caller holds the lock)."""
        if self.ended:
            return
        event_id = None
        if not self.forgotten:
            event_id = await self.events.append(self.session_id, self.stream_id, data,
                                                final=final)
        if final:
            self.ended = True
        sink = self.sink
        if sink is None or not worth_writing(data, self.primes and event_id is not None):
            return  # an empty event is only worth its id
        owner = self.owner
        if final and owner is not None and sink is owner:
            if await self._write(sink, sse_block(event_id, data, retry_ms), more=False):
                self.sink = None
                owner.closed = True  # the final write ended its response
            return
        await self._write(sink, sse_block(event_id, data, retry_ms))

    async def _write(self, sink: Exchange, body: bytes, *, more: bool = True) -> bool:
        try:
            await sink.send({"type": "http.response.body", "body": body, "more_body": more})
        except Exception as exc:  # the connection is gone; the store has the event for a resume
            log.debug("legacy stream %s: a write failed (%s); waiting for a resume",
                      self.stream_id, exc)
            self.detach(sink)
            return False
        sink.wrote()  # no keep-alive needed on this connection just now
        return True

    async def end(self, data: bytes | None) -> None:
        """The stream's last event: the response, or (None) only a mark that it ended without
        one (the request was cancelled)."""
        try:
            async with self.lock:
                try:
                    await self.emit_locked(data or b"", final=True)
                finally:  # even if the store failed: nothing may wait for this stream forever
                    self.ended = True
                    self._let_go(self.sink)
                    self.sink = None
            if self.owner is not None:
                await self.owner.close_connection()
        finally:
            if self.on_end is not None:
                self.on_end(self)

    # -- moving between connections ---------------------------------------------------------------

    def detach(self, sink: Exchange) -> None:
        """`sink` is gone (its client left, or it was closed early); keep only storing."""
        if self.sink is sink:
            self.sink = None
            self._let_go(sink)

    def _let_go(self, sink: Exchange | None) -> None:
        """Tell the GET that carried the stream to end (the owner's connection is ended by
        `close_connection`, by whoever detached it)."""
        if sink is not None and sink is not self.owner and self.release is not None:
            self.release.set()
            self.release = None

    async def poll(self, sink: Exchange, retry_ms: int) -> bool:
        """Close `sink`'s part of the stream early: one empty event with an id and `retry`,
        after which the client reconnects. The caller ends that connection's response."""
        async with self.lock:
            if self.ended or self.sink is not sink or not self.primes:
                return False
            await self.emit_locked(b"", retry_ms)
            if self.sink is sink:
                self.sink = None
            return True

    async def carry(self, send: Send, receive: Receive, last_event_id: str, keepalive_s: float,
                    retry_ms: int | None, poll_after_s: float) -> None:
        """Serve a GET that resumes this stream: the replay, then the stream live until it
        ends, another connection takes it over, or (polling mode) `poll_after_s` passes."""
        exchange = Exchange(send, receive, keepalive_s)
        try:
            outcome = await exchange.run(self._carry(exchange, last_event_id, retry_ms,
                                                     poll_after_s))
        except EventReplayError as exc:  # evicted since the first look: nothing was sent
            await refuse_resume(send, exc)
            return
        finally:
            self.detach(exchange)
        if outcome is None:
            await exchange.abandon()  # the client left
        else:
            exchange.done = True
            await send(_END)

    async def _carry(self, exchange: Exchange, last_event_id: str, retry_ms: int | None,
                     poll_after_s: float) -> dict[str, Any]:
        release = await self.follow(exchange, last_event_id)
        if release is None:
            return {}
        if not polls(self.primes, retry_ms):
            await release.wait()
            return {}
        try:  # polling mode: this connection too is given back after a while
            async with asyncio.timeout(poll_after_s):
                await release.wait()
        except TimeoutError:
            await self.poll(exchange, retry_or_default(retry_ms))  # configured, as polls says
        return {}

    async def follow(self, exchange: Exchange, last_event_id: str) -> asyncio.Event | None:
        """Make `exchange` (a GET with `Last-Event-ID`) carry the stream: replay what came
        after that event, then write what comes next to it. Returns an event set when the GET
        must end (the stream ended, or another connection took it over), or None when the
        replay already finished the stream. Raises `EventReplayError` before any byte is sent.
        """
        async with self.lock:
            replay = await self.events.replay_after(self.session_id, last_event_id)
            await exchange.start_stream()
            for block in replay_blocks(replay, self.primes):
                if not await self._write(exchange, block):
                    return None
            if replay.ended or self.ended:
                return None
            previous = self.sink
            self.sink = exchange
            if previous is not None and previous is not exchange:
                if previous is self.owner and self.owner is not None:
                    # Its client resumed on another connection, so this one is stale: end it.
                    await self.owner.close_connection()
                else:
                    self._let_go(previous)
            release = self.release = asyncio.Event()
            return release


async def replay_only(send: Send, replay: Replay, primes: bool, retry_ms: int | None) -> None:
    """Answer a GET for a stream no connection of this process is producing: what the store
    kept, then (if the stream has not ended) a `retry` so the client asks again; another
    instance sharing the store may still be writing it."""
    exchange = Exchange(send, _no_receive, 0.0, watch=False)
    await exchange.start_stream()
    for block in replay_blocks(replay, primes):
        await send({"type": "http.response.body", "body": block, "more_body": True})
    if not replay.ended and primes:
        await send({"type": "http.response.body", "body": retry_block(retry_ms),
                    "more_body": True})
    exchange.done = True
    await send(_END)


async def refuse_resume(send: Send, exc: EventReplayError) -> None:
    """Answer a `Last-Event-ID` that cannot be resumed from (`resume_refusal` says how)."""
    refusal = resume_refusal(exc)
    await plain_response(send, refusal.status, refusal.message)


async def _no_receive() -> dict[str, Any]:
    raise AssertionError("a replayed stream does not read its request")


class ResumableExchange(Exchange):
    """The response to a legacy request: JSON as before, or an SSE stream whose events have
    ids, starting with a priming event, that the client can resume."""

    __slots__ = ("channel", "closed", "opener", "primes", "retry_ms")

    def __init__(self, send: Send, receive: Receive, keepalive_s: float,
                 opener: Callable[[ResumableExchange], Channel], *, primes: bool,
                 retry_ms: int | None) -> None:
        super().__init__(send, receive, keepalive_s, watch=False)  # disconnects never cancel
        self.opener = opener
        self.primes = primes
        self.retry_ms = retry_ms
        self.channel: Channel | None = None
        self.closed = False
        """This connection's response is complete (the stream may go on elsewhere)."""

    def bind(self) -> Any:
        """Make this the exchange `close_sse_stream()` acts on in the current context; returns
        the token to `unbind` with."""
        return _CURRENT.set(self)

    @staticmethod
    def unbind(token: Any) -> None:
        _CURRENT.reset(token)

    async def start_stream(self, prime: bool = True) -> None:
        channel = self.channel = self.opener(self)
        async with channel.lock:  # nothing overtakes the headers and the priming event
            await super().start_stream()
            if prime and self.primes:
                await channel.emit_locked(b"")

    async def notify(self, message: dict[str, Any]) -> None:
        if self.done or self.cancelled:
            return
        if not self.streaming:
            await self.start_stream()
        assert self.channel is not None
        await self.channel.emit(encode(message))

    async def finish(self, message: dict[str, Any], status: int = Status.OK) -> None:
        if not self.streaming:
            await super().finish(message, status)
            return
        self.done = True
        assert self.channel is not None
        await self.channel.end(encode(message))

    async def abandon(self) -> None:
        channel = self.channel
        if channel is None:
            await super().abandon()
            return
        self.done = True
        await channel.end(None)

    async def poll(self, retry_ms: int | None = None) -> bool:
        """Close this connection early, leaving the stream open for a resume (LEG-11)."""
        if self.done or self.cancelled or self.closed or not self.primes:
            return False
        if not self.streaming:
            await self.start_stream(prime=False)  # the closing event is the priming event
        assert self.channel is not None
        if retry_ms is None:
            retry_ms = retry_or_default(self.retry_ms)
        if not await self.channel.poll(self, retry_ms):
            return False
        await self.close_connection()
        return True

    async def close_connection(self) -> None:
        """End this connection's response if it is still open (never the stream itself)."""
        if self._keepalive is not None:
            self._keepalive.cancel()
            self._keepalive = None
        if self.closed or not self.streaming:
            return
        self.closed = True
        with contextlib.suppress(Exception):  # already gone is fine
            await self.send(_END)
