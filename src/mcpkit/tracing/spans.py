"""OpenTelemetry spans for MCP requests: a SERVER span per request served, a CLIENT span per
request sent, both following `mcpkit.tracing.conventions`.

Nothing here imports OpenTelemetry up front, and nothing happens without a tracer provider:
`active()` is the one check each request makes, and while no provider is set it costs a
dictionary lookup (`opentelemetry.trace` was never imported, so no provider can have been set)
or a read of the API's global provider (it was, but nothing has set it): about 0.08 and 0.18 µs. Once a real provider is seen its tracer is kept, since OpenTelemetry's global
provider is set once per process; `use_tracer_provider` picks one explicitly instead (tests, an
application that keeps its provider out of the global). The API modules are imported once, on
the first request that finds a provider.

A server span's parent is the trace context in the request's `_meta` (META-10), else the span
current when the request arrived (an ASGI instrumentation's, say), else the HTTP request's
`traceparent`/`tracestate`/`baggage` headers, which the HTTP endpoints hand down through
`arrived`. The span is current while the handler runs, so a client call made inside a tool is
its child. A client span's parent is the trace context already in the request's `_meta` (an
explicit `ClientOptions.trace_context`), else the current context; the span's own context is
what the request carries in `_meta`, replacing the keys it found there.

May import `mcpkit.types`, `mcpkit.errors`, `mcpkit.protocol` and `mcpkit._version`.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Awaitable, Callable, Mapping
from contextvars import ContextVar, Token
from typing import Any, TypeVar

from mcpkit._version import __version__
from mcpkit.errors import RPCError
from mcpkit.protocol.codec import Request
from mcpkit.tracing.conventions import (
    NETWORK_TRANSPORTS,
    TOOL_ERROR,
    Attr,
    failed,
    request_attributes,
)
from mcpkit.types.constants import PROTOCOL_VERSION_KEY, TRACE_KEYS, Header

T = TypeVar("T")

__all__ = [
    "ServerSpan",
    "active",
    "arrived",
    "client_exchange",
    "in_scope",
    "left",
    "note_attributes",
    "note_version",
    "server_span",
    "trace_keys",
    "use_tracer_provider",
]

Exchange = Callable[[Any, dict[str, Any], Any, float | None], Awaitable[dict[str, Any]]]
"""`mcpkit.client.opening.exchange`: one request on the wire, its response message back."""

_SCOPE: ContextVar[Mapping[str, Any] | None] = ContextVar("mcpkit_http_scope", default=None)
"""The ASGI scope of the HTTP request being served, while tracing is on."""

_TRACE_HEADERS = {key.encode(): key for key in TRACE_KEYS}
_SESSION_HEADER = Header.SESSION_ID.encode()
_VERSION_HEADER = Header.PROTOCOL_VERSION.encode()
_MAX_TRACE_VALUE = 8192
_HTTP_PORTS = {"http": 80, "https": 443}


class _API:
    """The parts of the OpenTelemetry API spans are made with, imported together once."""

    def __init__(self) -> None:
        import opentelemetry.context
        import opentelemetry.propagate
        import opentelemetry.trace

        trace = opentelemetry.trace
        self.trace = trace
        self.context = opentelemetry.context
        self.propagate = opentelemetry.propagate
        self.client = trace.SpanKind.CLIENT
        self.server = trace.SpanKind.SERVER
        self.error = trace.StatusCode.ERROR
        self.status = trace.Status


_api: _API | None = None
_UNKNOWN = object()
_PROVIDER_VARIABLE = "OTEL_PYTHON_TRACER_PROVIDER"
"""Names a provider OpenTelemetry loads on first use, without `set_tracer_provider`."""
_from_environment: bool | None = None
_tracer: Any = None
"""The tracer spans are made with, once a real provider has been found."""
_chosen: Any = None
"""The provider `use_tracer_provider` was given, if any."""


def use_tracer_provider(provider: Any) -> None:
    """Make mcpkit's spans with `provider` instead of OpenTelemetry's global one; None goes
    back to the global provider. For tests, and for applications that keep a provider of their
    own: OpenTelemetry's global provider can be set only once per process."""
    global _tracer, _chosen
    if provider is not None and not callable(getattr(provider, "get_tracer", None)):
        raise TypeError(
            f"use_tracer_provider: expected an OpenTelemetry TracerProvider, not "
            f"{type(provider).__name__}")
    _chosen = provider
    _tracer = None


def active() -> Any:
    """The tracer to make spans with, or None while no tracer provider is set."""
    if _tracer is not None:
        return _tracer
    if _chosen is None and "opentelemetry.trace" not in sys.modules:
        return None
    return _find()


def _find() -> Any:
    """The tracer of the chosen or global provider; None while the global one is idle (the
    rest of the API is imported only once a provider is there)."""
    global _api, _tracer, _from_environment
    provider = _chosen
    if provider is None:
        trace = sys.modules["opentelemetry.trace"]
        if _from_environment is None:
            _from_environment = _PROVIDER_VARIABLE in os.environ
        # The API's own global, read directly while it is unset: get_tracer_provider() also
        # looks the environment up each time, ten times the cost of this check.
        if getattr(trace, "_TRACER_PROVIDER", _UNKNOWN) is None and not _from_environment:
            return None
        provider = trace.get_tracer_provider()
        if isinstance(provider, (trace.ProxyTracerProvider, trace.NoOpTracerProvider)):
            return None
    if _api is None:
        _api = _API()
    _tracer = provider.get_tracer("mcpkit", __version__)
    return _tracer


def trace_keys(meta: Any) -> dict[str, str]:
    """The W3C trace keys a `_meta` object holds as strings (META-10)."""
    if type(meta) is not dict:
        return {}
    return {k: v for k in TRACE_KEYS if type(v := meta.get(k)) is str}


def _qualified(exc: BaseException) -> str:
    kind = type(exc)
    return kind.__qualname__ if kind.__module__ == "builtins" else (
        f"{kind.__module__}.{kind.__qualname__}")


def _error(span: Any, api: _API, error: Any, server: bool) -> None:
    """Record an error response: its code always, the failure when the side counts it one."""
    code = error.get("code") if type(error) is dict else None
    if type(code) is not int:
        code = -32603
    span.set_attribute(Attr.STATUS_CODE, str(code))
    if failed(code, server):
        span.set_attribute(Attr.ERROR_TYPE, str(code))
        message = error.get("message") if type(error) is dict else None
        span.set_status(api.status(api.error, message if type(message) is str else None))


def _result(span: Any, api: _API, result: Any) -> None:
    if type(result) is dict and result.get("isError") is True:
        span.set_attribute(Attr.ERROR_TYPE, TOOL_ERROR)
        span.set_status(api.status(api.error, "the tool reported an error (isError)"))


def _raised(span: Any, api: _API, exc: BaseException) -> None:
    span.set_attribute(Attr.ERROR_TYPE, _qualified(exc))
    if isinstance(exc, Exception):
        span.record_exception(exc)
    span.set_status(api.status(api.error, _qualified(exc)))


# -- the server side -------------------------------------------------------------------------


def arrived(scope: Mapping[str, Any]) -> Token[Mapping[str, Any] | None] | None:
    """An HTTP endpoint hands down the request's ASGI scope (its trace headers, the peer, a
    legacy session id) while tracing is on; `left` takes it back. None: tracing is off."""
    if active() is None:
        return None
    return _SCOPE.set(scope)


def left(token: Token[Mapping[str, Any] | None] | None) -> None:
    if token is not None:
        _SCOPE.reset(token)


async def in_scope(scope: Mapping[str, Any], work: Awaitable[T]) -> T:
    """Await `work` with the request's ASGI scope handed down (`arrived` and `left` around
    it): an endpoint calls this only once `active()` found a tracer, so a request pays one
    check while tracing is off."""
    token = _SCOPE.set(scope)
    try:
        return await work
    finally:
        _SCOPE.reset(token)


def _http(scope: Mapping[str, Any], attributes: dict[str, Any]) -> dict[str, str]:
    """What an HTTP request adds to its server span; returns its trace headers."""
    carrier: dict[str, str] = {}
    for name, value in scope.get("headers") or ():
        key = _TRACE_HEADERS.get(name)
        if key is not None:
            carrier.setdefault(key, value.decode("latin-1"))
        elif name == _SESSION_HEADER:
            attributes[Attr.SESSION_ID] = value.decode("latin-1")
        elif name == _VERSION_HEADER:
            attributes.setdefault(Attr.PROTOCOL_VERSION, value.decode("latin-1"))
    server = scope.get("server")
    unix = server is not None and len(server) == 2 and server[1] is None
    attributes[Attr.NETWORK_TRANSPORT] = "unix" if unix else "tcp"
    attributes[Attr.NETWORK_PROTOCOL] = "http"
    version = scope.get("http_version")
    if type(version) is str:
        attributes[Attr.NETWORK_PROTOCOL_VERSION] = version
    client = scope.get("client")
    if client and type(client[0]) is str:
        attributes[Attr.CLIENT_ADDRESS] = client[0]
        if type(client[1]) is int:
            attributes[Attr.CLIENT_PORT] = client[1]
    return carrier


class ServerSpan:
    """The span of one request a server serves; `run` awaits the handler inside it."""

    __slots__ = ("api", "request", "tracer")

    def __init__(self, tracer: Any, api: _API, request: Request) -> None:
        self.tracer = tracer
        self.api = api
        self.request = request

    async def run(self, work: Awaitable[dict[str, Any]],
                  errors: Callable[[RPCError], dict[str, Any]]) -> dict[str, Any]:
        """Await `work` as the current span, recording how it ended; raises what it raises
        (the caller, `mcpkit.server.dispatch.serve`, makes the error response)."""
        api, request = self.api, self.request
        params = request.params
        name, attributes = request_attributes(request.method, request.id, params)
        meta = params.get("_meta") if params is not None else None
        if type(meta) is dict and type(version := meta.get(PROTOCOL_VERSION_KEY)) is str:
            attributes[Attr.PROTOCOL_VERSION] = version
        scope = _SCOPE.get()
        headers = _http(scope, attributes) if scope is not None else {}
        carrier = trace_keys(meta)
        if carrier:
            parent = api.propagate.extract(carrier)
        elif headers and not api.trace.get_current_span().get_span_context().is_valid:
            parent = api.propagate.extract(headers)
        else:
            parent = api.context.get_current()
        span = self.tracer.start_span(name, context=parent, kind=api.server,
                                      attributes=attributes, record_exception=False,
                                      set_status_on_exception=False)
        token = api.context.attach(api.trace.set_span_in_context(span, parent))
        try:
            result = await work
        except RPCError as exc:
            _error(span, api, errors(exc), True)
            raise
        except BaseException as exc:
            if isinstance(exc, Exception):  # answered -32603 by `serve`
                _error(span, api, {"code": -32603, "message": "Internal error"}, True)
                span.record_exception(exc)
            else:  # cancelled: no response goes out
                _raised(span, api, exc)
            raise
        else:
            _result(span, api, result)
            return result
        finally:
            api.context.detach(token)
            span.end()


def server_span(tracer: Any, request: Request) -> ServerSpan:
    """The span `serve` runs `request` in, once `active()` gave a tracer (the one check every
    request pays, a call of its own so that tracing off costs nothing more)."""
    assert _api is not None
    return ServerSpan(tracer, _api, request)


def note_version(version: str) -> None:
    """The legacy adapter names the version its session negotiated (a 2025-11-25 request's
    `_meta` carries none) on the span of the request it serves."""
    if active() is None:
        return
    assert _api is not None
    span = _api.trace.get_current_span()
    if span.is_recording():
        span.set_attribute(Attr.PROTOCOL_VERSION, version)


def note_attributes(attributes: Mapping[str, Any]) -> None:
    """Set `attributes` on the current span while tracing is on (a middleware link's timing
    on the request's SERVER span); nothing otherwise."""
    if active() is None:
        return
    assert _api is not None
    span = _api.trace.get_current_span()
    if span.is_recording():
        span.set_attributes(dict(attributes))


# -- the client side -------------------------------------------------------------------------


def _clean(carrier: Mapping[str, str]) -> dict[str, str]:
    """What a propagator wrote, as `_meta` may carry it (META-10: W3C values, so ASCII text
    without line breaks; an oversized baggage is left out rather than sent)."""
    return {
        k: v for k, v in carrier.items()
        if k in TRACE_KEYS and type(v) is str and v and len(v) <= _MAX_TRACE_VALUE
        and v.isascii() and "\r" not in v and "\n" not in v
    }


def _peer(where: Any, transport: Any, attributes: dict[str, Any]) -> None:
    """What the client knows of the server: the transport's kind, the URL's host and port, a
    legacy HTTP session's id."""
    kind = getattr(where, "kind", None)
    url = getattr(where, "url", None)
    network = NETWORK_TRANSPORTS.get(kind) if type(kind) is str else None
    if network is None and type(url) is str:
        network = "tcp"
    if network is not None:
        attributes[Attr.NETWORK_TRANSPORT] = network
    if type(url) is str:
        from urllib.parse import urlsplit  # only while tracing: a plain server never needs it

        attributes[Attr.NETWORK_PROTOCOL] = "http"
        parts = urlsplit(url)
        if parts.hostname:
            attributes[Attr.SERVER_ADDRESS] = parts.hostname
            port = parts.port or _HTTP_PORTS.get(parts.scheme)
            if port is not None:
                attributes[Attr.SERVER_PORT] = port
    session = getattr(transport, "session_id", None)
    if type(session) is str:
        attributes[Attr.SESSION_ID] = session


def client_exchange(tracer: Any, exchange: Exchange, version: str | None, where: Any
                    ) -> Exchange:
    """`exchange` with a CLIENT span around each request it sends.

    `version` is the connection's protocol version, `where` the connector (or the transport
    given to the client) naming the server.
    """
    api = _api
    assert api is not None

    async def traced(transport: Any, message: dict[str, Any], on_notification: Any,
                     timeout: float | None) -> dict[str, Any]:
        params = message.get("params")
        name, attributes = request_attributes(message["method"], message.get("id"), params)
        if version is not None:
            attributes[Attr.PROTOCOL_VERSION] = version
        _peer(where, transport, attributes)
        meta = params.get("_meta") if type(params) is dict else None
        given = trace_keys(meta)
        parent = api.propagate.extract(given) if given else api.context.get_current()
        span = tracer.start_span(name, context=parent, kind=api.client, attributes=attributes,
                                 record_exception=False, set_status_on_exception=False)
        context = api.trace.set_span_in_context(span, parent)
        carrier: dict[str, str] = {}
        api.propagate.inject(carrier, context=context)
        own = {k: v for k, v in meta.items() if k not in TRACE_KEYS} if type(meta) is dict else {}
        own.update(_clean(carrier) or given)  # a propagator that writes nothing: what was given
        message = {**message, "params": {**(params if type(params) is dict else {}),
                                         "_meta": own}}
        token = api.context.attach(context)
        try:
            response = await exchange(transport, message, on_notification, timeout)
        except BaseException as exc:
            _raised(span, api, exc)
            raise
        else:
            if "error" in response:
                _error(span, api, response["error"], False)
            else:
                _result(span, api, response.get("result"))
            return response
        finally:
            api.context.detach(token)
            span.end()

    return traced
