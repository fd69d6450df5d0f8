"""`Subscription`: one `subscriptions/listen` stream, as an async iterator of notifications.

Modern era: the listen request stays open; its first notification, the acknowledgement, says
which of the requested notification types the server will send (`acknowledged`), and every
notification after it is yielded. Closing the subscription cancels the request (stdio:
`notifications/cancelled`; HTTP: the stream closes); a server that ends it (a final result, or
its own `notifications/cancelled`) ends the iteration.

Legacy era (2025-11-25 has no listen): the same object is built from what a legacy server
offers: `resources/subscribe` for each URI, and the unsolicited list-changed and
resource-updated notifications of the session, filtered to what was asked for.

Every notification also reaches the client's cache first, so a stale entry is gone before the
application reacts to the change (CACHE-7).

May import `mcpkit.types`, `mcpkit.errors`, `mcpkit.protocol`.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Awaitable, Callable, Sequence
from typing import TYPE_CHECKING, Any

from mcpkit.errors import MCPError, RPCError, TransportError
from mcpkit.types.constants import Method

if TYPE_CHECKING:
    from mcpkit.client.client import Client

__all__ = ["LegacyListeners", "Subscription"]

_END = object()

_FLAGS = {
    "toolsListChanged": ("tools", Method.TOOLS_LIST_CHANGED),
    "promptsListChanged": ("prompts", Method.PROMPTS_LIST_CHANGED),
    "resourcesListChanged": ("resources", Method.RESOURCES_LIST_CHANGED),
}


class Subscription:
    """Notifications from one listen stream; use `async with` and `async for`."""

    def __init__(
        self,
        client: Client,
        *,
        tools: bool = False,
        prompts: bool = False,
        resources: bool = False,
        uris: Sequence[str] = (),
        ack_timeout: float | None = 30.0,
    ) -> None:
        if isinstance(uris, str):
            raise TypeError("listen: uris must be a list of URIs, not one string")
        self._client = client
        self.requested: dict[str, Any] = {}
        if tools:
            self.requested["toolsListChanged"] = True
        if prompts:
            self.requested["promptsListChanged"] = True
        if resources:
            self.requested["resourcesListChanged"] = True
        if uris:
            self.requested["resourceSubscriptions"] = list(uris)
        self.acknowledged: dict[str, Any] | None = None
        """The subset of `requested` the server will honour (SUB-3)."""
        self._ack_timeout = ack_timeout
        self._queue: asyncio.Queue[Any] = asyncio.Queue()
        self._acked = asyncio.Event()
        self._task: asyncio.Task[Any] | None = None
        self._legacy_uris: list[str] = []
        self._started = False
        self._closed = False

    # -- lifecycle -------------------------------------------------------------------------

    async def start(self) -> Subscription:
        """Open the stream and wait for the acknowledgement."""
        if self._started:
            return self
        self._started = True
        client = self._client
        await client.connect()
        if client.era == "legacy":
            await self._start_legacy()
            return self
        self._task = asyncio.ensure_future(client._listen_request(self.requested, self._receive))
        self._task.add_done_callback(self._ended)
        waiter = asyncio.ensure_future(self._acked.wait())
        try:
            done, _ = await asyncio.wait(
                {waiter, self._task}, timeout=self._ack_timeout,
                return_when=asyncio.FIRST_COMPLETED,
            )
        finally:
            waiter.cancel()
        if self._acked.is_set():
            return self
        if self._task in done:
            self._task.result()  # raises what ended the request (e.g. -32601)
            raise TransportError("subscriptions/listen: the server ended the stream before "
                                 "acknowledging it")
        await self.close()
        raise TransportError(
            f"subscriptions/listen: no acknowledgement within {self._ack_timeout} s"
        )

    async def close(self) -> None:
        if self._closed:
            return
        self._closed = True
        task = self._task
        if task is not None and not task.done():
            task.cancel()
            try:
                await task
            except (asyncio.CancelledError, MCPError):
                pass
        if self._client.era == "legacy":
            await self._client._legacy.remove(self, self._legacy_uris)
        self._queue.put_nowait(_END)

    async def __aenter__(self) -> Subscription:
        return await self.start()

    async def __aexit__(self, *exc: object) -> None:
        await self.close()

    # -- iteration -------------------------------------------------------------------------

    def __aiter__(self) -> Subscription:
        return self

    async def __anext__(self) -> dict[str, Any]:
        if not self._started:
            await self.start()
        item = await self._queue.get()
        if item is _END:
            self._queue.put_nowait(_END)
            raise StopAsyncIteration
        if isinstance(item, BaseException):
            self._queue.put_nowait(_END)
            raise item
        return item  # type: ignore[no-any-return]

    # -- what arrives ----------------------------------------------------------------------

    async def _receive(self, message: dict[str, Any]) -> None:
        self._client._cache.invalidate(message)
        if message.get("method") == Method.SUBSCRIPTIONS_ACKNOWLEDGED and not self._acked.is_set():
            params = message.get("params")
            notes = params.get("notifications") if type(params) is dict else None
            self.acknowledged = notes if type(notes) is dict else {}
            self._acked.set()
            return
        if message.get("method") == Method.CANCELLED:
            return  # the request itself fails next; _ended reports it
        self._queue.put_nowait(message)

    def _ended(self, task: asyncio.Task[Any]) -> None:
        if task.cancelled():
            self._queue.put_nowait(_END)
            return
        exc = task.exception()
        if exc is not None and self._acked.is_set():
            # A server's own teardown (notifications/cancelled) ends the stream quietly.
            self._queue.put_nowait(_END if isinstance(exc, TransportError) else exc)
        else:
            self._queue.put_nowait(_END)

    # -- legacy emulation ------------------------------------------------------------------

    async def _start_legacy(self) -> None:
        client = self._client
        caps = client.server_capabilities or {}
        ack: dict[str, Any] = {}
        for flag, (kind, _) in _FLAGS.items():
            if self.requested.get(flag) and (caps.get(kind) or {}).get("listChanged"):
                ack[flag] = True
        uris = self.requested.get("resourceSubscriptions") or []
        if uris and (caps.get("resources") or {}).get("subscribe"):
            self._legacy_uris = await client._legacy.add(self, uris)
            if self._legacy_uris:
                ack["resourceSubscriptions"] = list(self._legacy_uris)
        else:
            await client._legacy.add(self, [])
        self.acknowledged = ack
        self._acked.set()

    def _offer_legacy(self, message: dict[str, Any]) -> None:
        """A legacy session's unsolicited notification, if this subscription asked for it."""
        method = message.get("method")
        ack = self.acknowledged or {}
        for flag, (_, note) in _FLAGS.items():
            if method == note and ack.get(flag):
                self._queue.put_nowait(message)
                return
        if method == Method.RESOURCE_UPDATED:
            params = message.get("params")
            uri = params.get("uri") if type(params) is dict else None
            if type(uri) is str and any(
                uri == u or uri.startswith(u.rstrip("/") + "/") for u in self._legacy_uris
            ):
                self._queue.put_nowait(message)


class LegacyListeners:
    """The subscriptions of a legacy session, and the `resources/subscribe`s they share."""

    def __init__(
        self, request: Callable[[str, dict[str, Any]], Awaitable[dict[str, Any]]]
    ) -> None:
        self._request = request
        self._subscriptions: list[Subscription] = []
        self._uris: dict[str, int] = {}

    async def add(self, sub: Subscription, uris: Sequence[str]) -> list[str]:
        self._subscriptions.append(sub)
        for uri in uris:
            if self._uris.get(uri, 0) == 0:
                await self._request(Method.SUBSCRIBE, {"uri": uri})
            self._uris[uri] = self._uris.get(uri, 0) + 1
        return list(uris)

    async def remove(self, sub: Subscription, uris: Sequence[str]) -> None:
        if sub in self._subscriptions:
            self._subscriptions.remove(sub)
        for uri in uris:
            count = self._uris.get(uri, 0) - 1
            if count > 0:
                self._uris[uri] = count
                continue
            self._uris.pop(uri, None)
            with contextlib.suppress(RPCError, TransportError):
                await self._request(Method.UNSUBSCRIBE, {"uri": uri})

    def offer(self, message: dict[str, Any]) -> None:
        for sub in list(self._subscriptions):
            sub._offer_legacy(message)

    def clear(self) -> None:
        for sub in self._subscriptions:
            sub._queue.put_nowait(_END)
        self._subscriptions.clear()
        self._uris.clear()
