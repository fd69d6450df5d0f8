"""The proxy's connections to its upstream server, and which call each one serves.

The first connection (`Upstream.main`) is opened at start and stays: it reads the lists,
follows their changes, completes arguments and serves calls. A 2026-07-28 upstream serves
every call on it at once, since whatever it asks comes back inside its answer. A 2025-11-25
upstream asks its client with requests of its own that name no call (over stdio nothing ties
them to one), so there each call holds a connection alone (`lease`) while it runs, and a
request arriving on that connection is the call's (`Connection.current`): more connections
are opened as calls overlap, up to `ProxyOptions.connections`, and one past the first that
stays unused for `idle_s` is closed again.

Each connection is a public `mcpkit.Client` on the proxy's connector, declaring the client
capabilities of `ProxyOptions.asks`; its handlers pass what the upstream asks to the held call
of the connection (`mcpkit.proxy.held`), or refuse it when no call is its.
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import logging
from collections.abc import AsyncIterator
from typing import Any

from mcpkit._version import __version__
from mcpkit.client import Client
from mcpkit.client.inputs import InputRequest
from mcpkit.client.transport import Connector
from mcpkit.errors import InternalError, MethodNotFoundError
from mcpkit.proxy.held import HeldCall
from mcpkit.proxy.options import ProxyOptions
from mcpkit.types.era import LEGACY

__all__ = [
    "Connection",
    "Upstream",
]

log = logging.getLogger("mcpkit.proxy")


class Connection:
    """One client connection to the upstream, and the call it serves alone (if any)."""

    def __init__(self, upstream: Upstream) -> None:
        self.current: HeldCall | None = None
        """The held call this connection serves alone, whose requests from the upstream
        arriving here are."""
        self.busy = False
        self.idle_since = asyncio.get_running_loop().time()
        asks = upstream.options.asks
        handler = self._answer
        self.client = Client(
            upstream.connector, client_info=upstream.client_info,
            elicit=handler if "elicitation" in asks else None,
            elicit_url=handler if "elicitation" in asks else None,
            sample=handler if "sampling" in asks else None,
            roots=handler if "roots" in asks else None,
            on_log=self._log, options=upstream.client_options,
        )

    async def _log(self, level: str, data: Any, logger: str | None) -> None:
        """A log message of the upstream's session (a 2025-11-25 stdio server's are sent
        outside any request): the call this connection serves passes it on."""
        call = self.current
        if call is not None:
            await call.log(level, data, logger)

    async def _answer(self, request: InputRequest) -> dict[str, Any]:
        call = self.current
        if call is None:
            # The upstream asked outside any call this connection serves (between calls, or
            # on a connection shared by calls, where a request cannot be told apart).
            raise MethodNotFoundError(
                f"{request.method}: the proxy has no call this request belongs to; an upstream "
                "asks its client only in the middle of a call", {"method": request.method})
        return await call.ask(request)


class Upstream:
    """The connections to one upstream server; see the module docstring."""

    def __init__(self, connector: Connector, options: ProxyOptions) -> None:
        self.connector = connector
        self.options = options
        self.client_info = dict(options.client_info or {"name": "mcpkit-proxy",
                                                        "version": __version__})
        client = options.client
        self.client_options = client if client.log_level is not None else dataclasses.replace(
            client, log_level="debug")
        """Every log message is asked for: each caller's own level picks what it hears."""
        self._main: Connection | None = None
        self._others: list[Connection] = []
        self._freed: asyncio.Condition | None = None
        self._reaper: asyncio.Task[None] | None = None

    @property
    def main(self) -> Client:
        """The client of the first connection: lists, their changes, completion."""
        if self._main is None:
            raise RuntimeError("the proxy has not started: enter it (async with) or serve it")
        return self._main.client

    async def start(self) -> Client:
        """Open the first connection (settling the upstream's era) and return its client."""
        if self._main is None:
            self._main = Connection(self)
            self._freed = asyncio.Condition()
        await self._main.client.connect()
        return self._main.client

    @property
    def exclusive(self) -> bool:
        """Whether each call holds a connection alone: a 2025-11-25 upstream's requests to its
        client name no call, so only a connection serving one call at a time says whose they
        are; a 2026-07-28 upstream asks inside its answers and serves any number at once."""
        return self.main.era == LEGACY

    @contextlib.asynccontextmanager
    async def lease(self, call: HeldCall) -> AsyncIterator[Client]:
        """A client for `call`: on a connection of its own while it runs when the upstream
        needs that (`exclusive`), else the first one."""
        main = self._main
        assert main is not None and self._freed is not None, "the proxy has not started"
        if not self.exclusive:
            yield main.client
            return
        connection = await self._acquire(call.where)
        connection.current = call
        try:
            yield connection.client
        finally:
            connection.current = None
            connection.busy = False
            connection.idle_since = asyncio.get_running_loop().time()
            async with self._freed:
                self._freed.notify()

    async def _acquire(self, where: str) -> Connection:
        assert self._main is not None and self._freed is not None
        freed = self._freed
        try:
            async with asyncio.timeout(self.options.wait_s):
                async with freed:
                    while True:
                        for connection in (self._main, *self._others):
                            if not connection.busy:
                                connection.busy = True
                                return connection
                        if 1 + len(self._others) < self.options.connections:
                            connection = Connection(self)
                            connection.busy = True
                            self._others.append(connection)
                            self._reap_later()
                            return connection
                        await freed.wait()
        except TimeoutError:
            raise InternalError(
                f"{where}: the upstream server is busy: {self.options.connections} calls hold "
                f"its connections and none came free within {self.options.wait_s} s "
                "(ProxyOptions.connections, wait_s)") from None

    def _reap_later(self) -> None:
        if self._reaper is None or self._reaper.done():
            self._reaper = asyncio.get_running_loop().create_task(self._reap())

    async def _reap(self) -> None:
        """Close the connections past the first once each has been idle for `idle_s`."""
        loop = asyncio.get_running_loop()
        while self._others:
            await asyncio.sleep(self.options.idle_s / 2)
            now = loop.time()
            for connection in list(self._others):
                if not connection.busy and now - connection.idle_since >= self.options.idle_s:
                    self._others.remove(connection)
                    await _close(connection)

    @property
    def connections(self) -> int:
        """How many connections are open (the first one included)."""
        return (self._main is not None) + len(self._others)

    async def close(self) -> None:
        if self._reaper is not None:
            self._reaper.cancel()
        others, self._others = self._others, []
        for connection in others:
            await _close(connection)
        if self._main is not None:
            await _close(self._main)


async def _close(connection: Connection) -> None:
    try:
        await connection.client.close()
    except Exception:  # a connection that cannot close cleanly is gone all the same
        log.debug("closing an upstream connection failed", exc_info=True)
