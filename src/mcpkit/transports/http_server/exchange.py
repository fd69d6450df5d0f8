"""`Exchange`: one HTTP response to one JSON-RPC message, decided as late as possible.

A handler that finishes without notifying gets a plain `application/json` response. The first
notification (progress, a log message, a listen acknowledgement, or a legacy request to the
client) switches the response to a `text/event-stream` before any byte of it is sent; from
then on every message is one `data:` line, and quiet streams get `:` comment keep-alives.

While a handler runs, the exchange watches for the client going away and cancels the handler
when it does (closing the stream IS the cancellation on Streamable HTTP). The watch starts at
once when the response becomes a stream; for a plain request it starts only if the request
outlives a sweep or two of the app's `Watchlist` (20-40 ms), so a quick request costs two set
operations, not a task and not a timer. Only ASGI and asyncio here; no knowledge of eras or
sessions.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Awaitable, Callable
from typing import Any, Final

from mcpkit.protocol.codec import encode
from mcpkit.protocol.framing import sse_event
from mcpkit.protocol.http import Status

__all__ = [
    "WATCH_GRACE_S",
    "Exchange",
    "Watchlist",
    "json_headers",
    "plain_response",
    "send_last",
]

Send = Callable[[dict[str, Any]], Awaitable[None]]
Receive = Callable[[], Awaitable[dict[str, Any]]]

WATCH_GRACE_S: Final = 0.02
"""The watchlist's sweep period: a handler runs one to two of these before the exchange starts
watching for a disconnect."""

_JSON_TYPE: Final = (b"content-type", b"application/json")
_SSE_HEADERS: Final = (
    (b"content-type", b"text/event-stream"),
    (b"cache-control", b"no-cache, no-transform"),
    (b"x-accel-buffering", b"no"),
)
_KEEPALIVE: Final = {"type": "http.response.body", "body": b":\n\n", "more_body": True}
_END: Final = {"type": "http.response.body", "body": b"", "more_body": False}
_DRAINED_BYTES: Final = 1024 * 1024
"""A last body part this large is followed by an empty one: the ASGI server waits for the
connection to take a part before it sends the next (flow control), so the exchange, and what
its handler holds until it ends (a large skill file's share of its read budget), ends once
the body has left, not while it still waits in a buffer."""


async def send_last(send: Send, body: bytes) -> None:
    """The last part of a response's body."""
    if len(body) < _DRAINED_BYTES:
        await send({"type": "http.response.body", "body": body, "more_body": False})
        return
    await send({"type": "http.response.body", "body": body, "more_body": True})
    await send(_END)


def json_headers(body: bytes, extra: list[tuple[bytes, bytes]] | None = None
                 ) -> list[tuple[bytes, bytes]]:
    headers = [_JSON_TYPE, (b"content-length", b"%d" % len(body))]
    if extra:
        headers += extra
    return headers


async def plain_response(
    send: Send, status: int, message: dict[str, Any] | None = None,
    extra: list[tuple[bytes, bytes]] | None = None,
) -> None:
    """A complete response: a JSON body (one message) or none at all."""
    if message is None:
        headers = [(b"content-length", b"0")]
        if extra:
            headers += extra
        await send({"type": "http.response.start", "status": status, "headers": headers})
        await send({"type": "http.response.body", "body": b""})
        return
    body = encode(message)
    await send({"type": "http.response.start", "status": status,
                "headers": json_headers(body, extra)})
    await send({"type": "http.response.body", "body": body})


class Watchlist:
    """Starts disconnect watchers for the exchanges still running a full sweep period after
    they began. One per app; its timer runs only while requests are in flight."""

    __slots__ = ("_entries", "_generation", "_handle", "_loop")

    def __init__(self) -> None:
        self._entries: dict[Exchange, int] = {}
        """Exchange -> the sweep generation it began in."""
        self._generation = 0
        self._handle: asyncio.TimerHandle | None = None
        self._loop: asyncio.AbstractEventLoop | None = None

    def add(self, exchange: Exchange, loop: asyncio.AbstractEventLoop) -> None:
        self._entries[exchange] = self._generation
        if self._handle is None or self._loop is not loop:  # first use, or a new event loop
            self._loop = loop
            self._handle = loop.call_later(WATCH_GRACE_S, self._sweep)

    def discard(self, exchange: Exchange) -> None:
        self._entries.pop(exchange, None)

    def _sweep(self) -> None:
        current = self._generation
        self._generation = current + 1
        entries = self._entries
        for exchange in [e for e, began in entries.items() if began < current]:
            del entries[exchange]
            exchange.start_watch()
        if entries and self._loop is not None:
            self._handle = self._loop.call_later(WATCH_GRACE_S, self._sweep)
        else:
            self._handle = None


class Exchange:
    """The response to one POST (or a legacy GET stream), JSON or SSE."""

    __slots__ = (
        "_interrupted",
        "_keepalive",
        "_quiet",
        "_watcher",
        "cancelled",
        "disconnected",
        "done",
        "extra",
        "in_handler",
        "keepalive_s",
        "receive",
        "send",
        "stopping",
        "streaming",
        "task",
        "watch",
    )

    def __init__(self, send: Send, receive: Receive, keepalive_s: float,
                 extra: list[tuple[bytes, bytes]] | None = None, *, watch: bool = True) -> None:
        self.send = send
        self.receive = receive
        self.keepalive_s = keepalive_s
        self.extra = extra
        self.watch = watch
        """Whether the client going away cancels the handler (not for legacy requests)."""
        self.streaming = False
        self.done = False
        self.cancelled = False
        self.disconnected = False
        self.in_handler = False
        self.stopping = False
        """Stopped by a server that is shutting down: it answers with a retryable error."""
        self.task: asyncio.Task[Any] | None = None
        self._watcher: asyncio.Task[None] | None = None
        self._keepalive: asyncio.TimerHandle | None = None
        self._quiet = True
        self._interrupted = False
        """`cancel` has cancelled the handler's task (once: see `cancel`)."""

    # -- running the handler -------------------------------------------------------------------

    async def run(self, work: Awaitable[dict[str, Any]], watchlist: Watchlist | None = None
                  ) -> dict[str, Any] | None:
        """Await the handler's response; None when the exchange was cancelled (the client left,
        or cancelled it) and nothing more may be sent for it."""
        task = asyncio.current_task()
        assert task is not None
        self.task = task
        self.in_handler = True
        # `Watchlist.add` and `discard`, in line: every request takes them.
        entries = None
        if watchlist is not None and self.watch:
            entries = watchlist._entries
            entries[self] = watchlist._generation
            if watchlist._handle is None or watchlist._loop is not task.get_loop():
                watchlist.add(self, task.get_loop())  # the sweep's timer is set here
        try:
            response = await work
        except asyncio.CancelledError:
            if self.cancelled and task.uncancel() == 0:
                return None
            raise
        finally:
            self.in_handler = False
            if entries is not None:
                entries.pop(self, None)
            if self._watcher is not None or self._keepalive is not None:
                self._stop_watch()
        if self.cancelled:
            if task.cancelling():
                task.uncancel()
            return None
        return response

    def cancel(self) -> None:
        """Stop the handler: the client went away, cancelled the request, or ended its session.
        The task is cancelled once, however many of these come together (a client that leaves
        and deletes its session at once): `run` takes back that one cancellation, and would
        take a second for one from outside, letting it out of the app."""
        self.cancelled = True
        if self.in_handler and self.task is not None and not self._interrupted:
            self._interrupted = True
            self.task.cancel()

    def stop(self) -> None:
        """Stop the handler because the server is shutting down (`stopping` says so)."""
        self.stopping = True
        self.cancel()

    def start_watch(self) -> None:
        if self._watcher is None and self.in_handler and self.watch:
            self._watcher = asyncio.get_running_loop().create_task(self._watch())

    async def _watch(self) -> None:
        while True:
            message = await self.receive()
            if message["type"] == "http.disconnect":
                self.disconnected = True
                self.cancel()
                return

    def _stop_watch(self) -> None:
        if self._watcher is not None:
            self._watcher.cancel()
            self._watcher = None
        if self._keepalive is not None:
            self._keepalive.cancel()
            self._keepalive = None

    # -- writing --------------------------------------------------------------------------------

    async def notify(self, message: dict[str, Any]) -> None:
        """Send one message ahead of the response (this makes the response a stream)."""
        if self.done or self.cancelled:
            return
        data = sse_event(encode(message))
        if not self.streaming:
            await self.start_stream()
        self._quiet = False
        await self.send({"type": "http.response.body", "body": data, "more_body": True})

    def wrote(self) -> None:
        """Bytes went out on this connection just now: the next keep-alive tick sends none."""
        self._quiet = False

    async def start_stream(self) -> None:
        self.streaming = True
        headers = list(_SSE_HEADERS)
        if self.extra:
            headers += self.extra
        await self.send({"type": "http.response.start", "status": Status.OK,
                         "headers": headers})
        self.start_watch()
        if self.keepalive_s > 0:
            self._keepalive = asyncio.get_running_loop().call_later(
                self.keepalive_s, self._tick
            )

    def _tick(self) -> None:
        if self.done or self.cancelled:
            self._keepalive = None
            return
        if self._quiet:
            asyncio.get_running_loop().create_task(self._send_keepalive())
        self._quiet = True
        self._keepalive = asyncio.get_running_loop().call_later(self.keepalive_s, self._tick)

    async def _send_keepalive(self) -> None:
        if self.done or self.cancelled:
            return
        with contextlib.suppress(Exception):
            # The response may complete while this waits for the socket to drain.
            await self.send(_KEEPALIVE)

    async def finish(self, message: dict[str, Any], status: int = Status.OK) -> None:
        """The final message: the JSON body, or the stream's last event."""
        self.done = True
        if self.streaming:
            await send_last(self.send, sse_event(encode(message)))
            return
        body = encode(message)
        await self.send({"type": "http.response.start", "status": status,
                         "headers": json_headers(body, self.extra)})
        await send_last(self.send, body)

    async def abandon(self) -> None:
        """End a cancelled exchange without a response (CANC-4): close an open stream, or
        acknowledge the POST with an empty 202 when nothing was sent yet."""
        if self.done or self.disconnected:
            self.done = True
            return
        self.done = True
        if self.streaming:
            await self.send(_END)
        else:
            await plain_response(self.send, Status.ACCEPTED)
