"""2025-11-25 clients on the same HTTP endpoint: sessions, their GET stream, DELETE, and the
legacy rules for errors and cancellation, against a real `mcpkit run --http` process."""

from __future__ import annotations

import asyncio
from typing import Any

import httpx
from helpers.transports.http_peer import Peer, Reply, ServerProcess

from mcpkit.protocol.http import classify_era


async def send(peer: Peer, method: str, params: dict[str, Any] | None = None) -> Reply:
    return await peer.post(peer.request_message(method, params, with_meta=False), mirror=False)


async def test_initialize_opens_a_session_that_serves_legacy_shapes(
    features: ServerProcess, http: httpx.AsyncClient
) -> None:
    peer = Peer(features.url, http)
    result = await peer.initialize()
    assert result["protocolVersion"] == "2025-11-25"
    assert result["capabilities"]["tools"] == {"listChanged": True}
    tools = await send(peer, "tools/list")
    assert tools.status == 200
    assert "resultType" not in tools.message["result"]
    assert "ttlMs" not in tools.message["result"]
    call = await send(peer, "tools/call", {"name": "echo", "arguments": {"text": "old"}})
    assert call.message["result"] == {"content": [{"type": "text", "text": "old"}]}


async def test_ping_and_set_level_answer_exactly_an_empty_object(legacy: Peer) -> None:
    assert (await send(legacy, "ping")).message["result"] == {}
    assert (await send(legacy, "logging/setLevel", {"level": "info"})).message["result"] == {}


async def test_legacy_handler_errors_travel_with_200(legacy: Peer) -> None:
    unknown = await send(legacy, "tools/call", {"name": "nope", "arguments": {}})
    assert unknown.status == 200 and unknown.error["code"] == -32602
    missing = await send(legacy, "resources/read", {"uri": "memo://missing"})
    assert missing.status == 200 and missing.error["code"] == -32002
    # A tool's unexpected exception is a tool error, isError in its result, not a -32603.
    failed = await send(legacy, "tools/call", {"name": "boom", "arguments": {}})
    assert failed.status == 200 and failed.message["result"]["isError"] is True
    assert failed.message["result"]["content"][0]["text"].startswith("tool 'boom' failed")
    internal = await send(legacy, "tools/call", {"name": "fail_late", "arguments": {}})
    assert internal.status == 200 and internal.error["code"] == -32603


async def test_a_session_logs_and_reports_progress_on_the_post_stream(legacy: Peer) -> None:
    await send(legacy, "logging/setLevel", {"level": "info"})
    message = legacy.request_message("tools/call", {
        "name": "count", "arguments": {"steps": 2}, "_meta": {"progressToken": 9}},
        with_meta=False)
    reply = await legacy.post(message, mirror=False)
    assert reply.media == "text/event-stream"
    methods = [m.get("method") for m in reply.messages]
    assert methods == ["notifications/progress", "notifications/message"] * 2 + [None]
    assert reply.message["result"]["content"][0]["text"] == "counted 2"


async def test_requests_without_a_session_need_initialize_first(
    features: ServerProcess, http: httpx.AsyncClient
) -> None:
    peer = Peer(features.url, http)
    peer.revision = "2025-11-25"
    reply = await send(peer, "tools/list")
    assert reply.status == 400 and "initialize" in reply.error["message"]
    note = await peer.post({"jsonrpc": "2.0", "method": "notifications/initialized"},
                           mirror=False)
    assert note.status == 202


async def test_an_unknown_session_is_404(features: ServerProcess, http: httpx.AsyncClient
                                         ) -> None:
    peer = Peer(features.url, http)
    peer.revision = "2025-11-25"
    peer.session = "no-such-session"
    reply = await send(peer, "tools/list")
    assert reply.status == 404 and "initialize" in reply.error["message"]


async def test_delete_ends_the_session(legacy: Peer) -> None:
    headers = {"Mcp-Session-Id": legacy.session or "", "MCP-Protocol-Version": "2025-11-25"}
    deleted = await legacy.client.delete(legacy.url, headers=headers)
    assert deleted.status_code == 200
    assert (await send(legacy, "tools/list")).status == 404
    assert (await legacy.client.delete(legacy.url, headers=headers)).status_code == 404
    async with legacy.get_stream() as response:
        assert response.status_code == 404


async def test_a_session_rejects_a_modern_version_header(legacy: Peer) -> None:
    message = legacy.request_message("tools/list", with_meta=False)
    reply = await legacy.post(message, {"MCP-Protocol-Version": "2026-07-28"}, mirror=False)
    assert reply.status == 400 and "MCP-Protocol-Version" in reply.error["message"]


async def test_the_get_stream_carries_changes_and_subscribed_updates(legacy: Peer) -> None:
    uri = "memo://notes/today"
    assert (await send(legacy, "resources/subscribe", {"uri": uri})).message["result"] == {}
    async with legacy.get_stream() as response:
        assert response.status_code == 200
        assert response.headers["content-type"] == "text/event-stream"
        events = legacy.events(response)
        async with httpx.AsyncClient(timeout=15) as other:
            modern = Peer(legacy.url, other)

            async def touch(**arguments: str) -> None:
                message = modern.request_message("tools/call", {"name": "touch",
                                                                "arguments": arguments})
                assert (await modern.post(message)).status == 200

            await touch(kind="resource", uri=uri)
            got = await asyncio.wait_for(anext(events), 5)
            assert got == {"jsonrpc": "2.0", "method": "notifications/resources/updated",
                           "params": {"uri": uri}}
            await touch(kind="resource", uri="memo://not-subscribed")
            await touch(kind="tools")
            got = await asyncio.wait_for(anext(events), 5)
            assert got == {"jsonrpc": "2.0", "method": "notifications/tools/list_changed"}
            async with legacy.get_stream() as second:
                assert second.status_code == 409


async def test_notifications_cancelled_stops_a_request_in_flight(legacy: Peer) -> None:
    async with httpx.AsyncClient(timeout=15) as other:
        watcher = Peer(legacy.url, other)

        async def observed(kind: str, above: int) -> int:
            message = watcher.request_message("tools/call", {
                "name": "observed", "arguments": {"kind": kind, "above": above}})
            value: int = (await watcher.post(message)).message["result"]["structuredContent"][
                "result"]
            return value

        started = await observed("started", -1)
        cancelled = await observed("cancelled", -1)
        message = legacy.request_message("tools/call", {
            "name": "hang", "arguments": {"stream": False}}, with_meta=False)
        pending = asyncio.create_task(legacy.post(message, mirror=False))
        await observed("started", started)
        note = {"jsonrpc": "2.0", "method": "notifications/cancelled",
                "params": {"requestId": message["id"], "reason": "changed my mind"}}
        assert (await legacy.post(note, mirror=False)).status == 202
        reply = await asyncio.wait_for(pending, 10)
        assert reply.status == 202 and reply.body == b""
        assert await observed("cancelled", cancelled) == cancelled + 1


async def test_a_server_request_travels_on_the_post_stream_and_the_answer_comes_back(
    features: ServerProcess, http: httpx.AsyncClient
) -> None:
    peer = Peer(features.url, http)
    await peer.initialize({"elicitation": {}})
    message = peer.request_message("tools/call", {
        "name": "confirm", "arguments": {"action": "deploy"}}, with_meta=False)
    async with peer.stream(message) as events:
        asked = await asyncio.wait_for(anext(events), 10)
        assert asked["method"] == "elicitation/create" and "id" in asked
        assert asked["params"]["requestedSchema"]["properties"]["sure"]["type"] == "boolean"
        async with httpx.AsyncClient(timeout=15) as other:
            answering = Peer(features.url, other)
            answering.revision, answering.session = peer.revision, peer.session
            reply = await answering.post({"jsonrpc": "2.0", "id": asked["id"], "result": {
                "action": "accept", "content": {"sure": True}}}, mirror=False)
            assert reply.status == 202
        final = await asyncio.wait_for(anext(events), 10)
    assert final["id"] == message["id"]
    assert final["result"] == {"content": [{"type": "text", "text": "deploy: yes"}]}


async def test_a_disconnect_does_not_cancel_a_legacy_request(legacy: Peer) -> None:
    async with httpx.AsyncClient(timeout=15) as other:
        modern = Peer(legacy.url, other)

        async def tool(name: str, **arguments: Any) -> Any:
            message = modern.request_message("tools/call", {"name": name,
                                                            "arguments": arguments})
            return (await modern.post(message)).message["result"]

        finished = (await tool("observed", kind="finished", above=-1))["structuredContent"][
            "result"]
        message = legacy.request_message("tools/call", {
            "name": "gate", "arguments": {}, "_meta": {"progressToken": "g"}}, with_meta=False)
        async with legacy.stream(message) as events:
            assert (await anext(events))["method"] == "notifications/progress"
        # The client is gone; the call goes on (LEG-10) and finishes once the gate opens.
        await tool("open_gate")
        assert (await tool("observed", kind="finished", above=finished))["structuredContent"][
            "result"] == finished + 1


async def test_an_answer_to_an_unknown_request_is_accepted_and_ignored(legacy: Peer) -> None:
    reply = await legacy.post({"jsonrpc": "2.0", "id": "never-asked", "result": {}},
                              mirror=False)
    assert reply.status == 202


async def test_both_eras_share_one_endpoint_at_once(legacy: Peer) -> None:
    async with httpx.AsyncClient(timeout=15) as other:
        modern = Peer(legacy.url, other)
        old, new = await asyncio.gather(
            send(legacy, "tools/call", {"name": "echo", "arguments": {"text": "a"}}),
            modern.post(modern.request_message("tools/call", {
                "name": "echo", "arguments": {"text": "b"}})),
        )
    assert "resultType" not in old.message["result"]
    assert new.message["result"]["resultType"] == "complete"


def test_era_classification_follows_the_session_then_meta_then_header() -> None:
    from mcpkit.protocol.codec import decode

    modern = decode(b'{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{"_meta":{}}}')
    bare = decode(b'{"jsonrpc":"2.0","id":1,"method":"initialize","params":{}}')
    assert classify_era(b"s", None, modern) == "session"
    assert classify_era(None, None, modern) == "modern"
    assert classify_era(None, b"2026-07-28", bare) == "modern"
    assert classify_era(None, b"2025-11-25", bare) == "legacy"
    assert classify_era(None, None, bare) == "legacy"
