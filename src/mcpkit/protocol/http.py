"""The rules of Streamable HTTP that need no socket: which era (and endpoint) an HTTP request
belongs to, which HTTP
status a JSON-RPC error travels with, content negotiation, and which `Host` and `Origin` values
may reach the server.

Both sides use it: the ASGI endpoint (`mcpkit.transports.http_server.app`) to decide before it
dispatches, the httpx client transport to build what a server will check. Reading a request's
headers once (`RequestHeaders`) lives in `mcpkit.protocol.headers`, below this module and
`mcpkit.protocol.http_mirror` (what a client mirrors, and whether the mirrored headers agree
with the body); the public names of both are importable from here too. Header names come from
`mcpkit.types.constants.Header`. Sans-IO: imports `mcpkit.types`, `mcpkit.errors` and
`mcpkit.protocol` only; no async, no clock, no logging.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from types import MappingProxyType
from typing import Any, Final

from mcpkit.errors import (
    HeaderMismatchError,
    InternalError,
    InvalidParamsError,
    InvalidRequestError,
    MethodNotFoundError,
    MissingRequiredClientCapabilityError,
    ParseError,
    UnsupportedProtocolVersionError,
)
from mcpkit.protocol.codec import Message
from mcpkit.protocol.headers import (
    MAX_CACHED_VALUE,
    REPEAT_SEPARATOR,
    RequestHeaders,
    read_headers,
)
from mcpkit.protocol.http_host import parse_host
from mcpkit.protocol.http_mirror import (
    ScreenedTools,
    check_request_headers,
    client_headers,
    screen_tools,
)
from mcpkit.types.constants import LEGACY_VERSIONS, PROTOCOL_VERSION_KEY
from mcpkit.types.era import LEGACY, MODERN
from mcpkit.types.methods import Method

__all__ = [
    "LEGACY",
    "LOOPBACK_HOSTS",
    "MODERN",
    "PRINCIPAL_SCOPE_KEY",
    "SESSION",
    "STATUS_BY_CODE",
    "HostPolicy",
    "HostRefusal",
    "RequestHeaders",
    "ScreenedTools",
    "Status",
    "accepts",
    "check_request_headers",
    "classify_era",
    "client_headers",
    "error_status",
    "http_status",
    "is_json_content",
    "read_headers",
    "retry_after",
    "route",
    "screen_tools",
]

# -- error code -> HTTP status: the one table every HTTP path uses ------------------------------

STATUS_BY_CODE: Final[Mapping[int, int]] = MappingProxyType(
    {
        ParseError.code: 400,
        InvalidRequestError.code: 400,
        InvalidParamsError.code: 400,
        HeaderMismatchError.code: 400,
        MissingRequiredClientCapabilityError.code: 400,
        UnsupportedProtocolVersionError.code: 400,
        MethodNotFoundError.code: 404,
        InternalError.code: 500,
    }
)
"""JSON-RPC error code -> HTTP status of a modern response. Codes not listed (an application's
own) travel with 200: the body says everything. Legacy sessions answer every handler error with
200, as 2025-11-25 clients expect; only the transport's own refusals keep their status there."""


def http_status(code: int) -> int:
    return STATUS_BY_CODE.get(code, Status.OK)


def error_status(error: Mapping[str, Any]) -> int:
    """The HTTP status of a modern response carrying JSON-RPC `error`: its code's
    (`STATUS_BY_CODE`), but 503 for a server that cannot serve it now (-32603 whose
    `data.unavailable` says why: a store out of reach, the server stopping or full), so a
    client and a load balancer see a failure worth retrying rather than a bug; and 429 for
    a client over its share (-32602 with `data.retryAfterS`: `TooManyTasksError`)."""
    data = error.get("data")
    code = error.get("code")
    if isinstance(data, Mapping):
        if code == InternalError.code and data.get("unavailable"):
            return Status.SERVICE_UNAVAILABLE
        if code == InvalidParamsError.code and "retryAfterS" in data:
            return Status.TOO_MANY_REQUESTS
    return STATUS_BY_CODE.get(code, Status.OK)  # type: ignore[arg-type]


def retry_after(error: Mapping[str, Any]) -> tuple[bytes, bytes] | None:
    """The `Retry-After` header of a response carrying `error`, when its `data.retryAfterS`
    says how long to wait (whole seconds, at least 1)."""
    data = error.get("data")
    wait = data.get("retryAfterS") if isinstance(data, Mapping) else None
    if not isinstance(wait, int | float) or isinstance(wait, bool) or wait != wait:
        return None
    return (b"retry-after", b"%d" % max(1, min(int(-(-wait // 1)), 86_400)))


class Status:
    """The statuses of the endpoint's own answers, named for what each says (the rows below
    `STATUS_BY_CODE`: answers that carry no error code, or whose status is not the code's)."""

    OK: Final = 200
    """A response; and every error a legacy session's handler answers with."""
    ACCEPTED: Final = 202
    """A notification, a client's response, a request cancelled before anything was sent."""
    BAD_REQUEST: Final = 400
    """Refused by the transport: a malformed header, `Host` sent more than once or naming no
    host (RFC 9112 §3.2), a message no session can take, a `Last-Event-ID` this session never
    issued."""
    UNAUTHORIZED: Final = 401
    """No token, or one the resource server refused (RFC 6750 §3.1): an authorization event
    for the client, never a sign of a legacy server."""
    FORBIDDEN: Final = 403
    """`Host` or `Origin` not allowed; `Origin` sent more than once (the origin of such a
    request cannot be told, and an Origin that is not valid is answered with 403)."""
    NOT_FOUND: Final = 404
    """A path not served; a legacy session that ended or expired (the client initializes
    anew, so never for anything else)."""
    METHOD_NOT_ALLOWED: Final = 405
    NOT_ACCEPTABLE: Final = 406
    CONFLICT: Final = 409
    """A second GET stream for one legacy session."""
    GONE: Final = 410
    """A `Last-Event-ID` whose events are no longer kept."""
    REQUEST_TIMEOUT: Final = 408
    """The listener's: a request head or body that stopped arriving."""
    PAYLOAD_TOO_LARGE: Final = 413
    URI_TOO_LONG: Final = 414
    """The listener's: the request line alone is over the per-line limit."""
    UNSUPPORTED_MEDIA_TYPE: Final = 415
    TOO_MANY_REQUESTS: Final = 429
    """A client opening legacy sessions faster than its rate, or asking for more tasks than
    its share (with Retry-After)."""
    HEADERS_TOO_LARGE: Final = 431
    """The listener's: the head, one header line, or their number is over its limit."""
    INTERNAL_ERROR: Final = 500
    """What escaped a GET or DELETE, which has no message to answer."""
    SERVICE_UNAVAILABLE: Final = 503
    """The session store is full of what an anonymous client may not end (with Retry-After);
    a store or broker the request needs is out of reach, the server is stopping or runs all
    the tasks it may (`error_status`; the last two with Retry-After)."""


# -- which era a POST belongs to ----------------------------------------------------------------

SESSION: Final = "session"
"""With `MODERN` and `LEGACY` (the `Era` values of `mcpkit.types.era`): where a POST goes."""


def classify_era(session_id: bytes | None, version: bytes | None, message: Message) -> str:
    """Route one POST on a dual-era endpoint.

    `SESSION`: it names a legacy session (`Mcp-Session-Id`), whatever else it says. `MODERN`:
    its `_meta` declares a protocol version, or it has a `_meta` and is not an `initialize`,
    or its `MCP-Protocol-Version` header names a version that is not of the initialize era.
    `LEGACY` otherwise: an `initialize` opens a session, anything else needs one.
    """
    if session_id is not None:
        return SESSION
    params = getattr(message, "params", None)
    if params is not None:
        meta = params.get("_meta")
        if type(meta) is dict and (
            PROTOCOL_VERSION_KEY in meta or getattr(message, "method", None) != Method.INITIALIZE
        ):
            return MODERN
    if version is not None and version.decode("latin-1").strip(" \t") not in LEGACY_VERSIONS:
        return MODERN
    return LEGACY


def route(method: str, session_id: bytes | None, version: bytes | None,
          message: Message | None) -> str:
    """Which endpoint serves one HTTP request: the one decision of the era it belongs to.

    A POST (its body decoded into `message`) by `classify_era`; a GET or DELETE naming a
    session (`Mcp-Session-Id`) is `SESSION`'s; anything else is `MODERN`'s, whose endpoint
    answers it with 405 (a modern client POSTs every message).
    """
    if method == "POST" and message is not None:
        return classify_era(session_id, version, message)
    if session_id is not None and method in ("GET", "DELETE"):
        return SESSION
    return MODERN


# -- content negotiation ------------------------------------------------------------------------

CACHE_ENTRIES: Final = 256
"""Most values each negotiation cache holds; when full it starts again (the values in use come
back at once). Values longer than `MAX_CACHED_VALUE` are never kept."""

_ACCEPT_CACHE: dict[bytes | None, tuple[bool, bool]] = {}


def accepts(accept: bytes | None) -> tuple[bool, bool]:
    """(JSON acceptable, SSE acceptable) for an `Accept` header; no header accepts both."""
    known = _ACCEPT_CACHE.get(accept)
    if known is not None:
        return known
    if accept is None:
        result = (True, True)
    else:
        json_ok = sse_ok = False
        for part in accept.decode("latin-1").split(","):
            media, _, rest = part.partition(";")
            media = media.strip().lower()
            if any(p.strip().replace(" ", "") in ("q=0", "q=0.0", "q=0.00", "q=0.000")
                   for p in rest.split(";")):
                continue
            if media in ("*/*", "application/json", "application/*"):
                json_ok = True
            if media in ("*/*", "text/event-stream", "text/*"):
                sse_ok = True
        result = (json_ok, sse_ok)
    if accept is None or len(accept) <= MAX_CACHED_VALUE:
        if len(_ACCEPT_CACHE) >= CACHE_ENTRIES:
            _ACCEPT_CACHE.clear()
        _ACCEPT_CACHE[accept] = result
    return result


_JSON_SEEDS: Final[dict[bytes | None, bool]] = {None: True, b"application/json": True}
_JSON_CONTENT: dict[bytes | None, bool] = dict(_JSON_SEEDS)


def is_json_content(content_type: bytes | None) -> bool:
    """A missing `Content-Type` is taken as JSON; any other media type is not."""
    known = _JSON_CONTENT.get(content_type)
    if known is not None:
        return known
    assert content_type is not None
    result = content_type.split(b";", 1)[0].strip().lower() == b"application/json"
    if len(content_type) <= MAX_CACHED_VALUE:
        if len(_JSON_CONTENT) >= CACHE_ENTRIES:
            _JSON_CONTENT.clear()
            _JSON_CONTENT.update(_JSON_SEEDS)
        _JSON_CONTENT[content_type] = result
    return result


# -- DNS-rebinding protection -------------------------------------------------------------------

PRINCIPAL_SCOPE_KEY: Final = "mcpkit.principal"
"""The ASGI scope key where authentication middleware puts the request's principal (a string,
or what `mcpkit.server.sealing.principal_key` reads: a mapping or object with a subject), for the
endpoints of either era to read."""

LOOPBACK_HOSTS: Final = ("localhost", "127.0.0.1", "[::1]")
POLICY_ENTRIES: Final = 1024
"""Most (Host, Origin) pairs a `HostPolicy` remembers its answer for; when full it starts
again. A pair with a value longer than `MAX_CACHED_VALUE` is judged each time."""
_UNKNOWN: Final = object()


class HostRefusal(str):
    """Why a `HostPolicy` refused a request (the text of the answer), and with which status:
    `Status.FORBIDDEN` for a Host or Origin not allowed or an Origin sent twice,
    `Status.BAD_REQUEST` for a Host sent twice or naming no host. A `str`, so the reason reads as before."""

    status: int

    def __new__(cls, reason: str, status: int = Status.FORBIDDEN) -> HostRefusal:
        refusal = super().__new__(cls, reason)
        refusal.status = status
        return refusal


def _split_authority(authority: str) -> tuple[str, str | None]:
    """`host[:port]` -> (host, port); IPv6 literals keep their brackets."""
    if authority.startswith("["):
        end = authority.find("]")
        if end < 0:
            return authority, None
        host, rest = authority[: end + 1], authority[end + 1 :]
        return host, rest[1:] if rest.startswith(":") else None
    host, sep, port = authority.rpartition(":")
    if sep and port.isdigit():
        return host, port
    return authority, None


class HostPolicy:
    """Which `Host` and `Origin` values may reach the server (DNS-rebinding protection).

    `hosts`: names (`localhost`, any port), `name:port` (that port only), `*.example.com`
    (subdomains) or `*` (any host). `origins`: exact origins (`https://app.example.com`) or
    `*`. With no `origins`, a browser origin is allowed when its host is one of `hosts` (by
    name), or, when `hosts` is `*`, when it is the very origin the request was sent to. A
    missing `Origin` (a non-browser client) is always allowed. A `Host` that names no host
    (`mcpkit.protocol.http_host.parse_host`) is refused with 400 whatever the hosts allowed.
    """

    __slots__ = ("_any_host", "_any_origin", "_cache", "_exact", "_names", "_origins",
                 "_suffixes", "hosts", "origins")

    def __init__(self, hosts: Iterable[str] | None = None,
                 origins: Iterable[str] | None = None) -> None:
        self.hosts = tuple(h.strip().lower() for h in (LOOPBACK_HOSTS if hosts is None else hosts))
        self.origins = tuple(o.strip().lower().rstrip("/") for o in (origins or ()))
        self._any_host = "*" in self.hosts
        self._any_origin = "*" in self.origins
        self._names = {h for h in self.hosts if _split_authority(h)[1] is None and "*" not in h}
        self._exact = {h for h in self.hosts if _split_authority(h)[1] is not None}
        self._suffixes = tuple(h[1:] for h in self.hosts if h.startswith("*.") and len(h) > 2)
        self._origins = frozenset(self.origins)
        self._cache: dict[tuple[bytes | None, bytes | None], HostRefusal | None] = {}

    @property
    def open_ended(self) -> bool:
        """Whether a host this configuration does not name may pass (`*`, or a suffix such as
        `*.example.com`): the request's Host then says nothing the configuration vouches for,
        so nothing may be derived from it (a protected server's resource URL)."""
        return self._any_host or bool(self._suffixes)

    def _host_ok(self, authority: str) -> bool:
        if self._any_host or authority in self._exact:
            return True
        host = _split_authority(authority)[0]
        if host in self._names:
            return True
        return bool(self._suffixes) and host.endswith(self._suffixes)

    def check(self, host: bytes | None, origin: bytes | None) -> HostRefusal | None:
        """None when allowed, else the reason and the status of the refusal (`HostRefusal`).

        A value joined by `REPEAT_SEPARATOR` (the header was sent more than once) is refused:
        two Host headers with 400 (RFC 9112 §3.2), two Origin headers with 403."""
        key = (host, origin)
        cache = self._cache
        reason = cache.get(key, _UNKNOWN)
        if reason is not _UNKNOWN:
            return reason  # type: ignore[return-value]
        reason = self._decide(host, origin)
        if ((host is None or len(host) <= MAX_CACHED_VALUE)
                and (origin is None or len(origin) <= MAX_CACHED_VALUE)):
            if len(cache) >= POLICY_ENTRIES:
                cache.clear()
            cache[key] = reason
        return reason

    def _decide(self, host: bytes | None, origin: bytes | None) -> HostRefusal | None:
        if host is not None and REPEAT_SEPARATOR in host:
            return HostRefusal(
                f"the Host header appears {host.count(REPEAT_SEPARATOR) + 1} times; a request "
                "names its host once", Status.BAD_REQUEST)
        if origin is not None and REPEAT_SEPARATOR in origin:
            return HostRefusal(
                f"the Origin header appears {origin.count(REPEAT_SEPARATOR) + 1} times; a "
                "request comes from one origin")
        authority = None
        if host is not None:
            authority = host.decode("latin-1").strip(" \t")
            if parse_host(authority) is None:
                return HostRefusal(
                    f"the Host header {authority[:100]!r} names no host[:port] (RFC 9112 "
                    "§3.2): send the host the request is for, an IPv6 address in brackets, a "
                    "port of 0-65535 if any", Status.BAD_REQUEST)
            authority = authority.lower()
        if authority is not None and not self._host_ok(authority):
            return HostRefusal(
                f"Host {authority!r} is not allowed; allowed: {', '.join(self.hosts)} "
                "(behind a reverse proxy, allow the public name with --allow-host or "
                "HTTPOptions.allowed_hosts)"
            )
        if origin is None:
            return None
        value = origin.decode("latin-1").strip().lower().rstrip("/")
        if self._any_origin or value in self._origins:
            return None
        scheme, sep, rest = value.partition("://")
        if sep and scheme in ("http", "https") and rest and "/" not in rest:
            if not self._origins and not self._any_host and self._host_ok(rest):
                return None
            if self._any_host and not self._origins and authority == rest:
                return None
        return HostRefusal(
            f"Origin {value!r} is not allowed (allow it with --allow-origin or "
            "HTTPOptions.allowed_origins)"
        )
