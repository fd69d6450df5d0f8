"""The modern methods through a real stream connection, every reply schema-checked."""

from __future__ import annotations

import asyncio
import threading
from typing import Any

import pytest
from helpers.sample_server import make_server

from mcpkit import Context, Server


async def test_discover_describes_the_server(wire_factory: Any) -> None:
    wire = wire_factory(make_server())
    reply = await wire.request("server/discover")
    result = reply["result"]
    assert result["resultType"] == "complete"
    assert result["supportedVersions"] == ["2026-07-28", "2025-11-25"]
    assert set(result["capabilities"]) >= {"tools", "resources", "prompts"}
    assert result["instructions"] == "Use the tools."
    assert result["_meta"]["io.modelcontextprotocol/serverInfo"] == {"name": "test-server", "version": "9.9.9"}
    assert result["ttlMs"] >= 0 and result["cacheScope"] in ("public", "private")


async def test_capabilities_follow_what_is_registered(wire_factory: Any) -> None:
    server = Server("bare")
    wire = wire_factory(server)
    caps = (await wire.request("server/discover"))["result"]["capabilities"]
    assert "tools" not in caps and "prompts" not in caps and "resources" not in caps
    for method in ("tools/list", "prompts/list", "resources/list"):
        reply = await wire.request(method)
        assert reply["error"]["code"] == -32601


async def test_request_without_meta_is_invalid_params(wire_factory: Any) -> None:
    wire = wire_factory(make_server())
    reply = await wire.request("tools/list", with_meta=False)
    assert reply["id"] == 1
    assert reply["error"]["code"] == -32602


async def test_unsupported_version_is_32022_with_supported(wire_factory: Any) -> None:
    wire = wire_factory(make_server())
    reply = await wire.request("tools/list", **{"io.modelcontextprotocol/protocolVersion": "2099-01-01"})
    assert reply["error"]["code"] == -32022
    assert reply["error"]["data"]["supported"] == ["2026-07-28", "2025-11-25"]
    assert reply["error"]["data"]["requested"] == "2099-01-01"


@pytest.mark.parametrize("method", ["nope/nothing", "ping", "logging/setLevel", "resources/subscribe"])
async def test_unknown_and_removed_methods_are_method_not_found(wire_factory: Any, method: str) -> None:
    wire = wire_factory(make_server())
    reply = await wire.request(method)
    assert reply["error"]["code"] == -32601
    assert method in reply["error"]["message"]


async def test_tools_are_listed_in_registration_order_with_schemas(wire_factory: Any) -> None:
    wire = wire_factory(make_server())
    result = (await wire.request("tools/list"))["result"]
    assert [t["name"] for t in result["tools"]] == ["add", "echo", "fail", "crash"]
    add = result["tools"][0]
    assert add["description"] == "Add two integers."
    assert add["inputSchema"]["required"] == ["a", "b"]
    assert add["outputSchema"]["properties"]["sum"]["type"] == "integer"
    assert result["tools"][1]["inputSchema"]["properties"]["text"]["description"] == "What to say back"
    assert "nextCursor" not in result


async def test_structured_result_has_text_fallback(wire_factory: Any) -> None:
    wire = wire_factory(make_server())
    reply = await wire.request("tools/call", {"name": "add", "arguments": {"a": 2, "b": 3}})
    result = reply["result"]
    assert result["structuredContent"] == {"sum": 5}
    assert result["content"] == [{"type": "text", "text": '{"sum":5}'}]
    assert "isError" not in result


async def test_unknown_tool_is_invalid_params_naming_it(wire_factory: Any) -> None:
    wire = wire_factory(make_server())
    reply = await wire.request("tools/call", {"name": "nope", "arguments": {}})
    assert reply["error"]["code"] == -32602
    assert "nope" in reply["error"]["message"]


async def test_invalid_arguments_are_a_tool_execution_error(wire_factory: Any) -> None:
    wire = wire_factory(make_server())
    reply = await wire.request("tools/call", {"name": "add", "arguments": {"a": "two"}})
    result = reply["result"]
    assert result["isError"] is True
    text = result["content"][0]["text"]
    assert "add" in text and "a" in text and "b" in text


async def test_tool_error_becomes_is_error_result(wire_factory: Any) -> None:
    wire = wire_factory(make_server())
    result = (await wire.request("tools/call", {"name": "fail"}))["result"]
    assert result == {
        "resultType": "complete",
        "content": [{"type": "text", "text": "the printer is on fire"}],
        "isError": True,
        "_meta": {"io.modelcontextprotocol/serverInfo": {"name": "test-server", "version": "9.9.9"}},
    }


async def test_unexpected_exception_is_a_tool_error_without_details(
    wire_factory: Any, caplog: pytest.LogCaptureFixture
) -> None:
    wire = wire_factory(make_server())
    reply = await wire.request("tools/call", {"name": "crash"})
    assert reply["result"]["isError"] is True
    assert reply["result"]["content"][0]["text"].startswith("tool 'crash' failed (error id ")
    assert "secret" not in str(reply)
    assert "secret internal detail" in caplog.text


async def test_tool_arguments_that_are_not_an_object_are_invalid_params(wire_factory: Any) -> None:
    wire = wire_factory(make_server())
    reply = await wire.request("tools/call", {"name": "echo", "arguments": ["x"]})
    assert reply["error"]["code"] == -32602


async def test_lists_are_paginated_with_opaque_cursors(wire_factory: Any) -> None:
    server = make_server(page_size=3)
    wire = wire_factory(server)
    first = (await wire.request("tools/list"))["result"]
    assert [t["name"] for t in first["tools"]] == ["add", "echo", "fail"]
    second = (await wire.request("tools/list", {"cursor": first["nextCursor"]}))["result"]
    assert [t["name"] for t in second["tools"]] == ["crash"]
    assert "nextCursor" not in second
    bad = await wire.request("tools/list", {"cursor": "garbage!"})
    assert bad["error"]["code"] == -32602


async def test_resources_static_template_and_missing(wire_factory: Any) -> None:
    wire = wire_factory(make_server())
    listed = (await wire.request("resources/list"))["result"]
    assert listed["resources"][0]["uri"] == "test://static"
    templates = (await wire.request("resources/templates/list"))["result"]
    assert templates["resourceTemplates"][0]["uriTemplate"] == "test://item/{id}/data"
    static = (await wire.request("resources/read", {"uri": "test://static"}))["result"]
    assert static["contents"] == [{"uri": "test://static", "text": "static text", "mimeType": "text/plain"}]
    assert (static["ttlMs"], static["cacheScope"]) == (5000, "public")
    item = (await wire.request("resources/read", {"uri": "test://item/42/data"}))["result"]
    assert item["contents"][0]["text"] == '{"id":"42"}'
    assert item["contents"][0]["mimeType"] == "application/json"
    missing = await wire.request("resources/read", {"uri": "test://nope"})
    assert missing["error"]["code"] == -32602
    assert missing["error"]["data"] == {"uri": "test://nope"}


async def test_prompts_get_and_missing_argument(wire_factory: Any) -> None:
    wire = wire_factory(make_server())
    listed = (await wire.request("prompts/list"))["result"]["prompts"][0]
    assert listed["arguments"] == [
        {"name": "name", "required": True},
        {"name": "mood", "required": False},
    ]
    got = (await wire.request("prompts/get", {"name": "greet", "arguments": {"name": "Ada"}}))["result"]
    assert got["messages"] == [{"role": "user", "content": {"type": "text", "text": "Hello Ada (neutral)"}}]
    missing = await wire.request("prompts/get", {"name": "greet", "arguments": {}})
    assert missing["error"]["code"] == -32602 and "name" in missing["error"]["message"]
    unknown = await wire.request("prompts/get", {"name": "nope"})
    assert unknown["error"]["code"] == -32602


async def test_completion_values_are_capped_at_100(wire_factory: Any) -> None:
    server = make_server()

    @server.completer()
    def complete(ref: dict[str, Any], argument: dict[str, Any], context: dict[str, Any]) -> list[str]:
        return [f"{argument['value']}{i}" for i in range(150)]

    wire = wire_factory(server)
    result = (await wire.request("completion/complete", {
        "ref": {"type": "ref/prompt", "name": "greet"}, "argument": {"name": "name", "value": "A"},
    }))["result"]
    assert len(result["completion"]["values"]) == 100
    assert result["completion"]["hasMore"] is True and result["completion"]["total"] == 150


async def test_progress_is_sent_only_when_a_token_was_given(wire_factory: Any) -> None:
    server = Server("p")

    @server.tool()
    async def work(ctx: Context) -> str:
        """Reports progress."""
        for i in (0, 50, 100):
            await ctx.report_progress(i, 100)
        return "done"

    wire = wire_factory(server)
    await wire.request("tools/call", {"name": "work"})
    assert wire.notifications == []
    await wire.request("tools/call", {"name": "work"}, progressToken="tok")
    assert [n["params"]["progress"] for n in wire.notifications] == [0, 50, 100]
    assert all(n["params"]["progressToken"] == "tok" for n in wire.notifications)


async def test_logs_are_sent_only_at_or_above_the_requested_level(wire_factory: Any) -> None:
    server = Server("l")

    @server.tool()
    async def chatty(ctx: Context) -> str:
        """Logs at three levels."""
        await ctx.debug("d")
        await ctx.info("i")
        await ctx.error("e")
        return "ok"

    wire = wire_factory(server)
    await wire.request("tools/call", {"name": "chatty"})
    assert wire.notifications == []
    await wire.request("tools/call", {"name": "chatty"}, **{"io.modelcontextprotocol/logLevel": "info"})
    assert [n["params"]["level"] for n in wire.notifications] == ["info", "error"]


async def test_sync_tools_run_off_the_event_loop_thread(wire_factory: Any) -> None:
    server = Server("t")
    seen: list[int] = []

    @server.tool()
    def where() -> str:
        """Records its thread."""
        seen.append(threading.get_ident())
        return "ok"

    wire = wire_factory(server)
    await wire.request("tools/call", {"name": "where"})
    assert seen and seen[0] != threading.get_ident()


async def test_a_slow_tool_does_not_block_a_fast_one_and_can_be_cancelled(wire_factory: Any) -> None:
    server = Server("c")
    cleaned = asyncio.Event()

    @server.tool()
    async def slow() -> str:
        """Waits forever."""
        try:
            await asyncio.sleep(3600)
        finally:
            cleaned.set()
        return "never"

    @server.tool()
    async def fast() -> str:
        """Answers at once."""
        return "fast"

    wire = wire_factory(server)
    wire.send({"jsonrpc": "2.0", "id": "s", "method": "tools/call",
               "params": {"name": "slow", "_meta": {
                   "io.modelcontextprotocol/protocolVersion": "2026-07-28",
                   "io.modelcontextprotocol/clientCapabilities": {}}}})
    reply = await wire.request("tools/call", {"name": "fast"})
    assert reply["result"]["content"][0]["text"] == "fast"
    wire.send({"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": "s"}})
    await asyncio.wait_for(cleaned.wait(), 5)
    await asyncio.sleep(0)
    assert wire.inbox.empty(), "no response is sent for a cancelled request"


async def test_malformed_messages_get_errors_and_serving_goes_on(wire_factory: Any) -> None:
    wire = wire_factory(make_server())
    wire.send_raw(b"{not json")
    assert (await wire.next())["error"]["code"] == -32700
    wire.send_raw(b'{"jsonrpc":"2.0","id":9,"method":7}')
    err = await wire.next()
    assert err["error"]["code"] == -32600 and err["id"] == 9
    assert (await wire.request("tools/list"))["result"]["tools"]


async def test_listen_acknowledges_then_forwards_only_what_was_asked(wire_factory: Any) -> None:
    server = make_server()
    wire = wire_factory(server)
    base = {"io.modelcontextprotocol/protocolVersion": "2026-07-28",
            "io.modelcontextprotocol/clientCapabilities": {}}
    wire.send({"jsonrpc": "2.0", "id": "L1", "method": "subscriptions/listen",
               "params": {"_meta": base, "notifications": {"toolsListChanged": True}}})
    wire.send({"jsonrpc": "2.0", "id": "L2", "method": "subscriptions/listen",
               "params": {"_meta": base, "notifications": {"promptsListChanged": True,
                                                            "resourceSubscriptions": ["test://static"]}}})
    acks = [await wire.next(), await wire.next()]
    assert {a["params"]["_meta"]["io.modelcontextprotocol/subscriptionId"] for a in acks} == {"L1", "L2"}
    assert all(a["method"] == "notifications/subscriptions/acknowledged" for a in acks)
    server.notify_tools_changed()
    note = await wire.next()
    assert note["method"] == "notifications/tools/list_changed"
    assert note["params"]["_meta"]["io.modelcontextprotocol/subscriptionId"] == "L1"
    server.notify_resource_updated("test://static")
    note = await wire.next()
    assert note["method"] == "notifications/resources/updated"
    assert note["params"]["_meta"]["io.modelcontextprotocol/subscriptionId"] == "L2"
    assert "dev.mcpkit/changes" not in note["params"]["_meta"]  # one change: nothing to say
    server.notify_resource_updated("test://static", changes=3)  # three, coalesced into one
    note = await wire.next()
    assert note["params"]["_meta"]["dev.mcpkit/changes"] == 3
    assert wire.inbox.empty()
