"""`ProxyServer`: a server whose tools, resources and prompts are another server's.

`Server.proxy(connector)` (or `ProxyServer(connector)`) serves the upstream server the
connector reaches (a stdio command, an HTTP URL, a server in this process; 2026-07-28 or
2025-11-25) as a dual-era mcpkit server on any transport. Starting it (`async with proxy`,
or any of `run`, `serve_stdio`, `serve_http`, `asgi`, which start it themselves) connects
upstream, registers what it lists (`mcpkit.proxy.catalogue`) and follows its changes; calls go
through `mcpkit.proxy.bridge`, their held rounds kept in `HeldCalls` and relayed between
replicas by `mcpkit.proxy.relay`. Stopping it cancels what it holds and closes the upstream.

The proxy never passes its callers' credentials upstream: what it sends there (headers, a
sign-in) is the connector's, from configuration.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import AsyncIterator, Awaitable, Callable, MutableMapping
from typing import Any

from mcpkit._version import __version__
from mcpkit.app import Server
from mcpkit.client.transport import Connector
from mcpkit.errors import ProtocolViolation
from mcpkit.proxy import checked
from mcpkit.proxy.bridge import Bridge
from mcpkit.proxy.catalogue import Catalogue
from mcpkit.proxy.held import HeldCalls
from mcpkit.proxy.options import ProxyOptions
from mcpkit.proxy.relay import Relay
from mcpkit.proxy.rounds import advance
from mcpkit.proxy.upstream import Upstream
from mcpkit.server.broker import share_broker
from mcpkit.server.context import Context
from mcpkit.server.options import ServerOptions
from mcpkit.server.subscriptions import Broker

__all__ = ["ProxyServer"]

log = logging.getLogger("mcpkit.proxy")

Scope = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[MutableMapping[str, Any]]]
Send = Callable[[MutableMapping[str, Any]], Awaitable[None]]


class ProxyServer(Server):
    """A server serving an upstream server's tools, resources and prompts (module docstring).

    `name` serves under a name of its own; without it, under the upstream's `serverInfo` and
    instructions (`ProxyOptions.mirror_info`). `server_options` are the server's own
    (`ServerOptions`: page size, state keys and store, `state_ttl`...), `options` the proxy's.
    """

    def __init__(
        self,
        connector: Connector,
        *,
        name: str | None = None,
        version: str | None = None,
        options: ProxyOptions | None = None,
        server_options: ServerOptions | None = None,
        broker: Broker | None = None,
    ) -> None:
        super().__init__(name or "mcpkit-proxy", version or __version__,
                         options=server_options, broker=broker)
        self.proxy_options = options or ProxyOptions()
        self._named = name is not None
        self.upstream = Upstream(connector, self.proxy_options)
        self.held = HeldCalls(self.proxy_options.hold_s)
        """The upstream calls this process holds between their callers' rounds."""
        self.relay = Relay(self, self.held, advance, self.proxy_options.relay_wait_s)
        self.bridge = Bridge(self)
        self.catalogue = Catalogue(self)
        self.listen_parts.append(self.catalogue.listen_part())
        self._following: asyncio.Task[None] | None = None
        self._entered = 0

    # -- starting and stopping -----------------------------------------------------------------

    async def start(self) -> None:
        """Connect upstream, register what it lists and follow its changes (once; entering
        the proxy again only counts)."""
        self._entered += 1
        if self._entered > 1:
            return
        try:
            share_broker(self)  # replicas sharing a store relay retries through its broker
            client = await self.upstream.start()
            await client.discover()  # capabilities, server info, instructions (either era)
            if self.proxy_options.mirror_info and not self._named:
                self._adopt(client)
            await self.catalogue.sync(client)
            if client.server_capabilities and "resources" in client.server_capabilities:
                self.set_resource_fallback(self._read_any)
            self.relay.start()
            self._following = asyncio.get_running_loop().create_task(self.catalogue.follow())
        except BaseException:
            self._entered = 0
            await self._stop()
            raise

    async def _read_any(self, uri: str, ctx: Context) -> Any:
        return await self.catalogue.read(ctx, uri)

    def _adopt(self, client: Any) -> None:
        """Serve under the upstream's name, version, title and instructions, checked."""
        try:
            info = checked.implementation(client.server_info, "the upstream's serverInfo")
        except ProtocolViolation as exc:
            log.warning("serving under the proxy's own name: %s", exc)
            return
        self.info.clear()
        self.info.update(info)
        self.name, self.version = info["name"], info["version"]
        if type(client.instructions) is str:
            self.instructions = client.instructions

    async def aclose(self) -> None:
        """Stop: cancel the held calls, stop following, close the upstream connections."""
        if self._entered == 0:
            return
        self._entered -= 1
        if self._entered == 0:
            await self._stop()

    async def _stop(self) -> None:
        following, self._following = self._following, None
        if following is not None:
            following.cancel()
            with contextlib.suppress(BaseException):
                await following
        self.held.close()
        await self.relay.close()
        await self.upstream.close()

    async def __aenter__(self) -> ProxyServer:
        await self.start()
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.aclose()

    # -- serving (each starts the proxy first) ---------------------------------------------------

    def run(self, http: str | int | None = None, **settings: Any) -> None:
        """`Server.run`, the proxy started in its event loop first."""
        from mcpkit.transports.loop import run

        if http is None:
            run(self.serve_stdio())
        else:
            run(self.serve_http(http, **settings))

    async def serve_stdio(self) -> None:
        async with self:
            await super().serve_stdio()

    async def serve_http(self, address: str | int = "127.0.0.1:8000/mcp",
                         **settings: Any) -> None:
        async with self:
            await super().serve_http(address, **settings)

    def asgi(self, options: Any = None, **settings: Any) -> Any:
        """`Server.asgi`, wrapped so the ASGI lifespan starts and stops the proxy."""
        return _Lifespan(super().asgi(options, **settings), self)


class _Lifespan:
    """An HTTP app whose ASGI lifespan also starts and stops its proxy; everything else is the
    app's (its attributes too)."""

    def __init__(self, app: Any, proxy: ProxyServer) -> None:
        self.app = app
        self.proxy = proxy

    def __getattr__(self, name: str) -> Any:
        return getattr(self.app, name)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "lifespan":
            await self.app(scope, receive, send)
            return
        while True:
            message = await receive()
            if message["type"] == "lifespan.startup":
                try:
                    await self.proxy.start()
                except Exception as exc:
                    await send({"type": "lifespan.startup.failed",
                                "message": f"the proxy could not start: {exc}"})
                    return
                self.app.start()
                await send({"type": "lifespan.startup.complete"})
            elif message["type"] == "lifespan.shutdown":
                await self.app.drain(0)
                await self.proxy.aclose()
                await send({"type": "lifespan.shutdown.complete"})
                return

    @contextlib.asynccontextmanager
    async def lifespan(self, app: object = None) -> AsyncIterator[None]:
        """For an app this one is mounted in: `Starlette(..., lifespan=mcp.lifespan)`."""
        async with self.proxy:
            try:
                yield
            finally:
                await self.app.aclose()
