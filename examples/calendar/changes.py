"""Telling listeners that calendar://week changed, whichever process wrote the change.

Over stdio every client starts a server process of its own, so an event created through one
process must reach the listeners of another. The database is what they all share: while
anyone listens, this broker looks at it twice a second and announces the week when the number
of events changed. `announce()` does it at once for an event created here. Events written
between two looks are coalesced into one `notifications/resources/updated`, whose `_meta`
says how many changes it stands for (`mcpkit.types.constants.CHANGES_KEY`).
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager

from mcpkit.server.subscriptions import Change, LocalBroker

log = logging.getLogger("calendar")


class CalendarChanges(LocalBroker):
    """The server's broker: `uri` is announced when `revision()` (a blocking read) changes."""

    def __init__(self, uri: str, revision: Callable[[], int], every: float = 0.5) -> None:
        super().__init__()
        self.uri = uri
        self._revision = revision
        self._every = every
        self._seen: int | None = None
        self._listeners = 0
        self._watch: asyncio.Task[None] | None = None

    async def announce(self) -> None:
        """An event was created in this process: tell listeners now, not at the next look
        (with any other process's events since the last look, counted in)."""
        before, count = self._seen, 1
        try:
            self._seen = await asyncio.to_thread(self._revision)
        except Exception:  # the event is written: a busy database must not undo that answer
            log.warning("calendar: could not read the revision after a write", exc_info=True)
        else:
            if before is not None and self._seen is not None and self._seen - before > 1:
                count = self._seen - before
        self.publish(Change("resource", self.uri, count))

    @asynccontextmanager
    async def subscribe(self) -> AsyncIterator[AsyncIterator[Change]]:
        async with super().subscribe() as changes:
            self._listeners += 1
            if self._watch is None:
                self._seen = await asyncio.to_thread(self._revision)
                self._watch = asyncio.create_task(self._look())
            try:
                yield changes
            finally:
                self._listeners -= 1
                if not self._listeners and self._watch is not None:
                    self._watch.cancel()
                    self._watch = None

    async def _look(self) -> None:
        while True:
            await asyncio.sleep(self._every)
            revision = await asyncio.to_thread(self._revision)
            if revision != self._seen:
                # Every event written since the last look is one update, counted in it.
                count = revision - self._seen if self._seen is not None else 1
                self._seen = revision
                self.publish(Change("resource", self.uri, max(1, count)))
