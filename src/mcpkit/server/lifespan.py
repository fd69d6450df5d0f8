"""A server's lifespan: what it opens once per process before serving and closes after.

    @asynccontextmanager
    async def lifespan(server: Server) -> AsyncIterator[dict[str, Any]]:
        pool = await open_pool()
        try:
            yield {"pool": pool}
        finally:
            await pool.close()

    server = Server("app", lifespan=lifespan)

The factory is called with the server and entered by `Server.running()`, which every transport
holds while it serves (stdio until its input ends, Streamable HTTP from the ASGI lifespan's
startup to its shutdown, each `--workers` process for itself, an in-memory client while it is
connected). Holders are counted: the lifespan is entered when the first one starts and exited
when the last one stops, so a process serving one server on two transports opens it once.
It is exited whatever ended the serving, an error included (the exception is thrown into the
factory's `yield`); one that fails to start stops the transport before it serves anything.
What it yields is `ctx.lifespan_context` in every handler (and `Server.lifespan_context`).
The servers mounted in it (`Server.mount`) are entered with it, after it, and exited before.

Imports the standard library; of the server it reads its view `Held` (`mcpkit.server.view`).
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import AsyncIterator, Callable
from contextlib import AbstractAsyncContextManager, AsyncExitStack, asynccontextmanager
from typing import Any, Final

from mcpkit.server.view import Held

__all__ = [
    "Lifespan",
    "LifespanState",
]

log = logging.getLogger("mcpkit.server")

Lifespan = Callable[[Any], AbstractAsyncContextManager[Any]]
"""`lifespan(server)` -> an async context manager; what it yields is the lifespan context."""

_NOT_ENTERED: Final = object()


class LifespanState:
    """One server's lifespan: how many hold it, and what it yielded while they do."""

    __slots__ = ("_factory", "_holders", "_lock", "_loop", "_stack", "server", "value")

    def __init__(self, server: Held, factory: Lifespan | None) -> None:
        if factory is not None and not callable(factory):
            raise TypeError(f"Server(lifespan=...) takes a function of the server returning an "
                            f"async context manager (@asynccontextmanager), not {factory!r}")
        self.server = server
        self._factory = factory
        self._holders = 0
        self._lock: asyncio.Lock | None = None
        self._loop: asyncio.AbstractEventLoop | None = None
        self._stack: AsyncExitStack | None = None
        self.value: Any = _NOT_ENTERED

    @property
    def entered(self) -> bool:
        return self._holders > 0

    def context(self) -> Any:
        if self._factory is None or self.value is _NOT_ENTERED:
            if self._factory is None:
                raise RuntimeError(
                    f"server {self.server.name!r} has no lifespan, so there is no lifespan "
                    "context: give Server(lifespan=...) an async context manager factory")
            raise RuntimeError(
                f"server {self.server.name!r}: its lifespan is not entered: serve it with "
                "server.run(), mcpkit run, an ASGI server that runs the lifespan protocol "
                "(or Starlette's lifespan=app.lifespan), or hold `async with "
                "server.running():` around serving it")
        return self.value

    def _guard(self) -> asyncio.Lock:
        """A lock of the running loop's (a server object may outlive one event loop: tests,
        `asyncio.run` called twice)."""
        loop = asyncio.get_running_loop()
        if self._lock is None or self._loop is not loop:
            self._lock, self._loop = asyncio.Lock(), loop
        return self._lock

    async def acquire(self) -> None:
        """One more holder; the first enters the lifespan (its error is raised here)."""
        async with self._guard():
            if self._holders == 0:
                stack = AsyncExitStack()
                try:
                    value = None
                    if self._factory is not None:
                        manager = self._factory(self.server)
                        if not hasattr(manager, "__aenter__"):
                            raise TypeError(
                                f"server {self.server.name!r}: lifespan(server) returned "
                                f"{type(manager).__name__}, not an async context manager "
                                "(decorate it with @contextlib.asynccontextmanager)")
                        value = await stack.enter_async_context(manager)
                    for child in self.server.mounted_servers():
                        await stack.enter_async_context(child.running())
                except BaseException:
                    await stack.aclose()
                    raise
                self._stack = stack
                self.value = value
            self._holders += 1

    async def release(self, exc: BaseException | None = None) -> None:
        """One holder fewer; the last exits the lifespan, `exc` thrown into it when serving
        ended with an error. An error of the lifespan's own exit is logged, not raised: the
        transport is stopping either way."""
        async with self._guard():
            if self._holders == 0:
                return
            self._holders -= 1
            if self._holders:
                return
            stack, self._stack = self._stack, None
            self.value = _NOT_ENTERED
            if stack is None:
                return
            try:
                if exc is None:
                    await stack.aclose()
                else:
                    await stack.__aexit__(type(exc), exc, exc.__traceback__)
            except Exception:
                log.exception("server %r: its lifespan failed while exiting", self.server.name)

    @asynccontextmanager
    async def held(self) -> AsyncIterator[Any]:
        await self.acquire()
        try:
            yield self.value
        except BaseException as exc:
            await self.release(exc)
            raise
        else:
            await self.release()
