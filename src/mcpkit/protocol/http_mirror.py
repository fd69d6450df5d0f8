"""The mirrored headers of a modern request over Streamable HTTP: what a client sends
(`MCP-Protocol-Version`, `Mcp-Method`, `Mcp-Name`, `Mcp-Param-*`), which tools it may call
with them, and, on the server, whether they agree with the body before either is trusted.

Kept apart from `mcpkit.protocol.http` (the era of a POST, statuses, Host/Origin), which
re-exports every public name here; both read a request's headers through
`mcpkit.protocol.headers`, below them. Which body field `Mcp-Name` mirrors is a fact of the
method, read from `mcpkit.types.methods.METHODS`. Value encoding (the
`=?base64?...?=` sentinel) and the `x-mcp-header` rules come from
`mcpkit.protocol.mcp_headers`. Sans-IO: imports `mcpkit.types`, `mcpkit.errors` and
`mcpkit.protocol` only; no async, no clock, no logging.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any, Final, NamedTuple

from mcpkit.errors import HeaderMismatchError
from mcpkit.protocol.codec import Request
from mcpkit.protocol.headers import MAX_CACHED_VALUE, RequestHeaders
from mcpkit.protocol.mcp_headers import (
    InvalidHeaderDeclaration,
    decode_header_value,
    encode_header_value,
    header_matches_body,
    header_params,
    mirrored_headers,
)
from mcpkit.types.constants import PROTOCOL_VERSION_KEY, Header
from mcpkit.types.methods import METHODS, Method

__all__ = [
    "ScreenedTools",
    "check_request_headers",
    "client_headers",
    "screen_tools",
]

# -- header <-> body agreement (server side) ----------------------------------------------------


def _mismatch(message: str) -> HeaderMismatchError:
    return HeaderMismatchError(f"Header mismatch: {message}")


_PLAIN_SEEN: dict[bytes, str] = {}
_NAMES_SEEN: dict[bytes, str] = {}
"""Header values already read and found valid: the same few recur on every request. At most
`SEEN_ENTRIES` each, none longer than `MAX_CACHED_VALUE` (an `Mcp-Name` can be a long URI:
it is decoded each time)."""
SEEN_ENTRIES: Final = 1024


def _remember(cache: dict[bytes, str], raw: bytes, value: str) -> str:
    if len(raw) <= MAX_CACHED_VALUE:
        if len(cache) >= SEEN_ENTRIES:
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
    raw = headers.method  # the caches read here, not through `_plain` and `_name`: every request
    sent = _PLAIN_SEEN.get(raw) or _plain(raw, "Mcp-Method")
    if sent != method:
        raise _mismatch(f"Mcp-Method header value {sent!r} does not match body method {method!r}")
    params = request.params or {}
    info = METHODS.get(method)
    field = info.mcp_name if info is not None else None
    if field is not None:
        body_name = params.get(field)
        if type(body_name) is str:
            if headers.name is None:
                raise _mismatch(
                    f"the Mcp-Name header is required for {method} (set it to params.{field})"
                )
            raw = headers.name
            name = _NAMES_SEEN.get(raw) or _name(raw)
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
        raw = headers.version
        version = _PLAIN_SEEN.get(raw) or _plain(raw, "MCP-Protocol-Version")
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
        info = METHODS.get(method)
        field = info.mcp_name if info is not None else None
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
