"""Streamable HTTP for a `Server`: one plain ASGI application serving both eras on one URL.

`HTTPApp` is the ASGI glue. It checks what every request passes whatever its era, in a fixed
order: a `Host` that names no host (400, before anything else), the Protected Resource Metadata
of a protected server (after the Host/Origin check), path (404; health probes,
`mcpkit.transports.http_server.health`, are answered there, before the Host/Origin check),
Host/Origin (403), the token (401/403), for a POST its size (413), type (415) and JSON (400).
The pure `mcpkit.protocol.http.route` then names the route, and the one `Endpoint` its table
holds for it serves the request: `ModernEndpoint` (2026-07-28, stateless) or the legacy
sessions (`mcpkit.transports.legacy.routes`); that lookup is the app's one decision about eras.
Refusals come from `mcpkit.protocol.http_refusals`. Raw ASGI: it runs under any ASGI server,
mounts in Starlette or FastAPI and needs no lifespan; shutting down is `close()` or
`app.lifespan`. What it is told is `HTTPOptions` (`options`); running it under uvicorn is
`running`'s. Imports the layers below and the stdlib.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Awaitable, Generator
from contextlib import AbstractAsyncContextManager, asynccontextmanager
from typing import Any

from mcpkit.errors import RPCError
from mcpkit.protocol.codec import Message, decode
from mcpkit.protocol.http import (
    LEGACY,
    MODERN,
    SESSION,
    HostPolicy,
    RequestHeaders,
    Status,
    classify_era,
    is_json_content,
    read_headers,
    route,
)
from mcpkit.protocol.http_refusals import (
    Refusal,
    bad_content_length,
    forbidden,
    too_large,
    undecodable,
    unsupported_media,
)
from mcpkit.transports.http_server.drain import drain_endpoints, stopping_answer
from mcpkit.transports.http_server.endpoint import Endpoint, Receive, Send, refuse
from mcpkit.transports.http_server.exchange import plain_response
from mcpkit.transports.http_server.health import Health
from mcpkit.transports.http_server.modern import ModernEndpoint
from mcpkit.transports.http_server.options import HTTPOptions
from mcpkit.transports.legacy.routes import legacy_routes
from mcpkit.transports.legacy.stores import shared_stores

__all__ = [
    "HTTPApp",
    "HTTPOptions",
]
"""`HTTPOptions` is `mcpkit.transports.http_server.options`', named here too: the app takes it.
Running the app under uvicorn (`run_http`, `serve_http`, `parse_address`) is
`mcpkit.transports.http_server.running`'."""

Scope = dict[str, Any]


class HTTPApp:
    """The ASGI application for one `Server`; create it with `server.asgi(...)`."""

    def __init__(self, server: Any, options: HTTPOptions | None = None, **settings: Any) -> None:
        if options is None:
            options = HTTPOptions(**settings)
        elif settings:
            raise TypeError("pass either an HTTPOptions or keyword settings, not both")
        self.server = server
        self.options = options
        path = options.path
        self._path = path.rstrip("/") or "/" if path is not None else None
        self._policy = HostPolicy(options.allowed_hosts, options.allowed_origins)
        self._max_body = options.max_body_bytes or server.options.max_message_bytes
        modern = ModernEndpoint(server, options.keepalive_s, options.legacy)
        self._routes: dict[str, Endpoint] = {MODERN: modern, LEGACY: modern, SESSION: modern}
        """Route (`mcpkit.protocol.http.route`) -> the endpoint serving it: the one place an
        era is looked up. Without 2025-11-25 sessions, the modern endpoint serves every route."""
        options = self.options = shared_stores(server, options)  # a shared store URL's
        if options.legacy:  # configuration: whether 2025-11-25 clients are served at all
            self._routes.update(legacy_routes(server, options))
        self._endpoints = tuple(dict.fromkeys(self._routes.values()))
        self._health = Health(server, options.health, self._endpoints, lambda: self._draining)
        self._closed = False
        self._draining = False
        self._drained: asyncio.Future[None] | None = None
        self._auth = None
        self._proxy: Any = None
        """An authorization proxy's endpoints (`mcpkit.transports.auth_proxy.routes`), when the
        server signs users in at an upstream identity provider."""
        auth = options.auth
        if getattr(auth, "upstream", None) is not None:  # an AuthProxy
            from mcpkit.transports.auth_proxy.routes import ProxyRoutes
            self._proxy = ProxyRoutes(server, auth, self._policy)
            auth = self._proxy.resource
        if auth is not None:  # loaded only for a protected server
            from mcpkit.transports.http_server.auth import AuthGate
            self._auth = AuthGate(server, auth, self._path, self._policy)

    @property
    def closed(self) -> bool:
        """Whether `close()` has run: the server is shutting down."""
        return self._closed

    # -- ASGI ---------------------------------------------------------------------------------

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        kind = scope["type"]
        if kind != "http":
            if kind == "lifespan":
                await self._lifespan(receive, send)
            elif kind == "websocket":
                await send({"type": "websocket.close", "code": 1003})
            return
        headers = read_headers(scope["headers"])
        refusal = self._policy.check(headers.host, headers.origin)
        if refusal is not None and refusal.status == Status.BAD_REQUEST:
            await refuse(send, forbidden(refusal))  # a Host naming no host, or two: nothing
            return  # after this may act on a value whose meaning is a guess (RFC 9112 §3.2)
        if self._proxy is not None and self._proxy.serves(scope):  # its own Host and CSRF rules
            await self._proxy.serve(scope, receive, send)
            return
        auth = self._auth
        if auth is not None and auth.is_metadata(scope):  # public, asked before any token
            if refusal is not None:
                await refuse(send, forbidden(refusal))
            else:
                await auth.metadata(scope, send)
            return
        if self._path is not None:
            path = scope["path"]
            if (path != self._path or scope.get("root_path")) and (
                    path := _mounted_path(scope)) != self._path and path.rstrip("/") != self._path:
                if self._health.serves(scope):  # not MCP: no Host, Origin or token check
                    return await self._health.serve(scope, send)
                await plain_response(send, Status.NOT_FOUND)
                return
        elif self._health.serves(scope):  # mounted: every path is the app's, probes' too
            return await self._health.serve(scope, send)
        if refusal is not None:
            await refuse(send, forbidden(refusal))
            return
        if auth is not None and not await auth.authenticate(scope, send):
            return
        method = scope["method"]
        message = None
        if method == "POST":
            early = self._before_body(headers)
            if early is not None:
                await refuse(send, early)
                return
            first = await receive()
            if first["type"] != "http.request":
                return  # the client left before any of the body came: there is no one to answer
            body = first.get("body", b"")
            if first.get("more_body") or len(body) > self._max_body:
                message = await self._read_rest(first, receive, send)
                if message is None:
                    return
            else:  # the whole body in one piece, as almost every POST comes: no coroutine more
                try:
                    message = decode(body)
                except RPCError as exc:
                    await refuse(send, undecodable(exc))
                    return
        if auth is not None and message is not None and await auth.refused(scope, message, send):
            return
        if self._draining:
            await stopping_answer(send, message)
            return
        chosen = (classify_era(headers.session_id, headers.version, message)  # `route`'s POST
                  if message is not None else route(method, headers.session_id, headers.version,
                                                    message))
        await self._routes[chosen].serve(scope, headers, message, receive, send)

    async def _lifespan(self, receive: Receive, send: Send) -> None:
        """The ASGI lifespan: the server's own (`Server(lifespan=...)`) is entered at startup
        (a failure there fails the startup, with its message) and exited at shutdown, once
        what was left of the serving stopped."""
        held = False
        try:
            while True:
                message = await receive()
                if message["type"] == "lifespan.startup":
                    try:
                        await self.server.lifespan_state.acquire()
                    except Exception as exc:
                        await send({"type": "lifespan.startup.failed",
                                    "message": f"{self.server.name}: its lifespan failed to "
                                               f"start: {type(exc).__name__}: {exc}"})
                        return
                    held = True
                    self.start()
                    await send({"type": "lifespan.startup.complete"})
                elif message["type"] == "lifespan.shutdown":
                    # The ASGI server has stopped taking requests: what is left stops now
                    # (under `run_http` the drain with its grace has run already; this finds
                    # it done).
                    await self.drain(0)
                    if held:
                        held = False
                        await self.server.lifespan_state.release()
                    await send({"type": "lifespan.shutdown.complete"})
                    return
        except BaseException as exc:
            if held:
                await self.server.lifespan_state.release(exc)
            raise

    # -- shutting down -------------------------------------------------------------------------

    def close(self) -> Awaitable[None]:
        """End open streams gracefully (listen streams get their final result, legacy session
        streams close; a legacy request's stream ends with its request); call it when the
        server shuts down, before waiting for connections to drain. Safe to call again.

        The work is done before it returns, so it serves plain code (`app.close()`, a signal
        handler) and async code alike: what it returns may be awaited, as `await app.close()`
        in a Starlette or FastAPI lifespan, the way `mcpkit.Client` is closed."""
        if not self._closed:
            self._closed = True
            for endpoint in self._endpoints:
                endpoint.close()
        return _Done()

    async def aclose(self) -> None:
        """`close()` as a coroutine, the name `contextlib.aclosing` and httpx use."""
        await self.close()

    def start(self) -> None:
        """The server starts serving (ASGI lifespan startup; `run_http` at start): what
        extensions run beside it start now (`Server.start_services`), so tasks another process
        left are taken up even before a task request reaches this one."""
        self.server.start_services()

    async def drain(self, grace_s: float | None = None) -> None:
        """Stop the way a deploy wants (`mcpkit.transports.http_server.drain`): streams closed (as
        `close`), requests arriving from now on answered 503 with Retry-After, the server's
        tasks handed back or given the grace period, running requests given it too and then
        answered with a retryable error. `grace_s` defaults to `ServerOptions.grace_s`. Call
        it once the listener stopped accepting (`run_http` does on SIGTERM); it returns when
        nothing of the server runs any more; a second call waits for the first."""
        if self._drained is None:
            grace = self.server.options.grace_s if grace_s is None else grace_s
            self._draining = True
            self.close()
            self._drained = asyncio.ensure_future(
                drain_endpoints(self.server, self._endpoints, grace))
        await asyncio.shield(self._drained)

    async def __aenter__(self) -> HTTPApp:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.aclose()

    def lifespan(self, app: object = None) -> AbstractAsyncContextManager[None]:
        """A lifespan holding the server's (`Server(lifespan=...)`) and closing this app on
        shutdown, for the one it is mounted in: `Starlette(routes=..., lifespan=mcp.lifespan)`,
        or `async with mcp.lifespan(app): yield` in a lifespan of its own. `app` is not used."""
        return self._lifespan_context()

    @asynccontextmanager
    async def _lifespan_context(self) -> AsyncIterator[None]:
        async with self.server.running():
            try:
                yield
            finally:
                await self.aclose()

    # -- a POST's body ----------------------------------------------------------------------------

    def _before_body(self, headers: RequestHeaders) -> Refusal | None:
        """Why a POST is refused before its body is read: a Content-Length that is no number or
        over the limit, a content type that is not JSON."""
        declared = headers.content_length
        if declared is not None:
            try:
                size = int(declared)
            except ValueError:
                return bad_content_length(declared)
            if size > self._max_body:
                return too_large(size, self._max_body)
        if not is_json_content(headers.content_type):
            return unsupported_media(headers.content_type)
        return None

    async def _read_rest(self, first: dict[str, Any], receive: Receive, send: Send
                         ) -> Message | None:
        """The message of a body over the limit or in several pieces, or None once it is
        refused (or the client left before all of it came)."""
        limit = self._max_body
        body = first.get("body", b"")
        if len(body) > limit:
            # Checked before waiting for more: the next piece may be a long time coming.
            await refuse(send, too_large(len(body), limit))
            return None
        chunks = [body]
        size = len(body)
        message = first
        while message.get("more_body"):
            message = await receive()
            if message["type"] != "http.request":
                return None  # the client left mid-body
            chunk = message.get("body", b"")
            size += len(chunk)
            if size > limit:
                await refuse(send, too_large(size, limit))
                return None
            chunks.append(chunk)
        try:
            return decode(b"".join(chunks))
        except RPCError as exc:
            await refuse(send, undecodable(exc))
            return None


class _Done:
    """What `HTTPApp.close()` returns: complete when awaited, no warning when it is not."""
    __slots__ = ()

    def __await__(self) -> Generator[Any, None, None]:
        yield from ()


def _mounted_path(scope: Scope) -> str:
    """The request's path below where the app is mounted: ASGI's `path` includes `root_path`
    (Starlette's `Mount` sets it, as does an ASGI server's `--root-path`), and `path=` names
    the path inside the app, so `Mount("/mcp", server.asgi(path="/"))` serves `/mcp/`."""
    path: str = scope["path"]
    root: str = scope.get("root_path", "")
    if not root or not path.startswith(root):
        return path
    below = path[len(root):]
    return below or "/" if below[:1] in ("", "/") else path
