"""What the HTTP state machine watches its real server through, so that it waits on events
rather than on time:

- `Conn`, one SSE response read event by event across the machine's steps (the events parsed
  by resume_peer's `SSEReader`, written apart from mcpkit's encoder);
- `ObservedEvents`, the in-memory event store of the app, noting each event as it is kept, so
  the machine can wait until the server has stored what a step caused before it resumes;
- `Exchanges`, ASGI middleware that tags each exchange with the number the machine gave it
  (an `x-exchange` header) and says when the app has finished with it: a dropped GET stream
  is gone from the server's view only then.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from typing import Any

import httpx
from helpers.transports.resume_peer import Event, SSEReader

from mcpkit.store.legacy.events import MemoryEventStore

__all__ = ["BOUND", "Conn", "Exchanges", "ObservedEvents"]

BOUND = 10.0
"""The longest any one expected event may take."""


class Conn:
    """One open SSE response, read an event at a time."""

    def __init__(self, response: httpx.Response, exchange: int) -> None:
        self.response = response
        self.exchange = exchange
        self._chunks: AsyncIterator[bytes] = response.aiter_bytes()
        self._reader = SSEReader()
        self._ready: list[Event] = []
        self.eof = False

    async def next(self) -> Event | None:
        """The next event, or None once the server ended the response."""
        while not self._ready:
            if self.eof:
                return None
            try:
                chunk = await asyncio.wait_for(self._chunks.__anext__(), BOUND)
            except StopAsyncIteration:
                self.eof = True
                return None
            self._ready.extend(self._reader.feed(chunk))
        return self._ready.pop(0)

    async def close(self) -> None:
        await self.response.aclose()


class ObservedEvents(MemoryEventStore):
    """The app's event store, telling waiters of each event it keeps."""

    def __init__(self) -> None:
        super().__init__()
        self.kept: list[tuple[str, str, bytes, bool]] = []
        self._changed = asyncio.Condition()

    async def append(self, session_id: str, stream_id: str, data: bytes, *,
                     final: bool = False) -> str:
        event_id = await super().append(session_id, stream_id, data, final=final)
        self.kept.append((session_id, stream_id, data, final))
        async with self._changed:
            self._changed.notify_all()
        return event_id

    async def ended(self, stream_id: str) -> None:
        """Wait until the stream's last event is kept."""
        async with self._changed:
            await asyncio.wait_for(self._changed.wait_for(
                lambda: any(s == stream_id and final for _, s, _, final in self.kept)), BOUND)


class Exchanges:
    """ASGI middleware: the exchanges the app has finished with, by the machine's number."""

    HEADER = b"x-exchange"

    def __init__(self, app: Any) -> None:
        self.app = app
        self._done: dict[int, asyncio.Event] = {}

    def _event(self, number: int) -> asyncio.Event:
        return self._done.setdefault(number, asyncio.Event())

    async def __call__(self, scope: dict[str, Any], receive: Any, send: Any) -> None:
        number = None
        if scope["type"] == "http":
            raw = dict(scope["headers"]).get(self.HEADER)
            number = int(raw) if raw is not None else None
        try:
            await self.app(scope, receive, send)
        finally:
            if number is not None:
                self._event(number).set()

    async def finished(self, number: int) -> None:
        await asyncio.wait_for(self._event(number).wait(), BOUND)
        del self._done[number]
