"""The worker threads that run plain (non-async) handlers off the event loop.

A handler written as a plain function may block (a database call, a file read), so it never
runs on the event loop's thread. The pool is a `SimpleQueue` feeding daemon threads that start
on demand; the result comes back with one `call_soon_threadsafe`. That costs about half of
`loop.run_in_executor`, which matters because every call of a plain tool takes this hop. The
caller's context variables travel with the call, as with `asyncio.to_thread`, and the worker
knows the caller's event loop (`serving_loop`), so a plain handler can still send the
request's notifications.
"""

from __future__ import annotations

import asyncio
import contextvars
import os
import queue
import threading
from collections.abc import Callable
from typing import Any, Final

__all__ = [
    "WorkerPool",
    "invoke",
    "run_in_worker",
    "serving_loop",
]

_Item = tuple[asyncio.AbstractEventLoop, "asyncio.Future[Any]", contextvars.Context,
              Callable[..., Any], dict[str, Any]]
_serving = threading.local()


def serving_loop() -> asyncio.AbstractEventLoop | None:
    """The event loop of the request whose handler this worker thread is running; None in any
    other thread. A plain handler's `Context` sends its reports there."""
    return getattr(_serving, "loop", None)


def _resolve(future: asyncio.Future[Any], value: Any) -> None:
    if not future.done():
        future.set_result(value)


def _reject(future: asyncio.Future[Any], exc: BaseException) -> None:
    if not future.done():
        future.set_exception(exc)


class WorkerPool:
    """At most `max_workers` threads, started when work waits and no thread is idle."""

    def __init__(self, max_workers: int | None = None) -> None:
        self.max_workers = max_workers or min(32, (os.cpu_count() or 1) + 4)
        self._queue: queue.SimpleQueue[_Item | None] = queue.SimpleQueue()
        self._lock = threading.Lock()
        self._threads = 0
        self._idle = 0

    def submit(self, fn: Callable[..., Any], kwargs: dict[str, Any]) -> asyncio.Future[Any]:
        """Call `fn(**kwargs)` in a worker thread with the caller's context variables; await
        the future it returns for the value."""
        loop = asyncio.get_running_loop()
        future = loop.create_future()
        self._queue.put((loop, future, contextvars.copy_context(), fn, kwargs))
        if self._idle == 0 and self._threads < self.max_workers:
            with self._lock:
                if self._idle == 0 and self._threads < self.max_workers:
                    self._threads += 1
                    threading.Thread(
                        target=self._work, name=f"mcpkit-worker-{self._threads}", daemon=True
                    ).start()
        return future

    def _work(self) -> None:
        get = self._queue.get
        lock = self._lock
        while True:
            with lock:
                self._idle += 1
            item = get()
            with lock:
                self._idle -= 1
            if item is None:
                with lock:
                    self._threads -= 1
                return
            loop, future, ctx, fn, kwargs = item
            if future.cancelled():
                continue
            _serving.loop = loop
            try:
                value = ctx.run(fn, **kwargs)
            except BaseException as exc:
                loop.call_soon_threadsafe(_reject, future, exc)
            else:
                loop.call_soon_threadsafe(_resolve, future, value)

    def shutdown(self) -> None:
        for _ in range(self._threads):
            self._queue.put(None)


_pool = WorkerPool()


run_in_worker: Final[Callable[[Callable[..., Any], dict[str, Any]], asyncio.Future[Any]]] = (
    _pool.submit)
"""`run_in_worker(fn, kwargs)`: `fn(**kwargs)` in a worker thread with the caller's context
variables; await what it returns for the value. The pool's own method, queued at once, with
no coroutine or function of its own around it: every call of a plain tool comes this way."""


async def invoke(fn: Callable[..., Any], is_async: bool, kwargs: dict[str, Any]) -> Any:
    """Call a handler: async ones on the loop, plain ones in a worker thread."""
    if is_async:
        return await fn(**kwargs)
    return await run_in_worker(fn, kwargs)
