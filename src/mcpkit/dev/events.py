"""The events every open page follows, and what a page that opens late (or reconnects) replays.

Each event is `{"seq": N, "type": ..., "data": ...}`, numbered in the order published. Two
kinds are kept:

- **state** (the connection, the catalogue, a task, an open question): under a key, the latest
  one only, since a page needs the current state and not its history; `forget(key)` drops one
  (a question answered);
- **history** (wire messages, progress, log lines, changes): the last `HISTORY` of them.

A subscriber gets what it missed (everything after the `Last-Event-ID` its EventSource sends
back on a reconnect, or everything kept) in order, then each event as it is published. A page
that stops reading is dropped once `QUEUE` events wait for it, rather than holding memory; its
EventSource reconnects and replays.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections import deque
from collections.abc import AsyncIterator
from typing import Any, Final

__all__ = [
    "HISTORY",
    "QUEUE",
    "EventHub",
]

HISTORY: Final = 5000
"""History events kept for a page that opens later."""
QUEUE: Final = 10_000
"""Events waiting for one slow page before it is dropped."""

Event = dict[str, Any]


class EventHub:
    def __init__(self, history: int = HISTORY) -> None:
        self._seq = 0
        self._state: dict[str, Event] = {}
        self._history: deque[Event] = deque(maxlen=history)
        self._queues: set[asyncio.Queue[Event | None]] = set()

    @property
    def last(self) -> int:
        return self._seq

    def publish(self, kind: str, data: Any, key: str | None = None) -> Event:
        """Send an event to every page; under `key`, it replaces the state kept there."""
        self._seq += 1
        event: Event = {"seq": self._seq, "type": kind, "data": data}
        if key is None:
            self._history.append(event)
        else:
            self._state[key] = event
        for queue in list(self._queues):
            if queue.qsize() >= QUEUE:
                self._queues.discard(queue)
                queue.put_nowait(None)  # the reader ends; its page reconnects and replays
            else:
                queue.put_nowait(event)
        return event

    def forget(self, key: str) -> None:
        self._state.pop(key, None)

    def kept(self, after: int = 0) -> list[Event]:
        """What a page that saw everything up to `after` has missed, in order."""
        events = [e for e in (*self._state.values(), *self._history) if e["seq"] > after]
        return sorted(events, key=lambda e: e["seq"])

    def state(self, key: str) -> Any:
        event = self._state.get(key)
        return None if event is None else event["data"]

    @contextlib.asynccontextmanager
    async def subscribed(self, after: int = 0) -> AsyncIterator[asyncio.Queue[Event | None]]:
        """`async with hub.subscribed(n) as queue:` each `await queue.get()` is the next event,
        None once the stream ends (the app stops, or this subscriber fell too far behind)."""
        queue: asyncio.Queue[Event | None] = asyncio.Queue()
        for event in self.kept(after):
            queue.put_nowait(event)
        self._queues.add(queue)
        try:
            yield queue
        finally:
            self._queues.discard(queue)

    def close(self) -> None:
        """End every subscriber's stream (the app is stopping)."""
        for queue in list(self._queues):
            queue.put_nowait(None)
        self._queues.clear()
