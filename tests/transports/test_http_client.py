"""`HTTPClientTransport` against a real `mcpkit run --http` process (and, for what no correct
server does on purpose — a stream that breaks — a scripted app on a real uvicorn)."""

from __future__ import annotations

import asyncio
import socket
from collections.abc import AsyncIterator
from typing import Any

import orjson
import pytest
from helpers.transports.http_peer import ServerProcess, checked_transport, meta
from helpers.transports.resume_peer import on_free_port, request_body
from helpers.wire import LEGACY, MODERN, check_client_message, check_server_message

from mcpkit.errors import TransportError
from mcpkit.transports.http_client.transport import (
    HTTPClientTransport,
    HTTPConnector,
    HTTPStatusError,
    SessionExpiredError,
)


def checked(url: str, **options: Any) -> HTTPClientTransport:
    """A transport checking what it sends and every message the server answers with (its
    `close()` fails naming any off the schema), for the server process and the scripted app."""
    transport: HTTPClientTransport = checked_transport(url, check_server=True, **options)
    return transport


@pytest.fixture
async def transport(features: ServerProcess) -> AsyncIterator[HTTPClientTransport]:
    t = checked(features.url)
    yield t
    await t.close()


class Client:
    """Builds valid modern requests and checks what comes back."""

    def __init__(self, transport: HTTPClientTransport, revision: str = MODERN) -> None:
        self.transport = transport
        self.revision = revision
        self.ids = 0

    def message(self, method: str, params: dict[str, Any] | None = None, **extra: Any
                ) -> dict[str, Any]:
        self.ids += 1
        if self.revision == MODERN:
            params = {**(params or {}), "_meta": meta(**extra)}
        message: dict[str, Any] = {"jsonrpc": "2.0", "id": self.ids, "method": method}
        if params is not None:
            message["params"] = params
        check_client_message(self.revision, message)
        return message

    async def request(self, method: str, params: dict[str, Any] | None = None,
                      on_notification: Any = None, **extra: Any) -> dict[str, Any]:
        message = self.message(method, params, **extra)
        response = await self.transport.request(message, on_notification=on_notification)
        check_server_message(self.revision, response, method)
        return response


async def test_requests_get_json_answers_and_the_mirrored_headers_pass(
    transport: HTTPClientTransport
) -> None:
    client = Client(transport)
    assert (await client.request("server/discover"))["result"]["resultType"] == "complete"
    reply = await client.request("tools/call", {"name": "echo", "arguments": {"text": "hi"}})
    assert reply["result"]["content"] == [{"type": "text", "text": "hi"}]


async def test_param_headers_come_from_the_tools_it_has_seen(features: ServerProcess) -> None:
    arguments = {"region": "Hello, 世界", "priority": 3, "verbose": False}
    fresh = checked(features.url)
    try:
        client = Client(fresh)
        blind = await client.request("tools/call", {"name": "route", "arguments": arguments})
        assert blind["error"]["code"] == -32020
        listed = await client.request("tools/list")
        assert any(t["name"] == "route" for t in listed["result"]["tools"])
        reply = await client.request("tools/call", {"name": "route", "arguments": arguments})
        assert reply["result"]["structuredContent"] == {**arguments, "query": ""}
    finally:
        await fresh.close()


async def test_remembered_tools_are_screened(features: ServerProcess) -> None:
    fresh = checked(features.url)
    try:
        screened = fresh.remember_tools([
            {"name": "nested", "inputSchema": {"type": "object", "properties": {"target": {
                "type": "object", "properties": {"zone": {"type": "string",
                                                          "x-mcp-header": "Zone"}}}}}},
            {"name": "broken", "inputSchema": {"type": "object", "properties": {
                "a": {"type": "number", "x-mcp-header": "A"}}}},
        ])
        assert [t["name"] for t in screened.valid] == ["nested"]
        assert [name for name, _ in screened.rejected] == ["broken"]
        reply = await Client(fresh).request("tools/call", {
            "name": "nested", "arguments": {"target": {"zone": "z9"}}})
        assert reply["result"]["content"][0]["text"] == "z9"
    finally:
        await fresh.close()


async def test_progress_arrives_through_on_notification_before_the_result(
    transport: HTTPClientTransport
) -> None:
    seen: list[dict[str, Any]] = []

    async def on_notification(message: dict[str, Any]) -> None:
        check_server_message(MODERN, message, None)
        seen.append(message)

    reply = await Client(transport).request("tools/call", {"name": "count", "arguments": {
        "steps": 3}}, on_notification, progressToken="t")
    assert [m["params"]["progress"] for m in seen] == [1, 2, 3]
    assert reply["result"]["content"][0]["text"] == "counted 3"


async def _observed(client: Client, kind: str, above: int) -> int:
    reply = await client.request("tools/call", {"name": "observed", "arguments": {
        "kind": kind, "above": above}})
    value: int = reply["result"]["structuredContent"]["result"]
    return value


async def test_cancelling_the_call_closes_the_stream_and_cancels_the_handler(
    transport: HTTPClientTransport
) -> None:
    client = Client(transport)
    cancelled = await _observed(client, "cancelled", -1)
    streaming = asyncio.Event()

    async def on_notification(message: dict[str, Any]) -> None:
        streaming.set()

    call = asyncio.create_task(client.request(
        "tools/call", {"name": "hang", "arguments": {}}, on_notification, progressToken=1))
    await asyncio.wait_for(streaming.wait(), 10)
    call.cancel()
    with pytest.raises(asyncio.CancelledError):
        await call
    assert await _observed(client, "cancelled", cancelled) == cancelled + 1


async def test_modern_errors_in_4xx_bodies_are_returned_as_messages(
    transport: HTTPClientTransport
) -> None:
    client = Client(transport)
    message = client.message("tools/list")
    message["params"]["_meta"]["io.modelcontextprotocol/protocolVersion"] = "1900-01-01"
    reply = await transport.request(message)
    assert reply["error"]["code"] == -32022 and reply["id"] == message["id"]


async def test_a_status_without_a_jsonrpc_body_raises(features: ServerProcess) -> None:
    wrong = checked(features.url.replace("/mcp", "/nowhere"))
    try:
        with pytest.raises(HTTPStatusError) as info:
            await Client(wrong).request("tools/list")
        assert info.value.status_code == 404
    finally:
        await wrong.close()


async def test_an_unreachable_server_is_a_transport_error() -> None:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    dead = checked(f"http://127.0.0.1:{port}/mcp")
    try:
        with pytest.raises(TransportError, match="cannot connect"):
            await Client(dead).request("tools/list")
    finally:
        await dead.close()


def test_the_connector_names_the_server_by_origin_and_path() -> None:
    connector = HTTPConnector("http://127.0.0.1:8000/mcp?x=1")
    assert connector.key == "http://127.0.0.1:8000/mcp" and connector.kind == "http"
    with pytest.raises(ValueError):
        HTTPConnector("ftp://example.com/")


# -- legacy session mode ------------------------------------------------------------------------

async def _legacy(transport: HTTPClientTransport) -> Client:
    client = Client(transport, LEGACY)
    reply = await client.request("initialize", {
        "protocolVersion": LEGACY, "capabilities": {},
        "clientInfo": {"name": "legacy-client", "version": "1"}})
    assert reply["result"]["protocolVersion"] == LEGACY
    assert transport.era == "legacy" and transport.session_id
    note = {"jsonrpc": "2.0", "method": "notifications/initialized"}
    check_client_message(LEGACY, note)
    await transport.notify(note)
    return client


async def test_initialize_switches_to_a_legacy_session(transport: HTTPClientTransport) -> None:
    client = await _legacy(transport)
    reply = await client.request("tools/call", {"name": "echo", "arguments": {"text": "x"}})
    assert reply["result"] == {"content": [{"type": "text", "text": "x"}]}
    assert (await client.request("ping"))["result"] == {}


async def test_server_requests_are_answered_by_the_request_handler(
    transport: HTTPClientTransport
) -> None:
    asked: list[tuple[str, Any]] = []

    async def on_request(method: str, params: dict[str, Any] | None) -> dict[str, Any]:
        message = {"jsonrpc": "2.0", "id": "x", "method": method, "params": params}
        check_server_message(LEGACY, message, None)
        asked.append((method, params))
        return {"action": "accept", "content": {"sure": False}}

    transport.set_request_handler(on_request)
    client = Client(transport, LEGACY)
    reply = await client.request("initialize", {
        "protocolVersion": LEGACY, "capabilities": {"elicitation": {}},
        "clientInfo": {"name": "legacy-client", "version": "1"}})
    assert reply["result"]["protocolVersion"] == LEGACY
    await transport.notify({"jsonrpc": "2.0", "method": "notifications/initialized"})
    reply = await client.request("tools/call", {"name": "confirm", "arguments": {
        "action": "delete"}})
    assert reply["result"]["content"][0]["text"] == "delete: no"
    assert [method for method, _ in asked] == ["elicitation/create"]


async def test_the_session_stream_feeds_the_notification_handler_and_close_deletes(
    features: ServerProcess
) -> None:
    legacy = checked(features.url)
    received: asyncio.Queue[dict[str, Any]] = asyncio.Queue()

    async def on_notification(message: dict[str, Any]) -> None:
        check_server_message(LEGACY, message, None)
        received.put_nowait(message)

    legacy.set_notification_handler(on_notification)
    client = await _legacy(legacy)
    uri = "memo://notes/today"
    await client.request("resources/subscribe", {"uri": uri})
    modern = checked(features.url)
    try:
        await asyncio.wait_for(legacy.session_stream_open.wait(), 10)
        await Client(modern).request("tools/call", {"name": "touch", "arguments": {
            "kind": "resource", "uri": uri}})
        got = await asyncio.wait_for(received.get(), 10)
        assert got == {"jsonrpc": "2.0", "method": "notifications/resources/updated",
                       "params": {"uri": uri}}
        session = legacy.session_id
        await legacy.close()
        assert legacy.session_id is None
        gone = checked(features.url, headers={"Mcp-Session-Id": session or ""})
        try:
            with pytest.raises(HTTPStatusError) as info:
                await gone.notify({"jsonrpc": "2.0", "method": "notifications/initialized"})
            assert info.value.status_code == 404
        finally:
            await gone.close()
    finally:
        await modern.close()


async def test_an_ended_session_raises_session_expired(transport: HTTPClientTransport) -> None:
    client = await _legacy(transport)
    ended = checked(transport.url, headers={
        "Mcp-Session-Id": transport.session_id or ""})
    try:
        await ended._client.delete(ended.url, headers=ended._headers_for(None))
    finally:
        await ended.close()
    with pytest.raises(SessionExpiredError):
        await client.request("tools/list")
    assert transport.session_id is None


# -- what only a broken server does: a scripted app on a real uvicorn ---------------------------

class Scripted:
    """An ASGI app that breaks the stream of every first attempt and answers retries (with a
    valid tools/list result: the transport `checked` checks the app's replies too)."""

    def __init__(self) -> None:
        self.ids: list[Any] = []

    async def __call__(self, scope: dict[str, Any], receive: Any, send: Any) -> None:
        if scope["type"] != "http":
            return
        body = await request_body(receive)
        request = orjson.loads(body)
        check_client_message(MODERN, request)
        self.ids.append(request["id"])
        if isinstance(request["id"], int):  # first attempts break, retries are answered
            await send({"type": "http.response.start", "status": 200,
                        "headers": [(b"content-type", b"text/event-stream")]})
            await send({"type": "http.response.body", "body": b": hello\n\n", "more_body": True})
            await send({"type": "http.response.body", "body": b"", "more_body": False})
            return
        answer = orjson.dumps({"jsonrpc": "2.0", "id": request["id"], "result": {
            "resultType": "complete", "tools": [], "ttlMs": 0, "cacheScope": "public"}})
        await send({"type": "http.response.start", "status": 200,
                    "headers": [(b"content-type", b"application/json")]})
        await send({"type": "http.response.body", "body": answer})


@pytest.fixture
async def scripted() -> AsyncIterator[tuple[str, Scripted]]:
    app = Scripted()
    async with on_free_port(app) as url:
        yield url, app


async def test_a_broken_stream_is_retried_with_a_new_id_only_when_allowed(
    scripted: tuple[str, Scripted]
) -> None:
    url, app = scripted
    transport = checked(url)
    try:
        client = Client(transport)
        with pytest.raises(TransportError, match="request is lost"):
            await transport.request(client.message("tools/list"))
        assert app.ids == [1]
        reply = await transport.request(client.message("tools/list"), retries=1)
        assert app.ids == [1, 2, "2.retry1"]
        assert reply["id"] == "2.retry1" and reply["result"]["resultType"] == "complete"
    finally:
        await transport.close()
