"""The sans-IO rules of Streamable HTTP: no event loop, no sockets."""

from __future__ import annotations

from typing import Any

import pytest

from mcpkit.errors import HeaderMismatchError
from mcpkit.protocol.codec import Request
from mcpkit.protocol.http import (
    LOOPBACK_HOSTS,
    STATUS_BY_CODE,
    HostPolicy,
    accepts,
    check_request_headers,
    classify_era,
    client_headers,
    http_status,
    is_json_content,
    read_headers,
    route,
    screen_tools,
)

META = {"io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientCapabilities": {}}


def request(method: str = "tools/call", **params: Any) -> Request:
    return Request(1, method, {**params, "_meta": META})


def headers(**values: str) -> list[tuple[bytes, bytes]]:
    names = {"version": "mcp-protocol-version", "method": "mcp-method", "name": "mcp-name"}
    return [(names.get(k, k.replace("_", "-")).encode(), v.encode("utf-8"))
            for k, v in values.items()]


def check(raw: list[tuple[bytes, bytes]], req: Request,
          table: dict[str, tuple[str, ...]] | None = None) -> None:
    check_request_headers(read_headers(raw), req, table)


def refused(raw: list[tuple[bytes, bytes]], req: Request,
            table: dict[str, tuple[str, ...]] | None = None) -> str:
    with pytest.raises(HeaderMismatchError) as info:
        check(raw, req, table)
    assert info.value.code == -32020
    return info.value.message


# -- the status table ---------------------------------------------------------------------------

def test_the_status_table_matches_the_spec() -> None:
    assert dict(STATUS_BY_CODE) == {
        -32700: 400, -32600: 400, -32602: 400, -32020: 400, -32021: 400, -32022: 400,
        -32601: 404, -32603: 500,
    }


def test_application_codes_travel_with_200() -> None:
    assert http_status(-31000) == 200 and http_status(42) == 200


# -- reading headers ----------------------------------------------------------------------------

def test_headers_are_read_in_one_pass_with_params_by_lower_case_name() -> None:
    h = read_headers([(b"host", b"localhost:1"), (b"mcp-method", b"tools/call"),
                      (b"mcp-param-region", b"eu"), (b"x-other", b"1")])
    assert h.host == b"localhost:1" and h.method == b"tools/call"
    assert h.params() == {"region": b"eu"} and h.duplicate is None


@pytest.mark.parametrize("name", [b"mcp-method", b"mcp-name", b"mcp-protocol-version",
                                  b"mcp-session-id", b"mcp-param-region"])
def test_a_repeated_mcp_header_is_noted(name: bytes) -> None:
    assert read_headers([(name, b"a"), (name, b"b")]).duplicate is not None


def test_repeated_ordinary_headers_are_not_our_business() -> None:
    h = read_headers([(b"accept", b"a"), (b"accept", b"b"), (b"mcp-param-x", b"1"),
                      (b"mcp-method", b"m")])
    assert h.duplicate is None and h.params() == {"x": b"1"} and h.method == b"m"


# -- header <-> body ----------------------------------------------------------------------------

def test_matching_headers_pass() -> None:
    check(headers(version="2026-07-28", method="tools/call", name="echo"),
          request(name="echo"))


@pytest.mark.parametrize(
    ("raw", "fragment"),
    [
        (headers(version="2026-07-28", name="echo"), "Mcp-Method header is required"),
        (headers(version="2026-07-28", method="tools/list", name="echo"),
         "Mcp-Method header value 'tools/list' does not match body method 'tools/call'"),
        (headers(version="2026-07-28", method="Tools/Call", name="echo"), "does not match"),
        (headers(version="2026-07-28", method="tools/call"), "Mcp-Name header is required"),
        (headers(version="2026-07-28", method="tools/call", name="ECHO"),
         "Mcp-Name header value 'ECHO' does not match body value 'echo'"),
        (headers(method="tools/call", name="echo"), "MCP-Protocol-Version header is required"),
        (headers(version="2025-11-25", method="tools/call", name="echo"),
         "MCP-Protocol-Version header value '2025-11-25' does not match body value"),
        (headers(version="2026-07-28", method="tools/call\x01", name="echo"),
         "invalid character"),
        (headers(version="2026-07-28", method="tools/call", name="=?base64?ZWNobw?=?="),
         "Mcp-Name: invalid Base64"),
        (headers(version="2026-07-28", method="tools/call", name="\u00e9cho"),
         "Mcp-Name: header value"),
    ],
)
def test_each_standard_header_rule(raw: list[tuple[bytes, bytes]], fragment: str) -> None:
    assert fragment in refused(raw, request(name="echo"))


def test_duplicates_are_refused_before_anything_else() -> None:
    raw = headers(version="2026-07-28", method="tools/call", name="echo")
    raw.append((b"mcp-method", b"tools/call"))
    assert "appears more than once" in refused(raw, request(name="echo"))


def test_ows_around_values_is_stripped_and_the_sentinel_decoded() -> None:
    check(headers(version=" 2026-07-28 ", method="\ttools/call ", name="  echo  "),
          request(name="echo"))
    check(headers(version="2026-07-28", method="resources/read",
                  name="=?base64?ZmlsZTovLy/mlofku7Y=?="),
          request("resources/read", uri="file:///文件"))


def test_a_body_without_a_version_is_left_to_the_envelope_check() -> None:
    check(headers(version="2026-07-28", method="server/discover"),
          Request(1, "server/discover", {}))


def test_name_is_only_checked_for_methods_that_mirror_one() -> None:
    check(headers(version="2026-07-28", method="tools/list"), request("tools/list"))


TABLE = {"Region": ("region",), "Priority": ("priority",), "Zone": ("target", "zone")}


def call_with(**arguments: Any) -> Request:
    return request(name="route", arguments=arguments)


def base(**params: str) -> list[tuple[bytes, bytes]]:
    raw = headers(version="2026-07-28", method="tools/call", name="route")
    raw += [(f"mcp-param-{k.lower()}".encode(), v.encode("utf-8")) for k, v in params.items()]
    return raw


def test_param_headers_agree_with_the_body_at_their_paths() -> None:
    check(base(Region="eu", Priority="7", Zone="z"),
          call_with(region="eu", priority=7, target={"zone": "z"}), TABLE)


@pytest.mark.parametrize(
    ("params", "arguments", "fragment"),
    [
        ({}, {"region": "eu"}, "the Mcp-Param-Region header is required"),
        ({"Region": "eu", "Priority": "1"}, {"region": "eu"},
         "Mcp-Param-Priority header is present but the body has no arguments.priority"),
        ({"Region": "us"}, {"region": "eu"}, "Mcp-Param-Region header value 'us' does not match"),
        ({"Region": "=?base64?SGVsbG8?="}, {"region": "Hello"}, "missing padding"),
        ({"Region": "=?base64?SGVs!!!bG8=?="}, {"region": "Hello"}, "Base64 alphabet"),
        ({"Region": "eu", "Zone": "y"}, {"region": "eu", "target": {"zone": "z"}},
         "(arguments.target.zone)"),
        ({"Region": "eu", "Priority": "7.5"}, {"region": "eu", "priority": 7}, "does not match"),
    ],
)
def test_each_param_header_rule(params: dict[str, str], arguments: dict[str, Any],
                                fragment: str) -> None:
    assert fragment in refused(base(**params), call_with(**arguments), TABLE)


def test_absent_and_null_values_expect_no_header() -> None:
    check(base(Region="eu"), call_with(region="eu", priority=None), TABLE)
    check(base(), call_with(), TABLE)


def test_integers_compare_numerically() -> None:
    check(base(Region="eu", Priority="42.0"), call_with(region="eu", priority=42), TABLE)


# -- era ----------------------------------------------------------------------------------------

@pytest.mark.parametrize(
    ("session", "version", "params", "method", "era"),
    [
        (b"abc", b"2026-07-28", {"_meta": META}, "tools/list", "session"),
        (None, None, {"_meta": META}, "tools/list", "modern"),
        (None, None, {"_meta": {}}, "tools/list", "modern"),
        (None, None, {"_meta": {"progressToken": 1}}, "initialize", "legacy"),
        (None, None, {"_meta": META}, "initialize", "modern"),
        (None, b"2026-07-28", {}, "server/discover", "modern"),
        (None, b"1900-01-01", {}, "tools/list", "modern"),
        (None, b"2025-06-18", {}, "initialize", "legacy"),
        (None, None, {}, "tools/list", "legacy"),
        (None, None, None, "initialize", "legacy"),
    ],
)
def test_era_classification(session: bytes | None, version: bytes | None,
                            params: dict[str, Any] | None, method: str, era: str) -> None:
    assert classify_era(session, version, Request(1, method, params)) == era


@pytest.mark.parametrize(
    ("method", "session", "message", "wanted"),
    [
        ("POST", None, Request(1, "initialize", None), "legacy"),
        ("POST", b"abc", Request(1, "tools/list", None), "session"),
        ("POST", None, Request(1, "tools/list", {"_meta": META}), "modern"),
        ("GET", b"abc", None, "session"),
        ("DELETE", b"abc", None, "session"),
        ("GET", None, None, "modern"),
        ("DELETE", None, None, "modern"),
        ("PUT", b"abc", None, "modern"),
    ],
)
def test_each_http_request_takes_one_route(method: str, session: bytes | None,
                                           message: Request | None, wanted: str) -> None:
    # GET and DELETE belong to a session; anything else without a body is the modern
    # endpoint's to refuse with 405.
    assert route(method, session, None, message) == wanted


# -- media types --------------------------------------------------------------------------------

@pytest.mark.parametrize(
    ("accept", "json_ok", "sse_ok"),
    [
        (None, True, True),
        (b"application/json, text/event-stream", True, True),
        (b"application/json", True, False),
        (b"text/event-stream", False, True),
        (b"*/*", True, True),
        (b"text/*;q=0.5, application/*", True, True),
        (b"text/html", False, False),
        (b"application/json;q=0, text/event-stream", False, True),
    ],
)
def test_accept_negotiation(accept: bytes | None, json_ok: bool, sse_ok: bool) -> None:
    assert accepts(accept) == (json_ok, sse_ok)


def test_content_type_must_be_json_when_given() -> None:
    assert is_json_content(None) and is_json_content(b"application/json; charset=utf-8")
    assert not is_json_content(b"text/plain")


# -- Host / Origin ------------------------------------------------------------------------------

@pytest.mark.parametrize(
    ("host", "origin", "allowed"),
    [
        (b"localhost:8000", None, True),
        (b"127.0.0.1", None, True),
        (b"[::1]:9", b"http://[::1]:9", True),
        (b"LOCALHOST:8000", b"http://localhost:3000", True),
        (None, None, True),
        (b"evil.example.com", None, False),
        (b"localhost.evil.example.com", None, False),
        (b"localhost:8000", b"http://evil.example.com", False),
        (b"localhost:8000", b"null", False),
        (b"localhost:8000", b"file://", False),
    ],
)
def test_the_default_policy_allows_loopback_only(host: bytes | None, origin: bytes | None,
                                                 allowed: bool) -> None:
    assert (HostPolicy().check(host, origin) is None) is allowed


def test_a_configured_policy_for_a_reverse_proxy() -> None:
    policy = HostPolicy((*LOOPBACK_HOSTS, "mcp.example.com", "api.example.com:8443",
                         "*.internal.example"), ("https://app.example.com",))
    assert policy.check(b"mcp.example.com", b"https://app.example.com") is None
    assert policy.check(b"api.example.com:8443", None) is None
    assert policy.check(b"api.example.com:9999", None) is not None
    assert policy.check(b"a.internal.example", None) is None
    assert policy.check(b"mcp.example.com", b"https://mcp.example.com") is not None
    reason = policy.check(b"evil.example.com", None)
    assert reason is not None and "--allow-host" in reason


def test_any_host_still_requires_same_origin_browsers() -> None:
    policy = HostPolicy(("*",))
    assert policy.check(b"whatever.example:80", None) is None
    assert policy.check(b"mcp.example.com", b"https://mcp.example.com") is None
    assert policy.check(b"mcp.example.com", b"https://evil.example.com") is not None
    assert HostPolicy(("*",), ("*",)).check(b"x", b"https://evil.example.com") is None


# -- what a client sends ------------------------------------------------------------------------

def message(method: str, **params: Any) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "id": 1, "method": method, "params": {**params, "_meta": META}}


def test_client_headers_mirror_version_method_and_name() -> None:
    assert client_headers(message("tools/call", name="get-weather_v2", arguments={})) == {
        "mcp-protocol-version": "2026-07-28", "mcp-method": "tools/call",
        "mcp-name": "get-weather_v2"}
    uri = "file:///path/to/file%20name.txt"
    assert client_headers(message("resources/read", uri=uri))["mcp-name"] == uri
    assert "mcp-name" not in client_headers(message("tools/list"))
    assert client_headers(message("prompts/get", name="caf\u00e9"))["mcp-name"] == (
        "=?base64?Y2Fmw6k=?=")


def test_notifications_carry_no_method_header() -> None:
    note = {"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": 1}}
    assert client_headers(note) == {}


def test_param_headers_follow_the_declarations_and_encoding_rules() -> None:
    table = {"Region": ("region",), "Priority": ("priority",), "Verbose": ("verbose",),
             "Method": ("method",), "Greeting": ("greeting",), "Empty": ("empty",),
             "Deep": ("a", "b")}
    sent = client_headers(message("tools/call", name="t", arguments={
        "region": "us-west1", "priority": 42, "verbose": False, "method": "test-method",
        "greeting": "Hello, 世界", "empty": "", "a": {"b": " x"}, "query": "SELECT 1"}), table)
    assert {k: v for k, v in sent.items() if k.startswith("mcp-param-")} == {
        "mcp-param-Region": "us-west1", "mcp-param-Priority": "42",
        "mcp-param-Verbose": "false", "mcp-param-Method": "test-method",
        "mcp-param-Greeting": "=?base64?SGVsbG8sIOS4lueVjA==?=", "mcp-param-Empty": "",
        "mcp-param-Deep": "=?base64?IHg=?="}
    assert sent["mcp-method"] == "tools/call"
    none = client_headers(message("tools/call", name="t", arguments={"region": None}), table)
    assert not any(k.startswith("mcp-param-") for k in none)


def test_a_value_that_cannot_be_mirrored_is_an_error_naming_it() -> None:
    with pytest.raises(ValueError, match="Priority"):
        client_headers(message("tools/call", name="t", arguments={"priority": [1]}),
                       {"Priority": ("priority",)})


def tool(name: str, prop: dict[str, Any]) -> dict[str, Any]:
    return {"name": name, "inputSchema": {"type": "object", "properties": {"p": prop}}}


def test_screening_drops_only_tools_with_broken_declarations() -> None:
    tools = [
        tool("valid_tool", {"type": "string", "x-mcp-header": "Region"}),
        tool("plain", {"type": "string"}),
        tool("invalid_empty_header", {"type": "string", "x-mcp-header": ""}),
        tool("invalid_object_header", {"type": "object", "x-mcp-header": "O"}),
        tool("invalid_array_header", {"type": "array", "x-mcp-header": "A"}),
        tool("invalid_null_header", {"type": "null", "x-mcp-header": "N"}),
        tool("invalid_number_header", {"type": "number", "x-mcp-header": "F"}),
        tool("invalid_space_in_name", {"type": "string", "x-mcp-header": "My Region"}),
        tool("invalid_colon_in_name", {"type": "string", "x-mcp-header": "Region:"}),
        tool("invalid_non_ascii_name", {"type": "string", "x-mcp-header": "Régión"}),
        tool("invalid_control_char_name", {"type": "string", "x-mcp-header": "Reg\tion"}),
        {"name": "invalid_duplicate_diff_case", "inputSchema": {"type": "object", "properties": {
            "a": {"type": "string", "x-mcp-header": "Region"},
            "b": {"type": "string", "x-mcp-header": "REGION"}}}},
        {"name": "invalid_in_items", "inputSchema": {"type": "object", "properties": {
            "a": {"type": "array", "items": {"type": "string", "x-mcp-header": "I"}}}}},
    ]
    screened = screen_tools(tools)
    assert [t["name"] for t in screened.valid] == ["valid_tool", "plain"]
    assert screened.headers == {"valid_tool": {"Region": ("p",)}}
    assert [name for name, _ in screened.rejected] == [t["name"] for t in tools[2:]]
    assert all(reason for _, reason in screened.rejected)


def test_an_allowed_ipv6_host_with_a_port_allows_that_port_only() -> None:
    # The port follows the closing bracket; the colons inside the brackets are the address's.
    policy = HostPolicy(("[2001:db8::1]:8443", "[2001:db8::2]"))
    assert policy.check(b"[2001:db8::1]:8443", None) is None
    assert policy.check(b"[2001:db8::1]:9999", None) is not None
    assert policy.check(b"[2001:db8::1]", None) is not None
    assert policy.check(b"[2001:db8::2]:9999", None) is None  # a bare name allows any port
