"""The rules of Streamable HTTP that need no socket: which era a POST belongs to, whether its
mirrored headers agree with its body, which HTTP status a JSON-RPC error travels with, which
`Host` and `Origin` values may reach the server, and which headers a client sends.

Both sides use it: the ASGI endpoint (`mcpkit.transports.http_server`) to decide before it
dispatches, the httpx client transport to build what a server will check. Header names come
from `mcpkit.types.constants.Header`; value encoding (the `=?base64?...?=` sentinel) from
`mcpkit.protocol.mcp_headers`. Sans-IO: imports `mcpkit.types`, `mcpkit.errors` and
`mcpkit.protocol` only; no async, no clock, no logging.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from types import MappingProxyType
from typing import Any, Final, NamedTuple

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
from mcpkit.protocol.codec import Message, Request
from mcpkit.protocol.mcp_headers import (
    InvalidHeaderDeclaration,
    decode_header_value,
    encode_header_value,
    header_matches_body,
    header_params,
    mirrored_headers,
)
from mcpkit.types.constants import LEGACY_VERSIONS, PROTOCOL_VERSION_KEY, Header, Method

__all__ = [
    "LEGACY",
    "LOOPBACK_HOSTS",
    "MODERN",
    "NAME_SOURCES",
    "SESSION",
    "STATUS_BY_CODE",
    "HostPolicy",
    "RequestHeaders",
    "ScreenedTools",
    "accepts",
    "check_request_headers",
    "classify_era",
    "client_headers",
    "http_status",
    "is_json_content",
    "read_headers",
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
    return STATUS_BY_CODE.get(code, 200)


# -- which era a POST belongs to ----------------------------------------------------------------

MODERN: Final = "modern"
LEGACY: Final = "legacy"
SESSION: Final = "session"


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


# -- reading the headers of a request, once -----------------------------------------------------

_HOST, _ORIGIN, _ACCEPT, _CTYPE, _CLEN, _VERSION, _METHOD, _NAME, _SESSION = range(9)
_FIELDS: Final = {
    b"host": _HOST,
    b"origin": _ORIGIN,
    b"accept": _ACCEPT,
    b"content-type": _CTYPE,
    b"content-length": _CLEN,
    Header.PROTOCOL_VERSION.encode(): _VERSION,
    Header.METHOD.encode(): _METHOD,
    Header.NAME.encode(): _NAME,
    Header.SESSION_ID.encode(): _SESSION,
}
_PARAM_PREFIX: Final = Header.PARAM_PREFIX.encode()
_VERSION_NAME: Final = Header.PROTOCOL_VERSION.encode()
_METHOD_NAME: Final = Header.METHOD.encode()
_NAME_NAME: Final = Header.NAME.encode()
_SESSION_NAME: Final = Header.SESSION_ID.encode()
_DISPLAY: Final = {
    _VERSION: "MCP-Protocol-Version",
    _METHOD: "Mcp-Method",
    _NAME: "Mcp-Name",
    _SESSION: "Mcp-Session-Id",
}


class RequestHeaders:
    """The headers mcpkit reads from one request, raw bytes as the ASGI server gave them.

    `duplicate` names the first MCP header sent twice: two values for one header let a gateway
    and the server read different things, so such a request is refused. `params()` maps the
    lower-cased name after `Mcp-Param-` to its value; it is read only for tools that declare
    mirrored arguments.
    """

    __slots__ = (
        "_params",
        "_raw",
        "accept",
        "content_length",
        "content_type",
        "duplicate",
        "host",
        "method",
        "name",
        "origin",
        "session_id",
        "version",
    )

    def __init__(self, values: Sequence[bytes | None], raw: Sequence[tuple[bytes, bytes]],
                 duplicate: str | None, params: dict[str, bytes] | None = None) -> None:
        (self.host, self.origin, self.accept, self.content_type, self.content_length,
         self.version, self.method, self.name, self.session_id) = values
        self.duplicate = duplicate
        self._raw = raw
        self._params = params

    def params(self) -> dict[str, bytes]:
        params = self._params
        if params is None:
            prefix, cut = _PARAM_PREFIX, len(_PARAM_PREFIX)
            params = self._params = {
                name[cut:].decode("latin-1"): value
                for name, value in self._raw if name.startswith(prefix)
            }
        return params


def read_headers(raw: Iterable[tuple[bytes, bytes]]) -> RequestHeaders:
    """Read ASGI headers (names arrive lower-cased, as ASGI requires). The usual request, with
    no header repeated, costs one dict build; repeats take a slower pass that names them."""
    pairs = raw if isinstance(raw, list) else list(raw)
    found = dict(pairs)
    if len(found) != len(pairs):
        return _read_repeated(pairs)
    get = found.get
    return RequestHeaders(
        (get(b"host"), get(b"origin"), get(b"accept"), get(b"content-type"),
         get(b"content-length"), get(_VERSION_NAME), get(_METHOD_NAME), get(_NAME_NAME),
         get(_SESSION_NAME)),
        pairs, None)


def _read_repeated(pairs: list[tuple[bytes, bytes]]) -> RequestHeaders:
    values: list[bytes | None] = [None] * 9
    params: dict[str, bytes] = {}
    duplicate: str | None = None
    fields = _FIELDS
    for name, value in pairs:
        slot = fields.get(name)
        if slot is not None:
            if slot >= _VERSION and values[slot] is not None and duplicate is None:
                duplicate = _DISPLAY[slot]
            values[slot] = value
        elif name.startswith(_PARAM_PREFIX):
            key = name[len(_PARAM_PREFIX):].decode("latin-1")
            if key in params and duplicate is None:
                duplicate = "Mcp-Param-" + key
            params[key] = value
    return RequestHeaders(values, pairs, duplicate, params)


# -- header <-> body agreement (server side) ----------------------------------------------------

NAME_SOURCES: Final[dict[str, str]] = {
    Method.TOOLS_CALL: "name",
    Method.PROMPTS_GET: "name",
    Method.RESOURCES_READ: "uri",
}
"""Methods whose `Mcp-Name` header mirrors a body field, and which field. Extensions that
define more (the Tasks extension's `taskId`) add their methods here."""


def _mismatch(message: str) -> HeaderMismatchError:
    return HeaderMismatchError(f"Header mismatch: {message}")


_PLAIN_SEEN: dict[bytes, str] = {}
_NAMES_SEEN: dict[bytes, str] = {}
"""Header values already read and found valid: the same few recur on every request."""


def _remember(cache: dict[bytes, str], raw: bytes, value: str) -> str:
    if len(cache) >= 1024:
        cache.clear()
    cache[raw] = value
    return value


def _plain(raw: bytes, display: str) -> str:
    """A header value that must be plain visible ASCII (no Base64 sentinel is allowed in it)."""
    seen = _PLAIN_SEEN.get(raw)
    if seen is not None:
        return seen
    value = raw.decode("latin-1").strip(" \t")
    for ch in value:
        if not " " <= ch <= "~":
            raise _mismatch(f"{display} header value {value!r} contains an invalid character {ch!r}")
    return _remember(_PLAIN_SEEN, raw, value)


def _name(raw: bytes) -> str:
    seen = _NAMES_SEEN.get(raw)
    if seen is not None:
        return seen
    try:
        return _remember(_NAMES_SEEN, raw, decode_header_value(raw.decode("latin-1")))
    except ValueError as exc:
        raise _mismatch(f"Mcp-Name: {exc}") from None


def check_request_headers(
    headers: RequestHeaders,
    request: Request,
    params_of_tool: Mapping[str, tuple[str, ...]] | None = None,
) -> None:
    """Refuse a modern request whose mirrored headers are missing, malformed or disagree with
    its body (HeaderMismatchError, -32020, HTTP 400); return None when they all agree.

    A body value that is itself missing or of the wrong type is left for the method to reject
    with its own, more precise error. `params_of_tool` is the tool's `x-mcp-header` table
    (header name -> property path) for a `tools/call`.
    """
    if headers.duplicate is not None:
        raise _mismatch(f"the {headers.duplicate} header appears more than once; send it once")
    method = request.method
    if headers.method is None:
        raise _mismatch(f"the Mcp-Method header is required (set it to {method!r})")
    sent = _plain(headers.method, "Mcp-Method")
    if sent != method:
        raise _mismatch(f"Mcp-Method header value {sent!r} does not match body method {method!r}")
    params = request.params or {}
    field = NAME_SOURCES.get(method)
    if field is not None:
        body_name = params.get(field)
        if type(body_name) is str:
            if headers.name is None:
                raise _mismatch(
                    f"the Mcp-Name header is required for {method} (set it to params.{field})"
                )
            name = _name(headers.name)
            if name != body_name:
                raise _mismatch(
                    f"Mcp-Name header value {name!r} does not match body value {body_name!r}"
                )
    meta = params.get("_meta")
    body_version = meta.get(PROTOCOL_VERSION_KEY) if type(meta) is dict else None
    if headers.version is None:
        raise _mismatch(
            "the MCP-Protocol-Version header is required on every request (set it to "
            f"{body_version if type(body_version) is str else 'the _meta protocolVersion'})"
        )
    if type(body_version) is str:
        version = _plain(headers.version, "MCP-Protocol-Version")
        if version != body_version:
            raise _mismatch(
                f"MCP-Protocol-Version header value {version!r} does not match body value "
                f"{body_version!r} (_meta[{PROTOCOL_VERSION_KEY!r}])"
            )
    if params_of_tool:
        _check_params(headers.params(), params_of_tool, params.get("arguments"))


def _check_params(
    sent: dict[str, bytes], declared: Mapping[str, tuple[str, ...]], arguments: Any
) -> None:
    for header, path in declared.items():
        value: Any = arguments
        for key in path:
            value = value.get(key) if type(value) is dict else None
        raw = sent.get(header.lower())
        display = f"Mcp-Param-{header}"
        where = "arguments." + ".".join(path)
        if raw is None:
            if value is not None:
                raise _mismatch(f"the {display} header is required: the body has {where}")
            continue
        if value is None:
            raise _mismatch(f"{display} header is present but the body has no {where}")
        try:
            decoded = decode_header_value(raw.decode("latin-1"))
        except ValueError as exc:
            raise _mismatch(f"{display}: {exc}") from None
        if not header_matches_body(decoded, value):
            raise _mismatch(
                f"{display} header value {decoded!r} does not match body value {value!r} ({where})"
            )


# -- content negotiation ------------------------------------------------------------------------

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
    if len(_ACCEPT_CACHE) < 256:
        _ACCEPT_CACHE[accept] = result
    return result


_JSON_CONTENT: dict[bytes | None, bool] = {None: True, b"application/json": True}


def is_json_content(content_type: bytes | None) -> bool:
    """A missing `Content-Type` is taken as JSON; any other media type is not."""
    known = _JSON_CONTENT.get(content_type)
    if known is not None:
        return known
    assert content_type is not None
    result = content_type.split(b";", 1)[0].strip().lower() == b"application/json"
    if len(_JSON_CONTENT) < 256:
        _JSON_CONTENT[content_type] = result
    return result


# -- DNS-rebinding protection -------------------------------------------------------------------

LOOPBACK_HOSTS: Final = ("localhost", "127.0.0.1", "[::1]")
_UNKNOWN: Final = object()


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
    missing `Origin` (a non-browser client) is always allowed.
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
        self._cache: dict[tuple[bytes | None, bytes | None], str | None] = {}

    def _host_ok(self, authority: str) -> bool:
        if self._any_host or authority in self._exact:
            return True
        host = _split_authority(authority)[0]
        if host in self._names:
            return True
        return bool(self._suffixes) and host.endswith(self._suffixes)

    def check(self, host: bytes | None, origin: bytes | None) -> str | None:
        """None when allowed, else the reason (for a 403 body)."""
        key = (host, origin)
        cache = self._cache
        reason = cache.get(key, _UNKNOWN)
        if reason is not _UNKNOWN:
            return reason  # type: ignore[return-value]
        reason = self._decide(host, origin)
        if len(cache) >= 1024:
            cache.clear()
        cache[key] = reason
        return reason

    def _decide(self, host: bytes | None, origin: bytes | None) -> str | None:
        authority = host.decode("latin-1").strip().lower() if host is not None else None
        if authority is not None and not self._host_ok(authority):
            return (
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
        return (
            f"Origin {value!r} is not allowed (allow it with --allow-origin or "
            "HTTPOptions.allowed_origins)"
        )


# -- what a client sends ------------------------------------------------------------------------


def client_headers(
    message: Mapping[str, Any],
    params_of_tool: Mapping[str, tuple[str, ...]] | None = None,
) -> dict[str, str]:
    """The mirrored headers of one modern request: MCP-Protocol-Version, Mcp-Method, Mcp-Name,
    and, for a `tools/call`, one `Mcp-Param-*` per declared argument that has a value.

    Raises ValueError when an argument cannot be mirrored (a number where the schema promised
    an integer, an integer beyond ±(2**53-1)).
    """
    out: dict[str, str] = {}
    method = message.get("method")
    params = message.get("params")
    if not isinstance(params, Mapping):
        params = {}
    meta = params.get("_meta")
    version = meta.get(PROTOCOL_VERSION_KEY) if isinstance(meta, Mapping) else None
    if isinstance(version, str):
        out[Header.PROTOCOL_VERSION] = version
    if "id" not in message:
        return out
    if isinstance(method, str):
        out[Header.METHOD] = method
        field = NAME_SOURCES.get(method)
        if field is not None and isinstance(params.get(field), str):
            out[Header.NAME] = encode_header_value(params[field])
    if params_of_tool and method == Method.TOOLS_CALL:
        arguments = params.get("arguments")
        mirrored = mirrored_headers(
            params_of_tool, arguments if isinstance(arguments, Mapping) else None
        )
        for name, value in mirrored.items():
            out[Header.PARAM_PREFIX + name] = value
    return out


class ScreenedTools(NamedTuple):
    """Tool definitions sorted by whether a Streamable HTTP client may use them (TOOL-17)."""

    valid: list[dict[str, Any]]
    headers: dict[str, dict[str, tuple[str, ...]]]
    """Tool name -> its `x-mcp-header` table (header name -> property path); only tools that
    declare some."""
    rejected: list[tuple[str, str]]
    """(tool name, reason) of each tool left out because of a broken `x-mcp-header`."""


def screen_tools(tools: Iterable[Any]) -> ScreenedTools:
    """Keep the tools whose `x-mcp-header` declarations are valid, drop the others (and only
    those), and collect the header tables the kept ones need for `tools/call`."""
    valid: list[dict[str, Any]] = []
    headers: dict[str, dict[str, tuple[str, ...]]] = {}
    rejected: list[tuple[str, str]] = []
    for tool in tools:
        name = tool.get("name") if isinstance(tool, Mapping) else None
        schema = tool.get("inputSchema") if isinstance(tool, Mapping) else None
        if not isinstance(name, str) or not isinstance(schema, Mapping):
            valid.append(tool)  # not ours to judge: the client's schema checks report it
            continue
        try:
            table = header_params(schema)
        except InvalidHeaderDeclaration as exc:
            rejected.append((name, str(exc)))
            continue
        if table:
            headers[name] = table
        valid.append(tool)
    return ScreenedTools(valid, headers, rejected)
