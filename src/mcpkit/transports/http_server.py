"""Streamable HTTP for a `Server`: one plain ASGI application serving both eras on one URL.

Modern (2026-07-28) POSTs are served statelessly: nothing is kept between requests, so any
instance behind a round-robin balancer answers any request the same way. Each POST is checked
in a fixed order — Host/Origin (403), size (413), content type (415), JSON (400/-32700), era,
Accept (406), then the mirrored headers against the body (400/-32020) — before the server sees
it, and its response is JSON or a request-scoped SSE stream (see `Exchange`). Legacy
(2025-11-25) traffic, recognised by the rule in `mcpkit.protocol.http.classify_era`, goes to
`LegacyEndpoint`.

It is raw ASGI with no framework underneath, so it runs under any ASGI server (uvicorn,
hypercorn, granian) and mounts in Starlette or FastAPI. Imports the layers below and the
standard library; uvicorn only in `run_http`.
"""

from __future__ import annotations

import contextlib
import logging
import sys
from collections.abc import Awaitable, Callable, Iterable
from dataclasses import dataclass
from typing import Any, Final

from mcpkit.errors import (
    HeaderMismatchError,
    InternalError,
    InvalidRequestError,
    MethodNotFoundError,
    RPCError,
)
from mcpkit.protocol.codec import Message, Notification, Request, decode, encode, error_message
from mcpkit.protocol.framing import sse_event
from mcpkit.protocol.http import (
    LOOPBACK_HOSTS,
    MODERN,
    HostPolicy,
    RequestHeaders,
    accepts,
    check_request_headers,
    classify_era,
    http_status,
    is_json_content,
    read_headers,
)
from mcpkit.store.events import EventStore
from mcpkit.store.sessions import MemorySessionStore, SessionStore
from mcpkit.transports.http_exchange import Exchange, Watchlist, plain_response
from mcpkit.transports.http_sessions import LegacyEndpoint
from mcpkit.types.constants import MODERN_VERSION, SUPPORTED_VERSIONS, Method
from mcpkit.types.methods import METHODS

__all__ = ["HTTPApp", "HTTPOptions", "parse_address", "run_http"]

log = logging.getLogger("mcpkit.transport")

Scope = dict[str, Any]
Receive = Callable[[], Awaitable[dict[str, Any]]]
Send = Callable[[dict[str, Any]], Awaitable[None]]

_JSON_TYPE: Final = (b"content-type", b"application/json")
_ALLOW_MODERN: Final = [(b"allow", b"POST")]
_ALLOW_LEGACY: Final = [(b"allow", b"GET, POST, DELETE")]
_END: Final = {"type": "http.response.body", "body": b"", "more_body": False}
_LEGACY_ONLY: Final = frozenset(
    name for name, m in METHODS.items() if m.is_request and m.by_client and not m.modern)
"""Requests the modern era removed: unknown (-32601) on a modern request."""


class _Sent:
    """A `send` that remembers how far the response got, so that a failure can still be
    answered in a form the client can read (a JSON body, or the stream's last event)."""

    __slots__ = ("ended", "send", "started", "streaming")

    def __init__(self, send: Send) -> None:
        self.send = send
        self.started = False
        self.streaming = False
        self.ended = False

    async def __call__(self, message: dict[str, Any]) -> None:
        if message["type"] == "http.response.start":
            self.started = True
            self.streaming = any(name == b"content-type" and value == b"text/event-stream"
                                 for name, value in message.get("headers", ()))
        elif message["type"] == "http.response.body" and not message.get("more_body"):
            self.ended = True
        await self.send(message)


async def _guarded(work: Awaitable[None], sent: _Sent, message: Message | None, what: str
                   ) -> None:
    """Run one legacy exchange; an unexpected exception ends as an answer the client can read,
    never as the ASGI server's bare 500 (and its traceback in a log line per retry).

    Every step a peer's message reaches checks what it reads, and handlers' exceptions are
    answered where they are served; this is the edge for what still escapes (a session or
    event store that fails, a bug). Logged once with its traceback, it becomes a -32603 error
    for a request (HTTP 200, like every legacy request's error, or the last event of its
    stream), 202 for a notification or a response (no reply is due for either), and for GET
    and DELETE, which have no message to answer, a 500 carrying a JSON-RPC error. The session
    stays: nothing of it is dropped for one failed exchange.
    """
    try:
        await work
    except Exception:
        if isinstance(message, Request):  # the id bounded: a peer may send a huge one
            what = f"{what} {message.method} (id {repr(message.id)[:64]})"
        elif isinstance(message, Notification):
            what = f"{what} {message.method}"
        elif message is not None:
            what = f"{what} a response"
        log.exception("internal error while handling %s", what)
        if sent.ended:
            return
        reply = None
        if type(message) is Request:
            reply = error_message(message.id, InternalError(
                f"Internal error while serving {message.method}").to_error())
        with contextlib.suppress(Exception):  # the client may be gone already
            if not sent.started:
                if message is None:
                    await plain_response(sent, 500, error_message(None, InternalError(
                        f"Internal error while handling {what}").to_error()))
                else:
                    await plain_response(sent, 200 if reply is not None else 202, reply)
            elif sent.streaming and reply is not None:
                await sent({"type": "http.response.body", "body": sse_event(encode(reply)),
                            "more_body": False})
            else:
                await sent(_END)


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

    def __post_init__(self) -> None:
        if self.sse_retry_ms is not None and (
                type(self.sse_retry_ms) is not int or self.sse_retry_ms < 0):
            raise ValueError(f"HTTPOptions.sse_retry_ms must be None or milliseconds >= 0, not "
                             f"{self.sse_retry_ms!r}")
        if not self.sse_poll_after_s >= 0:
            raise ValueError(f"HTTPOptions.sse_poll_after_s must be seconds >= 0, not "
                             f"{self.sse_poll_after_s!r}")


class HTTPApp:
    """The ASGI application for one `Server`; create it with `server.asgi(...)`."""

    def __init__(self, server: Any, options: HTTPOptions | None = None, **settings: Any) -> None:
        if options is None:
            options = HTTPOptions(**settings)
        elif settings:
            raise TypeError("pass either an HTTPOptions or keyword settings, not both")
        self.server = server
        self.options = options
        # Behind a balancer a retry may reach another instance: a per-process key breaks it.
        server.sealer.warn_if_ephemeral("HTTP")
        path = options.path
        self._path = path.rstrip("/") or "/" if path is not None else None
        self._policy = HostPolicy(options.allowed_hosts, options.allowed_origins)
        self._max_body = options.max_body_bytes or server.options.max_message_bytes
        self._keepalive = options.keepalive_s
        self._legacy = (
            # `is None`, not `or`: an empty store has len() 0 and is falsy, yet it is the one
            # configured.
            LegacyEndpoint(server, MemorySessionStore() if options.session_store is None
                           else options.session_store, options)
            if options.legacy else None
        )
        self._watchlist = Watchlist()

    # -- ASGI ---------------------------------------------------------------------------------

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        kind = scope["type"]
        if kind != "http":
            if kind == "lifespan":
                await self._lifespan(receive, send)
            elif kind == "websocket":
                await send({"type": "websocket.close", "code": 1003})
            return
        if self._path is not None:
            path = scope["path"]
            if path != self._path and path.rstrip("/") != self._path:
                await plain_response(send, 404)
                return
        headers = read_headers(scope["headers"])
        refusal = self._policy.check(headers.host, headers.origin)
        if refusal is not None:
            await plain_response(send, 403, error_message(
                None, InvalidRequestError(f"Forbidden: {refusal}").to_error()))
            return
        method = scope["method"]
        if method == "POST":
            await self._post(headers, receive, send)
            return
        legacy = self._legacy
        if legacy is not None and headers.session_id is not None:
            if method == "GET":
                sent = _Sent(send)
                await _guarded(legacy.get(headers, receive, sent, scope["headers"]), sent, None,
                               "a 2025-11-25 session GET")
                return
            if method == "DELETE":
                sent = _Sent(send)
                await _guarded(legacy.delete(headers, sent), sent, None,
                               "a 2025-11-25 session DELETE")
                return
        await plain_response(send, 405, error_message(None, InvalidRequestError(
            f"Method Not Allowed: {method} on the MCP endpoint; {MODERN_VERSION} clients POST "
            "every message" + (" (GET and DELETE need the Mcp-Session-Id of a 2025-11-25 "
                               "session)" if legacy is not None else "")).to_error()),
            _ALLOW_LEGACY if legacy is not None else _ALLOW_MODERN)

    async def _lifespan(self, receive: Receive, send: Send) -> None:
        while True:
            message = await receive()
            if message["type"] == "lifespan.startup":
                await send({"type": "lifespan.startup.complete"})
            elif message["type"] == "lifespan.shutdown":
                self.close()
                await send({"type": "lifespan.shutdown.complete"})
                return

    def close(self) -> None:
        """End open streams gracefully (listen streams get their final result, legacy session
        streams close; a legacy request's stream ends with its request); call it when the
        server shuts down, before waiting for connections to drain."""
        self.server.broker.close()
        if self._legacy is not None:
            self._legacy.close()

    # -- POST -----------------------------------------------------------------------------------

    async def _post(self, headers: RequestHeaders, receive: Receive, send: Send) -> None:
        limit = self._max_body
        declared = headers.content_length
        if declared is not None:
            try:
                size = int(declared)
            except ValueError:
                # Shown as text, like the other headers a refusal names (not as a bytes repr).
                shown = declared.decode("latin-1")
                await plain_response(send, 400, error_message(None, InvalidRequestError(
                    f"Bad Request: Content-Length {shown!r} is not a number").to_error()))
                return
            if size > limit:
                await _too_large(send, size, limit)
                return
        if not is_json_content(headers.content_type):
            shown = (headers.content_type or b"").decode("latin-1")
            await plain_response(send, 415, error_message(None, InvalidRequestError(
                f"Unsupported Media Type {shown!r}: POST one JSON-RPC message as "
                "application/json").to_error()))
            return
        message = await receive()
        if message["type"] != "http.request":
            return  # the client left before any of the body came: there is no one to answer
        body = message.get("body", b"")
        if len(body) > limit:
            # Checked before waiting for more: the next piece may be a long time coming.
            await _too_large(send, len(body), limit)
            return
        if message.get("more_body"):
            chunks = [body]
            size = len(body)
            while message.get("more_body"):
                message = await receive()
                if message["type"] != "http.request":
                    return  # the client left mid-body
                chunk = message.get("body", b"")
                size += len(chunk)
                if size > limit:
                    await _too_large(send, size, limit)
                    return
                chunks.append(chunk)
            body = b"".join(chunks)
        try:
            decoded = decode(body)
        except RPCError as exc:
            await plain_response(send, http_status(exc.code), error_message(
                getattr(exc, "request_id", None), exc.to_error()))
            return
        if self._legacy is not None:
            era = classify_era(headers.session_id, headers.version, decoded)
            if era != MODERN:
                sent = _Sent(send)
                await _guarded(self._legacy.post(era, headers, decoded, receive, sent), sent,
                               decoded, "a 2025-11-25 POST of")
                return
        if type(decoded) is Request:
            # The modern request path, inline: it is the one every request takes.
            json_ok, sse_ok = accepts(headers.accept)
            refusal = self._refusal(headers, decoded, json_ok, sse_ok)
            if refusal is not None:
                status, error = refusal
                await plain_response(send, status, error_message(decoded.id, error.to_error()))
                return
            exchange = Exchange(send, receive, self._keepalive)
            response = await exchange.run(self.server.handle(
                decoded, notify=exchange.notify if sse_ok else None), self._watchlist)
            if response is None:
                await exchange.abandon()
                return
            error_body = response.get("error")
            status = http_status(error_body["code"]) if error_body is not None else 200
            if exchange.streaming or not json_ok:
                if not exchange.streaming:  # the client accepts only a stream
                    await exchange.start_stream()
                await exchange.finish(response, status)
                return
            body = encode(response)
            await send({"type": "http.response.start", "status": status,
                        "headers": [_JSON_TYPE, (b"content-length", b"%d" % len(body))]})
            await send({"type": "http.response.body", "body": body})
        elif type(decoded) is Notification:
            await plain_response(send, 202)
        else:
            await plain_response(send, 400, error_message(None, InvalidRequestError(
                f"Invalid request: a {MODERN_VERSION} client never sends JSON-RPC responses "
                "(a 2025-11-25 client sends them with its Mcp-Session-Id)").to_error()))

    def _refusal(self, headers: RequestHeaders, request: Request, json_ok: bool, sse_ok: bool
                 ) -> tuple[int, RPCError] | None:
        """Why a modern request may not reach the server (status, error), or None."""
        method = request.method
        if not json_ok and not sse_ok:
            return 406, InvalidRequestError(
                f"Not Acceptable: {method} answers application/json or text/event-stream; "
                "send Accept: application/json, text/event-stream")
        if method in _LEGACY_ONLY:
            return 404, MethodNotFoundError(
                f"Method not found: {method} belongs to the initialize era; this request "
                f"declared {MODERN_VERSION} (supported: {', '.join(SUPPORTED_VERSIONS)}; a "
                "2025-11-25 client sends initialize without _meta)", {"method": method})
        try:
            check_request_headers(headers, request, self._tool_params(request))
        except HeaderMismatchError as exc:
            return 400, exc
        if method == Method.SUBSCRIPTIONS_LISTEN and not sse_ok:
            return 406, InvalidRequestError(
                "Not Acceptable: subscriptions/listen answers with a text/event-stream; add it "
                "to Accept")
        return None

    def _tool_params(self, request: Request) -> dict[str, tuple[str, ...]] | None:
        """The `x-mcp-header` table of the tool a `tools/call` names, as the tool was
        registered with it (`Tool.header_params`)."""
        if request.method != Method.TOOLS_CALL or request.params is None:
            return None
        name = request.params.get("name")
        if type(name) is not str:
            return None
        tool = self.server.tools.get(name)
        return None if tool is None else tool.header_params  # unknown: the method reports it


async def _too_large(send: Send, size: int, limit: int) -> None:
    await plain_response(send, 413, error_message(None, InvalidRequestError(
        f"Payload Too Large: the body has {size} bytes or more; the limit is {limit} bytes "
        "(HTTPOptions.max_body_bytes)").to_error()), [(b"connection", b"close")])


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


def _is_loopback(host: str) -> bool:
    return host in ("localhost", "::1") or host.startswith("127.")


def run_http(
    server: Any,
    address: str = "127.0.0.1:8000/mcp",
    *,
    allowed_hosts: Iterable[str] = (),
    allowed_origins: Iterable[str] = (),
    announce: Callable[[str], None] | None = None,
) -> None:
    """Serve `server` with uvicorn (one process) until interrupted.

    Bound to loopback, the Host allow-list is the loopback names plus `allowed_hosts`; bound
    elsewhere, it is `allowed_hosts`, or any host (with a warning) when none is given.
    """
    import uvicorn

    from mcpkit.transports.loop import freeze_startup_heap

    host, port, path = parse_address(address)
    hosts = tuple(allowed_hosts)
    if _is_loopback(host):
        hosts = LOOPBACK_HOSTS + hosts
    elif not hosts:
        hosts = ("*",)
        print(f"mcpkit: warning: serving on {host} with any Host header accepted; name the "
              "public host with --allow-host to keep DNS-rebinding protection", file=sys.stderr)
    app = HTTPApp(server, HTTPOptions(path=path, allowed_hosts=hosts,
                                      allowed_origins=tuple(allowed_origins)))
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
            app.close()
            await super().shutdown(sockets)

    config = uvicorn.Config(
        app, host=host, port=port, lifespan="on", log_level="warning", access_log=False,
        server_header=False, timeout_graceful_shutdown=5,
    )
    freeze_startup_heap()
    _Uvicorn(config).run()
