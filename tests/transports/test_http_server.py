"""The modern (2026-07-28) HTTP endpoint, against a real `mcpkit run --http` process."""

from __future__ import annotations

import asyncio
import signal
from collections.abc import AsyncIterator, Awaitable, Callable
from typing import Any
from urllib.parse import urlsplit

import httpx
import orjson
import pytest
from helpers.transports.http_peer import (
    FEATURES,
    Peer,
    Reply,
    ServerProcess,
    chunk,
    head,
    mirrored,
    raw_post,
    read_response,
)
from helpers.wire import MODERN, check_server_message

from mcpkit.protocol.http import STATUS_BY_CODE


@pytest.fixture
async def peer(features: ServerProcess) -> AsyncIterator[Peer]:
    async with httpx.AsyncClient(timeout=15) as client:
        yield Peer(features.url, client)


async def call(peer: Peer, name: str, arguments: dict[str, Any] | None = None,
               headers: dict[str, str] | None = None, **meta_extra: Any) -> Reply:
    message = peer.request_message("tools/call", {"name": name, "arguments": arguments or {}},
                                   **meta_extra)
    return await peer.post(message, headers)


# -- the error code -> HTTP status table, one row at a time ------------------------------------

async def _parse_error(peer: Peer) -> Reply:
    return await peer.post(b'{"jsonrpc": "2.0", "id": 1, "method":',
                           {"MCP-Protocol-Version": "2026-07-28"})


async def _invalid_request(peer: Peer) -> Reply:
    return await peer.post(b'{"jsonrpc": "1.0", "id": 7, "method": "tools/list"}',
                           {"MCP-Protocol-Version": "2026-07-28", "Mcp-Method": "tools/list"})


async def _unknown_method(peer: Peer) -> Reply:
    return await peer.post(peer.request_message("tools/frobnicate"), check_client=False)


async def _unknown_tool(peer: Peer) -> Reply:
    return await call(peer, "no_such_tool")


async def _header_mismatch(peer: Peer) -> Reply:
    return await call(peer, "echo", {"text": "x"}, {"Mcp-Name": "boom"})


async def _missing_capability(peer: Peer) -> Reply:
    return await call(peer, "needs_sampling")


async def _unsupported_version(peer: Peer) -> Reply:
    message = peer.request_message("tools/list", **{
        "io.modelcontextprotocol/protocolVersion": "1900-01-01"})
    return await peer.post(message, check_client=False)


async def _internal_error(peer: Peer) -> Reply:
    return await call(peer, "fail_late")


async def _rate_limited(peer: Peer) -> Reply:
    await call(peer, "limited")  # the first call of the hour may pass; the next cannot
    return await call(peer, "limited")


STATUS_CASES: dict[int, tuple[Callable[[Peer], Awaitable[Reply]], Any]] = {
    -32700: (_parse_error, None),
    -32600: (_invalid_request, 7),
    -32601: (_unknown_method, "id"),
    -32602: (_unknown_tool, "id"),
    -32020: (_header_mismatch, "id"),
    -32021: (_missing_capability, "id"),
    -32022: (_unsupported_version, "id"),
    -32603: (_internal_error, "id"),
}


def test_every_row_of_the_status_table_has_a_case() -> None:
    assert set(STATUS_CASES) == set(STATUS_BY_CODE)


@pytest.mark.parametrize("code", sorted(STATUS_CASES))
async def test_each_error_code_travels_with_its_status_and_the_request_id(
    peer: Peer, code: int
) -> None:
    make, expected_id = STATUS_CASES[code]
    reply = await make(peer)
    assert reply.status == STATUS_BY_CODE[code]
    assert reply.media == "application/json"
    assert reply.error["code"] == code
    if expected_id == "id":
        expected_id = peer.ids
    assert reply.message.get("id") == expected_id


async def test_a_rate_limited_call_says_when_to_retry_in_its_data_and_retry_after(
        peer: Peer) -> None:
    reply = await _rate_limited(peer)
    assert reply.status == 429
    assert reply.error["code"] == -32602
    wait = reply.error["data"]["retryAfterS"]
    assert 0 < wait <= 3600
    assert int(reply.headers["retry-after"]) == wait


async def test_capability_and_version_errors_carry_their_data(peer: Peer) -> None:
    assert (await _missing_capability(peer)).error["data"] == {
        "requiredCapabilities": {"sampling": {}}}
    data = (await _unsupported_version(peer)).error["data"]
    assert data["requested"] == "1900-01-01" and "2026-07-28" in data["supported"]


async def test_removed_legacy_methods_are_unknown_to_modern_requests(peer: Peer) -> None:
    reply = await peer.post(peer.request_message("ping"), check_client=False)
    assert reply.status == 404 and reply.error["code"] == -32601
    assert "2025-11-25" in reply.error["message"]


async def test_missing_meta_fields_are_invalid_params_even_with_the_header(peer: Peer) -> None:
    for params in ({}, {"_meta": {"io.modelcontextprotocol/clientCapabilities": {}}},
                   {"_meta": {"io.modelcontextprotocol/protocolVersion": "2026-07-28"}}):
        message = {"jsonrpc": "2.0", "id": 5, "method": "server/discover", "params": params}
        reply = await peer.post(message, {"MCP-Protocol-Version": "2026-07-28"},
                                check_client=False)
        assert reply.status == 400 and reply.error["code"] == -32602, params


# -- mirrored headers ---------------------------------------------------------------------------

@pytest.mark.parametrize("name", ["Mcp-Method", "mcp-method", "MCP-METHOD"])
async def test_header_names_are_case_insensitive(peer: Peer, name: str) -> None:
    message = peer.request_message("tools/list")
    headers = mirrored(message)
    del headers["Mcp-Method"]
    headers[name] = "tools/list"
    reply = await peer.post(message, headers, mirror=False)
    assert reply.status == 200 and reply.message["result"]["tools"]


@pytest.mark.parametrize(
    ("headers", "fragment"),
    [
        ({"Mcp-Method": None}, "Mcp-Method header is required"),
        ({"Mcp-Method": "tools/list"}, "does not match body method 'tools/call'"),
        ({"Mcp-Method": "TOOLS/CALL"}, "does not match body method"),
        ({"Mcp-Name": None}, "Mcp-Name header is required"),
        ({"Mcp-Name": "route"}, "Mcp-Name header value 'route' does not match body value 'echo'"),
        ({"MCP-Protocol-Version": None}, "MCP-Protocol-Version header is required"),
        ({"MCP-Protocol-Version": "2025-11-25"}, "does not match body value '2026-07-28'"),
        ({"Mcp-Name": "=?base64?ZWNobw?=?="}, "invalid Base64"),
    ],
)
async def test_missing_or_mismatched_standard_headers_are_refused_naming_the_header(
    peer: Peer, headers: dict[str, str | None], fragment: str
) -> None:
    message = peer.request_message("tools/call", {"name": "echo", "arguments": {"text": "x"}})
    sent = {k: v for k, v in {**mirrored(message), **headers}.items() if v is not None}
    reply = await peer.post(message, sent, mirror=False)
    assert reply.status == 400 and reply.error["code"] == -32020
    assert fragment in reply.error["message"]


@pytest.mark.parametrize("value", ["  echo  ", "\techo", "=?base64?ZWNobw==?="])
async def test_name_header_may_be_padded_or_base64_encoded(
    peer: Peer, features: ServerProcess, value: str
) -> None:
    message = peer.request_message("tools/call", {"name": "echo", "arguments": {"text": "hi"}})
    headers = {**mirrored(message), "Mcp-Name": value}
    status, body = await raw_post(features.port, list(headers.items()), orjson.dumps(message))
    assert status == 200 and body is not None
    check_server_message(MODERN, body, "tools/call")
    assert body["result"]["content"][0]["text"] == "hi"


async def test_resource_and_prompt_names_are_checked(peer: Peer) -> None:
    read = peer.request_message("resources/read", {"uri": "memo://notes/today"})
    assert (await peer.post(read)).status == 200
    assert (await peer.post(read, {"Mcp-Name": "memo://notes/other"})).error["code"] == -32020
    get = peer.request_message("prompts/get", {"name": "greet", "arguments": {"name": "Ada"}})
    assert (await peer.post(get)).status == 200
    assert (await peer.post(get, {"Mcp-Name": "greet2"})).status == 400


async def test_a_header_sent_twice_is_refused(peer: Peer) -> None:
    message = peer.request_message("tools/list")
    headers = [*mirrored(message).items(), ("Mcp-Method", "tools/list")]
    response = await peer.client.post(peer.url, content=orjson.dumps(message), headers=headers)
    assert response.status_code == 400
    assert "appears more than once" in response.json()["error"]["message"]


# The digest's Base64-sentinel examples, sent as a client must encode them.
SENTINEL_EXAMPLES = [
    ("us-west1", "us-west1"),
    ("us west 1", "us west 1"),
    ("Hello, 世界", "=?base64?SGVsbG8sIOS4lueVjA==?="),
    (" padded ", "=?base64?IHBhZGRlZCA=?="),
    ("line1\nline2", "=?base64?bGluZTEKbGluZTI=?="),
    ("=?base64?literal?=", "=?base64?PT9iYXNlNjQ/bGl0ZXJhbD89?="),
    ("\tindented", "=?base64?CWluZGVudGVk?="),
    ("", ""),
]


@pytest.mark.parametrize(("value", "header"), SENTINEL_EXAMPLES)
async def test_param_headers_are_decoded_and_compared_with_the_body(
    peer: Peer, value: str, header: str
) -> None:
    reply = await call(peer, "route", {"region": value}, {"Mcp-Param-Region": header})
    assert reply.status == 200, reply.body
    assert reply.message["result"]["structuredContent"]["region"] == value


@pytest.mark.parametrize("header", ["=?base64?SGVsbG8?=", "=?base64?SGVs!!!bG8=?="])
async def test_base64_is_decoded_strictly(peer: Peer, header: str) -> None:
    reply = await call(peer, "route", {"region": "Hello"}, {"Mcp-Param-Region": header})
    assert reply.status == 400 and reply.error["code"] == -32020
    assert "Mcp-Param-Region" in reply.error["message"]


@pytest.mark.parametrize("literal", ["SGVsbG8=", "=?base64?SGVsbG8=", "SGVsbG8=?=",
                                     "=?BASE64?SGVsbG8=?="])
async def test_values_without_the_exact_sentinel_are_literal(peer: Peer, literal: str) -> None:
    reply = await call(peer, "route", {"region": literal}, {"Mcp-Param-Region": literal})
    assert reply.status == 200
    refused = await call(peer, "route", {"region": "Hello"}, {"Mcp-Param-Region": literal})
    assert refused.status == 400


async def test_a_declared_param_present_in_the_body_needs_its_header(peer: Peer) -> None:
    reply = await call(peer, "route", {"region": "eu"})
    assert reply.status == 400
    assert "Mcp-Param-Region header is required" in reply.error["message"]


async def test_null_or_absent_values_need_no_header_but_refuse_one(peer: Peer) -> None:
    ok = await call(peer, "route", {"region": "eu", "priority": None},
                    {"Mcp-Param-Region": "eu"})
    assert ok.status == 200
    stray = await call(peer, "route", {"region": "eu"},
                       {"Mcp-Param-Region": "eu", "Mcp-Param-Priority": "3"})
    assert stray.status == 400 and "Mcp-Param-Priority" in stray.error["message"]


async def test_integers_compare_numerically_and_booleans_exactly(peer: Peer) -> None:
    args = {"region": "eu", "priority": 42, "verbose": True}
    base = {"Mcp-Param-Region": "eu", "Mcp-Param-Verbose": "true"}
    assert (await call(peer, "route", args, {**base, "Mcp-Param-Priority": "42.0"})).status == 200
    assert (await call(peer, "route", args, {**base, "Mcp-Param-Priority": "41"})).status == 400
    capital = {**base, "Mcp-Param-Priority": "42", "Mcp-Param-Verbose": "True"}
    assert (await call(peer, "route", args, capital)).status == 400


async def test_param_header_names_are_case_insensitive(peer: Peer) -> None:
    reply = await call(peer, "route", {"region": "eu"}, {"mcp-param-REGION": "eu"})
    assert reply.status == 200


async def test_headers_declared_on_nested_properties_are_checked(peer: Peer) -> None:
    args = {"target": {"zone": "z1"}}
    assert (await call(peer, "nested", args)).status == 400
    reply = await call(peer, "nested", args, {"Mcp-Param-Zone": "z1"})
    assert reply.status == 200 and reply.message["result"]["content"][0]["text"] == "z1"


async def test_unknown_param_headers_are_ignored(peer: Peer) -> None:
    reply = await call(peer, "echo", {"text": "x"}, {"Mcp-Param-Whatever": "1"})
    assert reply.status == 200


# -- DNS rebinding ------------------------------------------------------------------------------

@pytest.mark.parametrize(
    ("headers", "status"),
    [
        ({"Host": "evil.example.com"}, 403),
        ({"Origin": "http://evil.example.com"}, 403),
        ({"Host": "evil.example.com", "Origin": "http://evil.example.com"}, 403),
        ({"Origin": "null"}, 403),
        ({"Host": "localhost:{port}", "Origin": "http://localhost:{port}"}, 200),
        ({"Host": "127.0.0.1:{port}", "Origin": "http://127.0.0.1:3000"}, 200),
        ({"Host": "[::1]:{port}"}, 200),
    ],
)
async def test_host_and_origin_are_checked_against_loopback_names(
    peer: Peer, features: ServerProcess, headers: dict[str, str], status: int
) -> None:
    sent = {k: v.format(port=features.port) for k, v in headers.items()}
    reply = await peer.post(peer.request_message("server/discover"), sent)
    assert reply.status == status
    if status == 403:
        assert "id" not in reply.message and "not allowed" in reply.error["message"]


async def test_allowed_hosts_and_origins_extend_the_list_for_a_reverse_proxy() -> None:
    server = ServerProcess.start(FEATURES, "--allow-host", "mcp.example.com",
                                 "--allow-origin", "https://app.example.com")
    try:
        async with httpx.AsyncClient(timeout=15) as client:
            peer = Peer(server.url, client)
            message = peer.request_message("server/discover")
            assert (await peer.post(message, {"Host": "mcp.example.com"})).status == 200
            assert (await peer.post(message, {"Host": "mcp.example.com",
                                              "Origin": "https://app.example.com"})).status == 200
            assert (await peer.post(message, {"Origin": "https://evil.example.com"})).status == 403
            assert (await peer.post(message, {"Host": "evil.example.com"})).status == 403
            assert (await peer.post(message)).status == 200
    finally:
        server.stop()


# -- methods, media types, sizes ----------------------------------------------------------------

@pytest.mark.parametrize("method", ["GET", "DELETE", "PUT"])
async def test_other_http_methods_are_not_allowed_for_modern_clients(
    peer: Peer, method: str
) -> None:
    response = await peer.client.request(method, peer.url, headers={
        "Accept": "text/event-stream", "MCP-Protocol-Version": "2026-07-28"})
    assert response.status_code == 405
    assert "POST" in response.headers["allow"]


async def test_notifications_are_accepted_with_202_and_no_body(peer: Peer) -> None:
    note = {"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": 1}}
    reply = await peer.post(note)
    assert reply.status == 202 and reply.body == b""


async def test_client_responses_are_refused(peer: Peer) -> None:
    reply = await peer.post(b'{"jsonrpc": "2.0", "id": 1, "result": {}}',
                            {"MCP-Protocol-Version": "2026-07-28"})
    assert reply.status == 400 and reply.error["code"] == -32600


async def test_media_types_are_negotiated(peer: Peer) -> None:
    message = peer.request_message("tools/list")
    assert (await peer.post(message, {"Accept": "text/html"})).status == 406
    assert (await peer.post(message, {"Content-Type": "text/plain"})).status == 415
    assert (await peer.post(message, {"Accept": "*/*"})).status == 200
    only_sse = await peer.post(message, {"Accept": "text/event-stream"})
    assert only_sse.status == 200 and only_sse.media == "text/event-stream"


async def test_an_oversized_body_is_refused_before_it_is_read(features: ServerProcess) -> None:
    reader, writer = await asyncio.open_connection("127.0.0.1", features.port)
    try:
        writer.write(
            f"POST /mcp HTTP/1.1\r\nHost: 127.0.0.1:{features.port}\r\n"
            "Content-Type: application/json\r\nContent-Length: 100000000\r\n\r\n".encode())
        await writer.drain()
        status_line = await asyncio.wait_for(reader.readline(), 5)
        assert b" 413 " in status_line
    finally:
        writer.close()


async def test_a_chunked_body_over_the_limit_is_refused(peer: Peer) -> None:
    """The real server's default limit, over a raw socket: the body goes just past 4 MiB and is
    never ended, so the 413 is the server's doing and no upload races the answer."""
    port = urlsplit(peer.url).port
    assert port is not None
    reader, writer = await asyncio.open_connection("127.0.0.1", port)
    try:
        writer.write(head(port, "Transfer-Encoding: chunked")
                     + chunk(b'{"jsonrpc": "2.0", "id": 1, "method": "tools/list", "x": "'))
        for _ in range(4):
            writer.write(chunk(b"a" * (1024 * 1024)))
            await writer.drain()
        status, headers, body = await read_response(reader)
    finally:
        writer.close()
    assert status == 413 and headers["connection"] == "close"
    message = orjson.loads(body)
    check_server_message(MODERN, message, None)
    assert "limit is 4194304 bytes" in message["error"]["message"]
    assert (await call(peer, "count", {"steps": 1})).status == 200  # still serving


# -- JSON or SSE --------------------------------------------------------------------------------

async def test_a_silent_handler_answers_json(peer: Peer) -> None:
    reply = await call(peer, "count", {"steps": 2})
    assert reply.media == "application/json"
    assert reply.message["result"]["content"][0]["text"] == "counted 2"


async def test_progress_and_logs_stream_as_sse_before_the_result(peer: Peer) -> None:
    reply = await call(peer, "count", {"steps": 3}, progressToken="p-1",
                       **{"io.modelcontextprotocol/logLevel": "info"})
    assert reply.status == 200 and reply.media == "text/event-stream"
    assert reply.headers["x-accel-buffering"] == "no"
    methods = [m.get("method") for m in reply.messages]
    assert methods == ["notifications/progress", "notifications/message"] * 3 + [None]
    progress = [m["params"] for m in reply.messages if m.get("method") == "notifications/progress"]
    assert [p["progress"] for p in progress] == [1, 2, 3]
    assert {p["progressToken"] for p in progress} == {"p-1"}
    assert reply.message["result"]["content"][0]["text"] == "counted 3"


async def test_an_error_after_the_stream_started_is_its_last_event(peer: Peer) -> None:
    reply = await call(peer, "fail_late", progressToken="p-2")
    assert reply.status == 200 and reply.media == "text/event-stream"
    assert reply.messages[0]["method"] == "notifications/progress"
    assert reply.error["code"] == -32603 and reply.message["id"] == peer.ids


# -- cancellation by disconnect -----------------------------------------------------------------

async def _observed(peer: Peer, kind: str, above: int) -> int:
    reply = await call(peer, "observed", {"kind": kind, "above": above})
    value: int = reply.message["result"]["structuredContent"]["result"]
    return value


async def test_closing_the_stream_cancels_the_handler(peer: Peer) -> None:
    before = await _observed(peer, "cancelled", -1)
    message = peer.request_message("tools/call", {"name": "hang", "arguments": {}},
                                   progressToken="h")
    async with peer.stream(message) as events:
        first = await anext(events)
        assert first["method"] == "notifications/progress"
    assert await _observed(peer, "cancelled", before) == before + 1


async def test_disconnecting_before_any_byte_cancels_the_handler(peer: Peer) -> None:
    started = await _observed(peer, "started", -1)
    cancelled = await _observed(peer, "cancelled", -1)
    pending = asyncio.create_task(call(peer, "hang", {"stream": False}))
    await _observed(peer, "started", started)
    pending.cancel()
    with pytest.raises(asyncio.CancelledError):
        await pending
    assert await _observed(peer, "cancelled", cancelled) == cancelled + 1


# -- subscriptions/listen -----------------------------------------------------------------------

async def test_two_listeners_get_only_what_they_asked_for(peer: Peer) -> None:
    uri = "memo://notes/today"
    tools_only = peer.request_message("subscriptions/listen",
                                      {"notifications": {"toolsListChanged": True}})
    prompts_and_uri = peer.request_message("subscriptions/listen", {"notifications": {
        "promptsListChanged": True, "resourceSubscriptions": [uri]}})
    async with peer.stream(tools_only) as first, peer.stream(prompts_and_uri) as second:
        ack = await anext(first)
        assert ack["method"] == "notifications/subscriptions/acknowledged"
        assert ack["params"]["notifications"] == {"toolsListChanged": True}
        assert ack["params"]["_meta"]["io.modelcontextprotocol/subscriptionId"] == tools_only["id"]
        ack = await anext(second)
        assert ack["params"]["notifications"] == {
            "promptsListChanged": True, "resourceSubscriptions": [uri]}
        for kind, extra in (("tools", {}), ("prompts", {}), ("resource", {"uri": uri}),
                            ("resource", {"uri": "memo://elsewhere"})):
            assert (await call(peer, "touch", {"kind": kind, **extra})).status == 200
        got = await asyncio.wait_for(anext(first), 5)
        assert got["method"] == "notifications/tools/list_changed"
        assert got["params"]["_meta"] == {
            "io.modelcontextprotocol/subscriptionId": tools_only["id"]}
        got = await asyncio.wait_for(anext(second), 5)
        assert got["method"] == "notifications/prompts/list_changed"
        got = await asyncio.wait_for(anext(second), 5)
        assert got["method"] == "notifications/resources/updated"
        assert got["params"]["uri"] == uri
        assert got["params"]["_meta"]["io.modelcontextprotocol/subscriptionId"] == (
            prompts_and_uri["id"])
        # What the first listener did not ask for never reaches it: the next thing it sees is
        # the next tools change.
        assert (await call(peer, "touch", {"kind": "tools"})).status == 200
        got = await asyncio.wait_for(anext(first), 5)
        assert got["method"] == "notifications/tools/list_changed"


async def test_listen_needs_an_event_stream(peer: Peer) -> None:
    message = peer.request_message("subscriptions/listen", {"notifications": {}})
    reply = await peer.post(message, {"Accept": "application/json"})
    assert reply.status == 406 and reply.error["code"] == -32600


async def test_shutdown_ends_listen_streams_with_their_final_result() -> None:
    server = ServerProcess.start(FEATURES)
    try:
        async with httpx.AsyncClient(timeout=15) as client:
            peer = Peer(server.url, client)
            message = peer.request_message("subscriptions/listen",
                                           {"notifications": {"toolsListChanged": True}})
            async with peer.stream(message) as events:
                assert (await anext(events))["method"].endswith("acknowledged")
                server.proc.terminate()
                final = await asyncio.wait_for(anext(events), 10)
            assert final["id"] == message["id"]
            assert final["result"] == {
                "resultType": "complete",
                "_meta": {"io.modelcontextprotocol/subscriptionId": message["id"]}}
        # uvicorn re-raises the SIGTERM it handled once shutdown is complete.
        assert await asyncio.to_thread(server.proc.wait, 15) in (0, -signal.SIGTERM)
    finally:
        server.stop()
