"""`Subscription`: one `subscriptions/listen` stream, as an async iterator of notifications.

Modern era: the listen request stays open; its first notification, the acknowledgement, says
which of the requested notification types the server will send (`acknowledged`), and every
notification after it is yielded. Closing the subscription cancels the request (stdio:
`notifications/cancelled`; HTTP: the stream closes); a server that ends it (a final result, or
its own `notifications/cancelled`) ends the iteration.

Legacy era (2025-11-25 has no listen): the same object is fed from what a legacy server
offers (`mcpkit.client.legacy.listeners`). Which of the two happens is the client's era
adapter's to say (`EraAdapter.listen`); the subscription only holds the stream and the queue.

`fields` adds an extension's own request fields to `notifications` (the Tasks extension asks
for its tasks' notifications with `{"taskIds": [...]}`, TASK-13, from `mcpkit.ext.tasks`, with
`meta` declaring the extension); the acknowledgement says which the server honours.

Every notification also reaches the client's cache first, so a stale entry is gone before the
application reacts to the change (CACHE-7).

Takes the client's `ClientCore` (`mcpkit.client.core`), so it does not import
`mcpkit.client.client`. May import `mcpkit.types`, `mcpkit.errors`, `mcpkit.protocol`.
"""

from __future__ import annotations

import asyncio
from collections.abc import Mapping, Sequence
from typing import Any

from mcpkit.client.core import ClientCore
from mcpkit.errors import MCPError, TransportError
from mcpkit.types.methods import Method

__all__ = ["Subscription"]

_END = object()


class Subscription:
    """Notifications from one listen stream; use `async with` and `async for`."""

    def __init__(
        self,
        client: ClientCore,
        *,
        tools: bool = False,
        prompts: bool = False,
        resources: bool = False,
        uris: Sequence[str] = (),
        fields: Mapping[str, Any] | None = None,
        ack_timeout: float | None = 30.0,
        meta: Mapping[str, Any] | None = None,
    ) -> None:
        if isinstance(uris, str):
            raise TypeError("listen: uris must be a list of URIs, not one string")
        self._client = client
        self._meta = meta
        self.requested: dict[str, Any] = {}
        if tools:
            self.requested["toolsListChanged"] = True
        if prompts:
            self.requested["promptsListChanged"] = True
        if resources:
            self.requested["resourcesListChanged"] = True
        if uris:
            self.requested["resourceSubscriptions"] = list(uris)
        if fields:
            clash = sorted(set(fields) & set(self.requested))
            if clash:
                raise ValueError(f"listen: fields may not redefine {', '.join(clash)}")
            self.requested.update(fields)  # an extension's own (the Tasks' taskIds)
        self.acknowledged: dict[str, Any] | None = None
        """The subset of `requested` the server will honour (SUB-3)."""
        self._ack_timeout = ack_timeout
        self._queue: asyncio.Queue[Any] = asyncio.Queue()
        self._acked = asyncio.Event()
        self._task: asyncio.Task[Any] | None = None
        self._started = False
        self._closed = False

    # -- lifecycle -------------------------------------------------------------------------

    async def start(self) -> Subscription:
        """Open the stream and wait for the acknowledgement."""
        if self._started:
            return self
        self._started = True
        await self._client.connect()
        await self._client.adapter.listen(self)
        return self

    async def open_stream(self) -> None:
        """Send the listen request, and wait for its acknowledgement (the modern era)."""
        self._task = asyncio.ensure_future(self._listen())
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
            return
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
            except MCPError:
                pass
            except asyncio.CancelledError:
                # The listen request's own end, expected; but a cancellation of the task
                # closing the subscription must go on, not end here with the stream.
                closing = asyncio.current_task()
                if closing is not None and closing.cancelling():
                    raise
        await self._client.adapter.unlisten(self)
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

    async def _listen(self) -> dict[str, Any]:
        client = self._client
        params = client.params({"notifications": self.requested}, meta=self._meta)
        return await client.send(Method.SUBSCRIPTIONS_LISTEN, params, self._receive, None)

    def acknowledge(self, acknowledged: dict[str, Any]) -> None:
        """Take `acknowledged` as the server's answer, without a listen stream (legacy era)."""
        self.acknowledged = acknowledged
        self._acked.set()

    def put(self, message: dict[str, Any]) -> None:
        """Hand one notification to the iteration."""
        self._queue.put_nowait(message)

    def end(self) -> None:
        """End the iteration (the client is closing)."""
        self._queue.put_nowait(_END)

    async def _receive(self, message: dict[str, Any]) -> None:
        self._client.cache.invalidate(message)
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
