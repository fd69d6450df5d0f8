"""Reading the headers of one Streamable HTTP request, once: `RequestHeaders` and
`read_headers`.

Below both `mcpkit.protocol.http` (the era of a POST, statuses, negotiation, Host/Origin), which
re-exports these names, and `mcpkit.protocol.http_mirror` (whether the mirrored headers agree
with the body), so neither has to import the other for them. Header names come from
`mcpkit.types.constants.Header`. Sans-IO: imports `mcpkit.types` only; no async, no clock, no
logging.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Final

from mcpkit.types.constants import Header

__all__ = [
    "MAX_CACHED_VALUE",
    "REPEAT_SEPARATOR",
    "RequestHeaders",
    "read_headers",
]

MAX_CACHED_VALUE: Final = 256
"""Longest header value the protocol's caches remember (Accept, Content-Type, Host and Origin,
the mirrored headers). The values that recur on every request are short; a longer one is
judged each time instead, so a client sending ever new long values cannot make the caches
hold their bytes (a cache's entries are bounded too, but each entry would be as long as the
server's header limit allows)."""

REPEAT_SEPARATOR: Final = b"\n"
"""What joins the values of a `Host` or `Origin` sent more than once: a line feed, which no
single header value can hold (HTTP/1.1 servers refuse it), so a joined value never passes for
one sent once, and the Host policy refuses it (`mcpkit.protocol.http.HostPolicy`)."""

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
    and the server read different things, so such a request is refused. For the same reason a
    `Host` or `Origin` sent more than once keeps every value, joined by `REPEAT_SEPARATOR`,
    rather than the last: RFC 9112 answers two Host headers with 400, and a proxy that checked
    the first must not see the server act on the second. `params()` maps the
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
            before = values[slot]
            if before is not None:
                if slot >= _VERSION and duplicate is None:
                    duplicate = _DISPLAY[slot]
                elif slot <= _ORIGIN:
                    value = before + REPEAT_SEPARATOR + value
            values[slot] = value
        elif name.startswith(_PARAM_PREFIX):
            key = name[len(_PARAM_PREFIX):].decode("latin-1")
            if key in params and duplicate is None:
                duplicate = "Mcp-Param-" + key
            params[key] = value
    return RequestHeaders(values, pairs, duplicate, params)
