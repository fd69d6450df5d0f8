"""The mirrored headers of a modern HTTP request and the Base64 sentinel, as a client may send
them.

Whatever header bytes and body arrive, the server's check (`check_request_headers` over
`read_headers`) accepts or refuses with HeaderMismatchError (-32020) and a message naming the
header; nothing else escapes. The other direction is held to the specification, not to our own
server: for any tool name, URI and mirrored argument value, the headers our client writes
(`client_headers`) are the ones `spec_headers` below derives from the request as HTTP-10, -15 and
-16 word it (written here from the text, sharing no code with mcpkit), and the server's check
accepts exactly those; the sentinel writes what HTTP-16 says and reads it back.
"""

from __future__ import annotations

import base64
from typing import Any

from hypothesis import example, given
from hypothesis import strategies as st
from peer_values import json_values, near_miss_params

from mcpkit.errors import HeaderMismatchError
from mcpkit.protocol.codec import Request
from mcpkit.protocol.headers import read_headers
from mcpkit.protocol.http_mirror import check_request_headers, client_headers
from mcpkit.protocol.mcp_headers import (
    MAX_SAFE_INTEGER,
    SENTINEL_PREFIX,
    SENTINEL_SUFFIX,
    decode_header_value,
    encode_header_value,
    header_matches_body,
)
from mcpkit.types.constants import MODERN_VERSION, PROTOCOL_VERSION_KEY
from mcpkit.types.methods import METHODS

CLIENT_METHODS = sorted(name for name, m in METHODS.items() if m.by_client and m.is_request)
HEADER_NAMES = st.sampled_from([
    b"mcp-method", b"mcp-name", b"mcp-protocol-version", b"mcp-param-region", b"mcp-param-n",
    b"mcp-param-flag", b"mcp-session-id", b"host", b"accept", b"content-type",
]) | st.binary(min_size=1, max_size=12)
HEADER_VALUES = st.binary(max_size=40) | st.sampled_from([
    b"tools/call", b"add", MODERN_VERSION.encode(), b"=?base64?YWRk?=", b"=?base64?YWRk?",
    b"=?base64?YW=k?=", b"=?base64?YWQ?=", b"=?base64?/w==?=", b" add\t", b"\xe4dd", b"1e999999",
    b"=?BASE64?YWRk?=",
])
TABLE = {"Region": ("region",), "N": ("n",), "Flag": ("opts", "flag")}
"""An `x-mcp-header` table (header name -> argument path), as a tool may declare one."""


def _checked(raw: list[tuple[bytes, bytes]], request: Request,
             table: dict[str, tuple[str, ...]] | None) -> HeaderMismatchError | None:
    try:
        check_request_headers(read_headers(raw), request, table)
    except HeaderMismatchError as exc:
        assert exc.to_error()["code"] == -32020
        assert exc.message.startswith("Header mismatch: "), exc.message
        return exc
    return None


@given(st.lists(st.tuples(HEADER_NAMES, HEADER_VALUES), max_size=8),
       st.sampled_from(CLIENT_METHODS), near_miss_params(), st.booleans())
@example([(b"mcp-method", b"tools/call"), (b"mcp-protocol-version", b"2026-07-28"),
          (b"mcp-name", b"=?base64?//79?=")], "tools/call", {"name": "x"}, False)
@example([(b"mcp-method", b"tools/call"), (b"mcp-protocol-version", b"2026-07-28"),
          (b"mcp-param-n", b"1e999999999999999999")], "tools/call",
         {"arguments": {"n": 1}}, True)
def test_any_headers_and_body_are_accepted_or_refused_as_a_mismatch(
    raw: list[tuple[bytes, bytes]], method: str, params: Any, with_table: bool
) -> None:
    request = Request(1, method, params if type(params) is dict else None)
    _checked(raw, request, TABLE if with_table else None)


def _as_sent(headers: dict[str, str]) -> list[tuple[bytes, bytes]]:
    """Headers as an HTTP client puts them on the wire and an ASGI server hands them on:
    lower-cased names, values as ASCII bytes (a client cannot send anything else)."""
    return [(name.lower().encode("ascii"), value.encode("ascii")) for name, value in headers.items()]


def spec_value(value: Any) -> str:
    """One mirrored value as HTTP-15 and HTTP-16 say: a boolean `true`/`false`, an integer in
    decimal, a string as it is unless it holds anything but printable ASCII (control characters,
    CR, LF and TAB included), starts or ends with whitespace, or itself looks like the sentinel
    (starts `=?base64?`, ends `?=`): then `=?base64?` + the Base64 of its UTF-8 + `?=`."""
    if type(value) is bool:
        return "true" if value else "false"
    if type(value) is int:
        return str(value)
    printable = all(32 <= ord(ch) <= 126 for ch in value)
    padded = value != value.strip(" \t")
    looks_encoded = value.startswith("=?base64?") and value.endswith("?=")
    if printable and not padded and not looks_encoded:
        return str(value)
    return "=?base64?" + base64.b64encode(value.encode("utf-8")).decode("ascii") + "?="


def spec_headers(message: dict[str, Any], table: dict[str, tuple[str, ...]]) -> dict[str, str]:
    """HTTP-10's headers of a request (names lower-cased): the protocol version from `_meta`,
    the method, the name (`params.name`, or `params.uri` for resources/read), and for a
    tools/call one `mcp-param-{name}` per `x-mcp-header` argument present and not null (an
    integral number counts as the integer it is). ValueError for a value no header can carry."""
    params = message["params"]
    out = {"mcp-protocol-version": params["_meta"][PROTOCOL_VERSION_KEY],
           "mcp-method": message["method"]}
    field = {"tools/call": "name", "prompts/get": "name", "resources/read": "uri",
             "tasks/get": "taskId", "tasks/update": "taskId", "tasks/cancel": "taskId"
             }.get(message["method"])
    if field is not None and type(params.get(field)) is str:
        out["mcp-name"] = spec_value(params[field])
    if message["method"] != "tools/call":
        return out
    for header, path in table.items():
        value: Any = params.get("arguments")
        for key in path:
            value = value.get(key) if type(value) is dict else None
        if value is None:
            continue
        if type(value) is float:
            if not value.is_integer():
                raise ValueError(f"{value} is no integer")
            value = int(value)
        out[f"mcp-param-{header.lower()}"] = spec_value(value)
    return out


ARGUMENT_VALUES = st.one_of(
    st.text(max_size=30), st.integers(-MAX_SAFE_INTEGER, MAX_SAFE_INTEGER), st.booleans(),
    st.integers(-(2**40), 2**40).map(float), st.floats(-1e6, 1e6), st.none(),
)


@given(st.sampled_from(CLIENT_METHODS), st.text(max_size=40), ARGUMENT_VALUES, ARGUMENT_VALUES,
       ARGUMENT_VALUES, json_values(4))
@example("tools/call", " leading space", "=?base64?YWRk?=", 0, True, None)
@example("resources/read", "file:///tmp/\u00e9t\u00e9 \t.txt", "", -0.0, False, None)
@example("tools/call", "us west 1", "line1\nline2", 1.5, None, None)
def test_our_client_mirrors_what_the_spec_says_and_our_server_accepts_it(
    method: str, name: str, region: Any, n: Any, flag: Any, other: Any
) -> None:
    field = METHODS[method].mcp_name
    params: dict[str, Any] = {"_meta": {PROTOCOL_VERSION_KEY: MODERN_VERSION}}
    if field is not None:
        params[field] = name
    arguments = {"region": region, "n": n, "opts": {"flag": flag}, "other": other}
    params["arguments"] = arguments
    message = {"jsonrpc": "2.0", "id": 7, "method": method, "params": params}
    try:
        expected = spec_headers(message, TABLE)
    except ValueError:
        expected = None
    try:
        headers = client_headers(message, TABLE)
    except ValueError:
        # A value that cannot be mirrored (a number that is no integer where a header is
        # declared): the client refuses to send the call at all, as the spec leaves it no header.
        assert expected is None, expected
        return
    assert {k.lower(): v for k, v in headers.items()} == expected
    request = Request(7, method, params)
    refused = _checked(_as_sent(expected), request, TABLE if method == "tools/call" else None)
    assert refused is None, refused


@given(st.text(max_size=60))
@example(SENTINEL_PREFIX + "YWRk" + SENTINEL_SUFFIX)
@example(" x")
@example("x\t")
@example("\x7f")
def test_the_sentinel_writes_what_the_spec_says_and_reads_it_back(value: str) -> None:
    encoded = spec_value(value)
    assert encode_header_value(value) == encoded
    assert decode_header_value(encoded) == value
    assert header_matches_body(decode_header_value(encoded), value)


@given(st.text(max_size=60) | st.binary(max_size=60).map(lambda b: b.decode("latin-1")))
@example("=?base64?" + "A" * 3 + "?=")
@example("=?base64?====?=")
@example("=?base64?8J+Y?=")
def test_any_received_value_reads_as_one_string_or_is_refused(raw: str) -> None:
    try:
        value = decode_header_value(raw)
    except ValueError as exc:
        assert str(exc), raw
        return
    assert type(value) is str
    if not raw.strip(" \t").startswith(SENTINEL_PREFIX):
        assert value == raw.strip(" \t")


@given(st.text(max_size=30) | st.sampled_from(["1", "1.0", "1e3", "-0", "1e999999999999999999",
                                                "1e-999999999999999999", "9" * 400]),
       json_values(2))
def test_a_header_is_compared_with_any_body_value_without_error(decoded: str, body: Any) -> None:
    assert type(header_matches_body(decoded, body)) is bool
