"""Change events, their fan-out, and the `subscriptions/listen` method that streams them.

Application code announces changes (`Server.notify_tools_changed()` and friends); a `Broker`
carries each `Change` to every open listen stream, which forwards only what its filter asked
for. `LocalBroker` fans out inside one process; a broker shared by several instances
implements the same two methods.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass
from typing import Any, Protocol

from mcpkit.errors import InternalError
from mcpkit.protocol.codec import RequestId, notification_message
from mcpkit.server.context import Context
from mcpkit.types.constants import CHANGES_KEY, SUBSCRIPTION_ID_KEY
from mcpkit.types.methods import Method

__all__ = [
    "Broker",
    "Change",
    "ListenFilter",
    "ListenPart",
    "ListenStream",
    "LocalBroker",
    "listen",
]


@dataclass(frozen=True, slots=True)
class Change:
    """`kind` is "tools", "prompts", "resources" (the lists) or "resource" (one URI)."""

    kind: str
    uri: str | None = None
    count: int = 1
    """How many changes this one stands for: a publisher that coalesced several (one look at
    a shared database finding two new events) says so, and a resource's update carries it
    (`CHANGES_KEY`), so a listener counting changes counts them all."""


class Broker(Protocol):
    def publish(self, change: Change) -> None:
        """Announce a change; never blocks, safe to call from any thread."""

    def subscribe(self) -> Any:
        """An async context manager yielding an async iterator of `Change`s."""

    def close(self) -> None:
        """End every subscription (server shutdown)."""


class ListenStream(Protocol):
    """What an extension's part of one listen request sends, once the request is accepted."""

    def acknowledged(self) -> dict[str, Any]:
        """Its fields of the acknowledgement's `notifications` (the ids it agreed to)."""

    async def opening(self, subscription: RequestId) -> list[dict[str, Any]]:
        """The notifications sent right after the acknowledgement (the current state of what
        it follows, so a change made before the stream opened is not missed)."""

    async def message_for(self, change: Change, subscription: RequestId) -> dict[str, Any] | None:
        """The notification a change makes on this stream, if any."""


class ListenPart(Protocol):
    """An extension's hook into `subscriptions/listen` (`Server.listen_parts`)."""

    async def __call__(self, notifications: dict[str, Any], ctx: Context) -> ListenStream | None:
        """Its stream for this request's `notifications` (None when it asks nothing of the
        extension); raises an RPCError for a request it refuses."""


_CLOSED = Change("closed")


class LocalBroker:
    """In-process fan-out; each subscriber has its own bounded queue. Once closed (the server
    is stopping), every stream ends: those open now, and one that subscribes later (a request
    that was on its way when the stop began), which would otherwise wait for a change that
    never comes until the ASGI server cancels it."""

    def __init__(self, queue_size: int = 256) -> None:
        self._subscribers: set[tuple[asyncio.AbstractEventLoop, asyncio.Queue[Change]]] = set()
        self._queue_size = queue_size
        self.closed = False

    def publish(self, change: Change) -> None:
        for loop, queue in list(self._subscribers):
            loop.call_soon_threadsafe(_offer, queue, change)

    def close(self) -> None:
        self.closed = True
        for loop, queue in list(self._subscribers):
            loop.call_soon_threadsafe(_end, queue)

    @asynccontextmanager
    async def subscribe(self) -> AsyncIterator[AsyncIterator[Change]]:
        queue: asyncio.Queue[Change] = asyncio.Queue(self._queue_size)
        if self.closed:
            queue.put_nowait(_CLOSED)
        entry = (asyncio.get_running_loop(), queue)
        self._subscribers.add(entry)
        try:
            yield _drain(queue)
        finally:
            self._subscribers.discard(entry)


def _offer(queue: asyncio.Queue[Change], change: Change) -> None:
    # A listener that stopped reading loses duplicates of list-changed events, which carry no
    # data; it must never make the publisher wait.
    try:
        queue.put_nowait(change)
    except asyncio.QueueFull:
        pass


def _end(queue: asyncio.Queue[Change]) -> None:
    """End a subscriber's stream, even one whose queue is full (its oldest change goes)."""
    if queue.full():
        queue.get_nowait()
    queue.put_nowait(_CLOSED)


async def _drain(queue: asyncio.Queue[Change]) -> AsyncIterator[Change]:
    while True:
        change = await queue.get()
        if change is _CLOSED:
            return
        yield change


_LIST_FLAGS = {
    "toolsListChanged": ("tools", Method.TOOLS_LIST_CHANGED),
    "promptsListChanged": ("prompts", Method.PROMPTS_LIST_CHANGED),
    "resourcesListChanged": ("resources", Method.RESOURCES_LIST_CHANGED),
}


class ListenFilter:
    """What one listen request asked for, cut down to what the server can send."""

    __slots__ = ("kinds", "uris")

    def __init__(self, kinds: frozenset[str], uris: tuple[str, ...]) -> None:
        self.kinds = kinds
        self.uris = uris

    @classmethod
    def parse(cls, params: dict[str, Any], capabilities: dict[str, Any]) -> ListenFilter:
        # Its shape (booleans, a list of URIs, each may be null) is the row's params check's.
        wanted = params["notifications"]
        kinds = set()
        for flag, (kind, _) in _LIST_FLAGS.items():
            if wanted.get(flag) and capabilities.get(kind, {}).get("listChanged"):
                kinds.add(kind)
        uris = wanted.get("resourceSubscriptions")
        if not capabilities.get("resources", {}).get("subscribe"):
            uris = None
        return cls(frozenset(kinds), tuple(uris or ()))

    def acknowledged(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            flag: True for flag, (kind, _) in _LIST_FLAGS.items() if kind in self.kinds
        }
        if self.uris:
            out["resourceSubscriptions"] = list(self.uris)
        return out

    def message_for(self, change: Change, subscription: RequestId) -> dict[str, Any] | None:
        meta = {SUBSCRIPTION_ID_KEY: subscription}
        if change.kind == "resource":
            uri = change.uri or ""
            if any(uri == u or uri.startswith(u.rstrip("/") + "/") for u in self.uris):
                if change.count > 1:
                    meta[CHANGES_KEY] = change.count
                return notification_message(Method.RESOURCE_UPDATED, {"_meta": meta, "uri": uri})
            return None
        if change.kind in self.kinds:
            method = next(m for k, m in _LIST_FLAGS.values() if k == change.kind)
            return notification_message(method, {"_meta": meta})
        return None


async def listen(params: dict[str, Any], ctx: Context) -> dict[str, Any]:
    """`subscriptions/listen`: acknowledge, then stream the changes the filter asked for until
    the broker closes (server shutdown); the result ends the stream."""
    server = ctx.server
    filt = ListenFilter.parse(params, server.capabilities())
    notify = ctx._notify
    if notify is None:
        raise InternalError("subscriptions/listen needs a transport that can stream")
    sub_id = ctx.request_id
    assert sub_id is not None
    wanted = params["notifications"]
    parts = [p for p in [await part(wanted, ctx) for part in server.listen_parts] if p is not None]
    acknowledged = filt.acknowledged()
    for part in parts:
        acknowledged.update(part.acknowledged())
    async with server.broker.subscribe() as changes:
        await notify(
            {
                "jsonrpc": "2.0",
                "method": Method.SUBSCRIPTIONS_ACKNOWLEDGED,
                "params": {
                    "_meta": {SUBSCRIPTION_ID_KEY: sub_id},
                    "notifications": acknowledged,
                },
            }
        )
        for part in parts:
            for message in await part.opening(sub_id):
                await notify(message)
        async for change in changes:
            message = filt.message_for(change, sub_id)
            if message is not None:
                await notify(message)
            for part in parts:
                message = await part.message_for(change, sub_id)
                if message is not None:
                    await notify(message)
    return {"resultType": "complete", "_meta": {SUBSCRIPTION_ID_KEY: sub_id}}
