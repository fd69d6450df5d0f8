"""The OpenTelemetry semantic conventions for MCP that mcpkit's spans follow, as data.

Source: "Semantic conventions for Model Context Protocol (MCP)", OpenTelemetry GenAI semantic
conventions v0.1.0 (`docs/gen-ai/mcp.md`, `model/mcp/*.yaml`; status: Development), which
took over the MCP pages of the OpenTelemetry semantic conventions 1.37-1.40. Where that text
and its predecessors differ, the newer wins: the JSON-RPC error code is
`rpc.response.status_code` (a string), the replacement of the deprecated
`rpc.jsonrpc.error_code`.

Every attribute name mcpkit writes is in `Attr`, the one table; what a request says about itself
(`request_attributes`), which codes count as failures on each side (`failed`), how a span is
named and how a connector's kind maps to `network.transport` are here too, without
OpenTelemetry, so the rules are tested as data. `mcpkit.tracing.spans` applies them.

May import `mcpkit.types` only.
"""

from __future__ import annotations

from collections.abc import Mapping
from types import MappingProxyType
from typing import Any, Final

from mcpkit.types.methods import Method

__all__ = [
    "CALLER_ERRORS",
    "EXECUTE_TOOL",
    "MAX_TARGET",
    "MAX_VALUE",
    "NETWORK_TRANSPORTS",
    "RESOURCE_METHODS",
    "TARGETS",
    "TOOL_ERROR",
    "Attr",
    "failed",
    "request_attributes",
]


class Attr:
    """Span attribute names, as the conventions spell them."""

    METHOD: Final = "mcp.method.name"
    """The JSON-RPC method (required on every span)."""
    PROTOCOL_VERSION: Final = "mcp.protocol.version"
    """The MCP revision the request is made in: `_meta`'s version, or what initialize agreed."""
    SESSION_ID: Final = "mcp.session.id"
    """A 2025-11-25 HTTP session's `Mcp-Session-Id`; the modern era has no sessions."""
    RESOURCE_URI: Final = "mcp.resource.uri"
    """The URI a resource request names (never in the span name: too many values)."""
    REQUEST_ID: Final = "jsonrpc.request.id"
    """The request's id, as a string."""
    TOOL_NAME: Final = "gen_ai.tool.name"
    PROMPT_NAME: Final = "gen_ai.prompt.name"
    OPERATION: Final = "gen_ai.operation.name"
    """`execute_tool` on `tools/call` only, so tool spans read like other GenAI tool calls."""
    ERROR_TYPE: Final = "error.type"
    """Set if and only if the request failed: the error code, `tool_error`, or an exception's
    fully qualified type (a timeout, a lost connection, a cancellation)."""
    STATUS_CODE: Final = "rpc.response.status_code"
    """The JSON-RPC error code of an error response, as a string."""
    NETWORK_TRANSPORT: Final = "network.transport"
    """`pipe` for stdio, `tcp` for HTTP (`unix` for HTTP over a Unix socket)."""
    NETWORK_PROTOCOL: Final = "network.protocol.name"
    NETWORK_PROTOCOL_VERSION: Final = "network.protocol.version"
    SERVER_ADDRESS: Final = "server.address"
    """The client's view of the server: the host of its URL."""
    SERVER_PORT: Final = "server.port"
    CLIENT_ADDRESS: Final = "client.address"
    """The server's view of the client: the peer address of the HTTP connection."""
    CLIENT_PORT: Final = "client.port"
    HANDLER_DURATION: Final = "mcpkit.handler.duration"
    """mcpkit's own: seconds from a `TimingMiddleware` link to the end of the request's
    handling (`mcpkit.server.middleware.timing`), beside the span's own duration."""


EXECUTE_TOOL: Final = "execute_tool"
"""`gen_ai.operation.name` of a tool call."""
TOOL_ERROR: Final = "tool_error"
"""`error.type` of a `tools/call` whose result says `isError: true`."""

TARGETS: Final[Mapping[str, tuple[str, str]]] = MappingProxyType({
    Method.TOOLS_CALL: ("name", Attr.TOOL_NAME),
    Method.PROMPTS_GET: ("name", Attr.PROMPT_NAME),
})
"""Method -> (the params field naming the target, its attribute). The target, a name from a
short list the server registered, ends the span name: `tools/call get_weather`."""

RESOURCE_METHODS: Final = frozenset({Method.RESOURCES_READ, Method.SUBSCRIBE, Method.UNSUBSCRIBE})
"""Methods whose `params.uri` is recorded as `mcp.resource.uri`."""

NETWORK_TRANSPORTS: Final[Mapping[str, str]] = MappingProxyType({"stdio": "pipe", "http": "tcp"})
"""A client `Connector.kind` -> `network.transport` (an in-memory pair has none)."""

MAX_TARGET: Final = 128
"""Longest target put in a span name (the longest tool name the specification advises): a
longer one, which only a broken or hostile peer sends, is recorded as an attribute alone."""
MAX_VALUE: Final = 1024
"""Longest value taken from a peer's params: what is longer is cut, so one request cannot
make a span that a collector refuses or that fills its memory."""

CALLER_ERRORS: Final = frozenset({-32700, -32600, -32601, -32602, -32002})
"""Codes that say the caller sent what the receiver could not serve: a failure of the request
on the client's span, but not of the server, whose span records the code and stays unset."""


def failed(code: int, server: bool) -> bool:
    """Whether an error response with `code` marks the span as failed (`error.type`, status
    ERROR): always for the client, and for the server unless the caller was at fault."""
    return not server or code not in CALLER_ERRORS


def request_attributes(
    method: str, request_id: Any, params: Mapping[str, Any] | None
) -> tuple[str, dict[str, Any]]:
    """The span name and the attributes a request gives of itself, the same on both sides.

    Only string values are taken from `params`: a peer's malformed field is not recorded
    (its request is answered with -32602 anyway), and an attribute never holds a non-scalar.
    """
    attributes: dict[str, Any] = {Attr.METHOD: method}
    if request_id is not None:
        attributes[Attr.REQUEST_ID] = str(request_id)
    name = method
    if params is None:
        return name, attributes
    target = TARGETS.get(method)
    if target is not None:
        value = params.get(target[0])
        if type(value) is str:
            attributes[target[1]] = value[:MAX_VALUE]
            if len(value) <= MAX_TARGET:
                name = f"{method} {value}"
        if method == Method.TOOLS_CALL:
            attributes[Attr.OPERATION] = EXECUTE_TOOL
    elif method in RESOURCE_METHODS:
        uri = params.get("uri")
        if type(uri) is str:
            attributes[Attr.RESOURCE_URI] = uri[:MAX_VALUE]
    return name, attributes
