"""The answers a Streamable HTTP endpoint gives instead of serving, without I/O.

Each is a `Refusal`: the HTTP status, from the one status table (`mcpkit.protocol.http.Status`
and `http_status`), the error response to send (built by `error_response`, the one function
that turns our exceptions into error responses) and any headers it needs. The ASGI glue
(`mcpkit.transports.http_server` and its endpoints) only sends them, so every refusal is worded
and given its status here, once: a host or origin not allowed, an HTTP method no endpoint takes,
a body that is too large, not JSON or unreadable, and the checks a modern request passes before
the server sees it. The refusals of a legacy session are `mcpkit.legacy.http_session`, which
builds on `Refusal` too. Sans-IO: imports `mcpkit.types`, `mcpkit.errors` and `mcpkit.protocol`
only.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Final

from mcpkit.errors import HeaderMismatchError, InvalidRequestError, MethodNotFoundError, RPCError
from mcpkit.protocol.codec import Request, RequestId
from mcpkit.protocol.headers import RequestHeaders
from mcpkit.protocol.http import Status, http_status
from mcpkit.protocol.http_mirror import check_request_headers
from mcpkit.protocol.rejections import error_response
from mcpkit.types.constants import MODERN_VERSION, SUPPORTED_VERSIONS
from mcpkit.types.methods import METHODS, Method

__all__ = [
    "LEGACY_ONLY",
    "Refusal",
    "bad_content_length",
    "forbidden",
    "not_allowed",
    "request_refusal",
    "response_refusal",
    "too_large",
    "undecodable",
    "unsupported_media",
]

LEGACY_ONLY: Final = frozenset(
    name for name, m in METHODS.items() if m.is_request and m.by_client and not m.modern)
"""Requests the modern era removed: unknown (-32601) on a modern request."""

_ALLOW_MODERN: Final = ((b"allow", b"POST"),)
_ALLOW_SESSIONS: Final = ((b"allow", b"GET, POST, DELETE"),)
_CLOSE: Final = ((b"connection", b"close"),)


@dataclass(frozen=True, slots=True)
class Refusal:
    """An answer given instead of serving: the HTTP status, the message (None: no body) and
    any headers beside the body's own."""

    status: int
    message: dict[str, Any] | None = None
    headers: tuple[tuple[bytes, bytes], ...] = ()


def _invalid(request_id: RequestId | None, message: str) -> dict[str, Any]:
    return error_response(request_id, InvalidRequestError(message))


def forbidden(reason: str) -> Refusal:
    """A `Host` or `Origin` the `HostPolicy` refused, for `reason`: 403, or the status a
    `HostRefusal` carries (400 for a Host sent twice)."""
    status = getattr(reason, "status", Status.FORBIDDEN)
    title = "Bad Request" if status == Status.BAD_REQUEST else "Forbidden"
    return Refusal(status, _invalid(None, f"{title}: {reason}"))


def not_allowed(method: str, sessions: bool) -> Refusal:
    """An HTTP method no endpoint takes; `sessions`: 2025-11-25 sessions are served, whose GET
    and DELETE are allowed too."""
    return Refusal(Status.METHOD_NOT_ALLOWED, _invalid(
        None, f"Method Not Allowed: {method} on the MCP endpoint; {MODERN_VERSION} clients POST "
        "every message" + (" (GET and DELETE need the Mcp-Session-Id of a 2025-11-25 "
                           "session)" if sessions else "")),
        _ALLOW_SESSIONS if sessions else _ALLOW_MODERN)


def bad_content_length(declared: bytes) -> Refusal:
    # Shown as text, like the other headers a refusal names (not as a bytes repr).
    shown = declared.decode("latin-1")
    return Refusal(Status.BAD_REQUEST, _invalid(
        None, f"Bad Request: Content-Length {shown!r} is not a number"))


def too_large(size: int, limit: int) -> Refusal:
    """A body over `limit` bytes (declared, or counted as it came); the connection closes."""
    return Refusal(Status.PAYLOAD_TOO_LARGE, _invalid(
        None, f"Payload Too Large: the body has {size} bytes or more; the limit is {limit} bytes "
        "(HTTPOptions.max_body_bytes)"), _CLOSE)


def unsupported_media(content_type: bytes | None) -> Refusal:
    shown = (content_type or b"").decode("latin-1")
    return Refusal(Status.UNSUPPORTED_MEDIA_TYPE, _invalid(
        None, f"Unsupported Media Type {shown!r}: POST one JSON-RPC message as "
        "application/json"))


def undecodable(exc: RPCError) -> Refusal:
    """A body that is not one JSON-RPC message (-32700, -32600), with the id when one was read."""
    return Refusal(http_status(exc.code), error_response(getattr(exc, "request_id", None), exc))


def response_refusal() -> Refusal:
    """A JSON-RPC response POSTed without a session: only a 2025-11-25 client sends them."""
    return Refusal(Status.BAD_REQUEST, _invalid(
        None, f"Invalid request: a {MODERN_VERSION} client never sends JSON-RPC responses "
        "(a 2025-11-25 client sends them with its Mcp-Session-Id)"))


def request_refusal(headers: RequestHeaders, request: Request, json_ok: bool, sse_ok: bool,
                    tool_params: dict[str, tuple[str, ...]] | None) -> Refusal | None:
    """Why a modern request may not reach the server, or None: nothing it accepts (406), a
    method of the initialize era (404), mirrored headers that disagree with the body (400),
    `subscriptions/listen` without an event stream (406). `tool_params` is the `x-mcp-header`
    table of the tool a `tools/call` names."""
    method = request.method
    error: RPCError
    if not json_ok and not sse_ok:
        status, error = Status.NOT_ACCEPTABLE, InvalidRequestError(
            f"Not Acceptable: {method} answers application/json or text/event-stream; "
            "send Accept: application/json, text/event-stream")
    elif method in LEGACY_ONLY:
        error = MethodNotFoundError(
            f"Method not found: {method} belongs to the initialize era; this request "
            f"declared {MODERN_VERSION} (supported: {', '.join(SUPPORTED_VERSIONS)}; a "
            "2025-11-25 client sends initialize without _meta)", {"method": method})
        status = http_status(error.code)
    else:
        try:
            check_request_headers(headers, request, tool_params)
        except HeaderMismatchError as exc:
            return Refusal(http_status(exc.code), error_response(request.id, exc))
        if method != Method.SUBSCRIPTIONS_LISTEN or sse_ok:
            return None
        status, error = Status.NOT_ACCEPTABLE, InvalidRequestError(
            "Not Acceptable: subscriptions/listen answers with a text/event-stream; add it "
            "to Accept")
    return Refusal(status, error_response(request.id, error))
