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
`app.lifespan`. Imports the layers below and the stdlib; uvicorn only in `run_http`/`serve_http`.
"""

from __future__ import annotations

import asyncio
import sys
from collections.abc import AsyncIterator, Awaitable, Callable, Generator, Iterable
from contextlib import AbstractAsyncContextManager, asynccontextmanager
from dataclasses import dataclass, field
from typing import Any

from mcpkit.errors import RPCError
from mcpkit.legacy.session_quota import SessionLimits
from mcpkit.protocol.codec import Message, decode
from mcpkit.protocol.http import (
    LEGACY,
    LOOPBACK_HOSTS,
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
from mcpkit.store.legacy.events import EventStore
from mcpkit.store.legacy.sessions import SessionStore
from mcpkit.transports.http_server.drain import drain_endpoints, stopping_answer
from mcpkit.transports.http_server.endpoint import Endpoint, Receive, Send, refuse
from mcpkit.transports.http_server.exchange import plain_response
from mcpkit.transports.http_server.health import Health, HealthPaths
from mcpkit.transports.http_server.limits import ListenerLimits
from mcpkit.transports.http_server.modern import ModernEndpoint
from mcpkit.transports.legacy.routes import legacy_routes
from mcpkit.transports.legacy.stores import shared_stores
from mcpkit.types.constants import SUPPORTED_VERSIONS

__all__ = [
    "HTTPApp",
    "HTTPOptions",
    "parse_address",
    "run_http",
    "serve_http",
]

Scope = dict[str, Any]


@dataclass(frozen=True, slots=True)
class HTTPOptions:
    """How the HTTP endpoint behaves; every field has a safe default."""

    path: str | None = None
    """The one path served (others get 404); None serves every path (when mounted)."""
    allowed_hosts: tuple[str, ...] | None = None
    """`Host` values accepted (see `HostPolicy`); None: loopback names only."""
    allowed_origins: tuple[str, ...] = ()
    """Browser origins accepted besides those on an allowed host (see `HostPolicy`)."""
    max_body_bytes: int | None = None
    """Largest POST body; None: the server's `options.max_message_bytes` (4 MiB)."""
    keepalive_s: float = 15.0
    """Seconds of silence after which an open SSE stream gets a `:` comment; 0 disables."""
    legacy: bool = True
    """Serve 2025-11-25 clients (initialize, sessions, the GET stream) on the same URL."""
    session_store: SessionStore[Any] | None = None
    """Where legacy sessions live; None: a `MemorySessionStore` in this process."""
    peer_timeout_s: float = 600.0
    """How long a legacy request waits for the client to answer a request sent to it."""
    event_store: EventStore | None = None
    """Where legacy SSE events are kept for `Last-Event-ID` resumption; None: a bounded
    `MemoryEventStore` in this process. (2026-07-28 streams have no resumption.)"""
    sse_retry_ms: int | None = None
    """Polling for legacy requests: one still running after `sse_poll_after_s` has its SSE
    connection closed after an event carrying this `retry` (ms); the client resumes with GET +
    `Last-Event-ID`, where the rest and the response arrive. None: connections stay open."""
    sse_poll_after_s: float = 1.0
    """How long a legacy stream keeps its connection in polling mode (`sse_retry_ms`)."""
    session_idle_s: float = 3600.0
    """A legacy session unused this long ends (the default store's idle expiry; `mcpkit run
    --session-idle`): abandoned sessions, which clients rarely DELETE, do not pile up."""
    sessions: SessionLimits = field(default_factory=SessionLimits)
    """How many legacy sessions, how fast, per client and in all (see docs/security.md)."""
    listener: ListenerLimits = field(default_factory=ListenerLimits)
    """The listener's limits on heads, slow clients and connections, applied by `run_http`
    (under another ASGI server, that server's settings apply)."""
    auth: Any = None
    """A `ProtectedResource` (`mcpkit.transports.http_server.auth`, both eras), or an `AuthProxy`
    (`mcpkit.auth.proxy`: sign-in at an upstream identity provider); None: open to all."""
    health: HealthPaths = field(default_factory=HealthPaths)
    """Paths of the probes (`/healthz`, `/readyz`), served to anyone."""

    def __post_init__(self) -> None:
        if self.sse_retry_ms is not None and (type(self.sse_retry_ms) is not int
                                              or self.sse_retry_ms < 0):
            raise ValueError(f"HTTPOptions.sse_retry_ms must be None or milliseconds >= 0, not "
                             f"{self.sse_retry_ms!r}")
        if not self.sse_poll_after_s >= 0:
            raise ValueError(f"HTTPOptions.sse_poll_after_s must be seconds >= 0, not "
                             f"{self.sse_poll_after_s!r}")
        if type(self.session_idle_s) not in (int, float) or not self.session_idle_s > 0:
            raise ValueError(f"HTTPOptions.session_idle_s must be seconds > 0, not "
                             f"{self.session_idle_s!r}")


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


# -- running it -----------------------------------------------------------------------------------


def parse_address(address: str) -> tuple[str, int, str]:
    """`[HOST:]PORT[/PATH]` -> (host, port, path); host defaults to 127.0.0.1, path to /mcp."""
    text = address.strip()
    path = "/mcp"
    slash = text.find("/")
    if slash >= 0:
        text, path = text[:slash], text[slash:]
    if text.startswith("["):
        end = text.find("]")
        host, port_text = text[1:end], text[end + 2:] if end >= 0 else ""
    elif ":" in text:
        host, _, port_text = text.rpartition(":")
    else:
        host, port_text = "", text
    if not port_text.isdigit() or not 0 <= int(port_text) <= 65535:
        raise ValueError(
            f"--http {address!r}: expected [HOST:]PORT[/PATH], e.g. 8000, 127.0.0.1:8000 or "
            "0.0.0.0:8000/mcp"
        )
    return host or "127.0.0.1", int(port_text), path


_ANSWER_S = 2.0
"""How long past the grace uvicorn waits for the answers to the requests the drain stopped."""


def _is_loopback(host: str) -> bool:
    return host in ("localhost", "::1") or host.startswith("127.")


def _protected_hosts(auth: Any, bound: str, hosts: tuple[str, ...]) -> tuple[str, ...]:
    """The Host allow-list of a protected server bound to `bound`: the host its `public_url`
    names besides `hosts`, never any host; without `public_url`, only on loopback, where its
    URL is the address it listens on."""
    public = auth.public_url
    if public is None:
        if not _is_loopback(bound):
            raise ValueError(
                f"a protected server bound to {bound} needs ProtectedResource.public_url, the "
                "URL clients reach it by (the audience its tokens must name); only on a "
                "loopback address is its URL the address it listens on")
        return hosts
    named = public.split("://", 1)[1].partition("/")[0]
    return hosts if named in hosts else (*hosts, named)


def run_http(
    server: Any,
    address: str = "127.0.0.1:8000/mcp",
    *,
    allowed_hosts: Iterable[str] = (),
    allowed_origins: Iterable[str] = (),
    announce: Callable[[str], None] | None = None,
    listener: ListenerLimits | None = None,
    sessions: SessionLimits | None = None,
    session_idle_s: float | None = None,
    auth: Any = None,
) -> None:
    """Serve `server` with uvicorn (one process, a loop of its own) until interrupted.

    Bound to loopback, the Host allow-list is the loopback names plus `allowed_hosts`; bound
    elsewhere, it is `allowed_hosts`, or any host (with a warning) when none is given.
    `listener`, `sessions` and `session_idle_s` replace those of `HTTPOptions`' defaults.

    `auth` (a `ProtectedResource`) protects it. Bound elsewhere than loopback, a protected
    server needs `public_url` (a `ValueError` before anything is bound, otherwise), and takes
    the host that URL names instead of any host; the URL's host is allowed wherever it is bound.
    """
    from mcpkit.transports.loop import freeze_startup_heap

    runner = _uvicorn(server, address, tuple(allowed_hosts), tuple(allowed_origins), announce,
                      {"listener": listener, "sessions": sessions,
                       "session_idle_s": session_idle_s, "auth": auth})
    freeze_startup_heap()
    runner.run()


async def serve_http(
    server: Any,
    address: str = "127.0.0.1:8000/mcp",
    *,
    allowed_hosts: Iterable[str] = (),
    allowed_origins: Iterable[str] = (),
    announce: Callable[[str], None] | None = None,
    listener: ListenerLimits | None = None,
    sessions: SessionLimits | None = None,
    session_idle_s: float | None = None,
    auth: Any = None,
) -> None:
    """`run_http` in the running event loop: serves until interrupted, or until the task
    awaiting it is cancelled, which shuts the server down as an interrupt does (drained for
    up to `ServerOptions.grace_s`) before the cancellation goes on."""
    runner = _uvicorn(server, address, tuple(allowed_hosts), tuple(allowed_origins), announce,
                      {"listener": listener, "sessions": sessions,
                       "session_idle_s": session_idle_s, "auth": auth})
    serving = asyncio.ensure_future(runner.serve())
    try:
        await asyncio.shield(serving)
    except asyncio.CancelledError:
        runner.should_exit = True
        await serving
        raise


def _uvicorn(server: Any, address: str, allowed_hosts: tuple[str, ...],
             allowed_origins: tuple[str, ...], announce: Callable[[str], None] | None,
             limits: dict[str, Any]) -> Any:
    """The uvicorn server `run_http` and `serve_http` run: it announces the URL it bound, and
    drains the app as shutdown begins (`HTTPApp.drain`), while uvicorn waits for connections
    to finish (its lifespan shutdown comes only after they have, too late for a listen stream
    that stays open, or for a request that needs its retryable answer)."""
    import uvicorn

    from mcpkit.transports.http_server.listener import uvicorn_settings

    host, port, path = parse_address(address)
    hosts = LOOPBACK_HOSTS + allowed_hosts if _is_loopback(host) else allowed_hosts
    auth = limits.get("auth")
    if auth is not None:
        hosts = _protected_hosts(auth, host, hosts)
    if not hosts:
        hosts = ("*",)
        print(f"mcpkit: warning: serving on {host} with any Host header accepted; name the "
              "public host with --allow-host to keep DNS-rebinding protection", file=sys.stderr)
    app = HTTPApp(server, HTTPOptions(path=path, allowed_hosts=hosts,
                                      allowed_origins=allowed_origins,
                                      **{k: v for k, v in limits.items() if v is not None}))
    say = announce or (lambda line: print(line, file=sys.stderr, flush=True))

    class _Uvicorn(uvicorn.Server):
        async def startup(self, sockets: Any = None) -> None:
            await super().startup(sockets)
            if self.servers and self.servers[0].sockets:
                bound = self.servers[0].sockets[0].getsockname()
                shown = f"[{bound[0]}]" if ":" in bound[0] else bound[0]
                say(f"mcpkit: serving {server.name} at http://{shown}:{bound[1]}{path} "
                    f"({', '.join(SUPPORTED_VERSIONS)})")

        async def shutdown(self, sockets: Any = None) -> None:
            # The drain runs beside uvicorn's own wait for the connections: it answers what
            # is still running when the grace ends, before uvicorn would cancel it (a 500).
            draining = asyncio.ensure_future(app.drain(grace))
            await super().shutdown(sockets)
            await draining

    grace = server.options.grace_s
    config = uvicorn.Config(
        app, host=host, port=port, lifespan="on", log_level="warning", access_log=False,
        server_header=False, timeout_graceful_shutdown=grace + _ANSWER_S,
        **uvicorn_settings(app.options.listener),
    )
    return _Uvicorn(config)
