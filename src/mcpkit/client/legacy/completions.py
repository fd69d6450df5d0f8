"""Legacy (2025-11-25) reports of URL elicitations done: `notifications/elicitation/complete`.

A legacy server asks the user to open a page (an `elicitation/create` request in URL mode, or a
-32042 error) and may later report each page done with `notifications/elicitation/complete
{elicitationId}`. `Completions` tracks the ids the client is waiting for. A notification for an
id it does not know, or one already completed, is ignored (the spec's rule); one that arrives a
moment before its id is registered (the -32042 response and the notification may travel on
different HTTP streams) is remembered briefly so nobody waits for something that already
happened. `on_elicitation_complete(elicitation_id)` hears each known one.

May import `mcpkit.types` and `mcpkit.errors`.
"""

from __future__ import annotations

import asyncio
import inspect
import logging
from collections import OrderedDict
from collections.abc import Awaitable, Iterable, Mapping
from typing import Any, Final, Protocol

__all__ = [
    "MAX_ID_LENGTH",
    "Completions",
    "ElicitationCompleteHandler",
    "wait_all",
]

MAX_ID_LENGTH: Final = 256
"""Longest `elicitationId` tracked."""
_MAX_TRACKED: Final = 256
_MAX_EARLY: Final = 64

log = logging.getLogger("mcpkit.client")

class ElicitationCompleteHandler(Protocol):
    """Hears a legacy server report a URL elicitation done: `Client(on_elicitation_complete=
    handler)`, for closing the "waiting for the page" prompt the URL handler showed."""

    def __call__(self, elicitation_id: str, /) -> Awaitable[None] | None:
        """The page of `elicitation_id` (the `elicitationId` the server asked with) is done.

        Called once per known id, never for ids the client did not hear of. A plain function
        or an `async def`; raising is logged (logger `mcpkit.client`) and changes nothing else.
        """


class Completions:
    """The legacy URL elicitations this client waits on, and the server's reports of them."""

    def __init__(self, on_complete: ElicitationCompleteHandler | None = None) -> None:
        if on_complete is not None and not callable(on_complete):
            raise TypeError(
                "on_elicitation_complete must be a function taking the elicitation id, "
                f"not {type(on_complete).__name__}"
            )
        self.on_complete = on_complete
        """Called once for each known elicitation the server reports complete."""
        self._known: OrderedDict[str, asyncio.Event] = OrderedDict()
        self._early: OrderedDict[str, None] = OrderedDict()
        self._tasks: set[asyncio.Task[None]] = set()

    def expect(self, elicitation_id: str) -> asyncio.Event:
        """Wait for `elicitation_id`; its event is set when the server reports it complete."""
        event = self._known.get(elicitation_id)
        if event is not None:
            return event
        event = self._known[elicitation_id] = asyncio.Event()
        while len(self._known) > _MAX_TRACKED:
            self._known.popitem(last=False)
        if self._early.pop(elicitation_id, False) is None:
            # Reported a moment before the client learnt of it.
            event.set()
            if self.on_complete is not None:
                task = asyncio.ensure_future(self._report(elicitation_id))
                self._tasks.add(task)
                task.add_done_callback(self._tasks.discard)
        return event

    def forget(self, elicitation_id: str) -> None:
        """Stop waiting (the user declined); a later report of it is ignored as unknown."""
        event = self._known.get(elicitation_id)
        if event is not None and not event.is_set():
            del self._known[elicitation_id]

    @property
    def pending(self) -> list[str]:
        """The ids still waited for, oldest first."""
        return [key for key, event in self._known.items() if not event.is_set()]

    async def receive(self, message: Mapping[str, Any]) -> None:
        """One `notifications/elicitation/complete`; unknown and completed ids are ignored."""
        params = message.get("params")
        elicitation_id = params.get("elicitationId") if type(params) is dict else None
        if type(elicitation_id) is not str or len(elicitation_id) > MAX_ID_LENGTH:
            return
        event = self._known.get(elicitation_id)
        if event is None:
            self._early[elicitation_id] = None
            while len(self._early) > _MAX_EARLY:
                self._early.popitem(last=False)
            return
        if event.is_set():
            return
        event.set()
        await self._report(elicitation_id)

    async def _report(self, elicitation_id: str) -> None:
        if self.on_complete is None:
            return
        try:
            reply = self.on_complete(elicitation_id)
            if inspect.isawaitable(reply):
                await reply
        except Exception:
            log.exception("on_elicitation_complete failed for %r", elicitation_id)


async def wait_all(events: Iterable[asyncio.Event], timeout: float) -> bool:
    """Whether every event was set within `timeout` seconds."""
    waiting = [e for e in events if not e.is_set()]
    if not waiting:
        return True
    if timeout <= 0:
        return False
    try:
        async with asyncio.timeout(timeout):
            for event in waiting:
                await event.wait()
    except TimeoutError:
        return False
    return True
