"""The 2025-11-25 adapter on the same Server: legacy shapes, legacy codes, era pinning."""

from __future__ import annotations

from typing import Any

from helpers.sample_server import make_server


async def initialize(wire: Any, version: str = "2025-11-25") -> dict[str, Any]:
    reply = await wire.request("initialize", {
        "protocolVersion": version,
        "capabilities": {"elicitation": {}},
        "clientInfo": {"name": "legacy-client", "version": "1.0"},
    }, with_meta=False)
    wire.send({"jsonrpc": "2.0", "method": "notifications/initialized"})
    return reply


async def test_initialize_negotiates_and_describes_the_server(wire_factory: Any) -> None:
    wire = wire_factory(make_server())
    result = (await initialize(wire))["result"]
    assert result["protocolVersion"] == "2025-11-25"
    assert result["serverInfo"] == {"name": "test-server", "version": "9.9.9"}
    assert "tools" in result["capabilities"] and "logging" in result["capabilities"]
    assert "resultType" not in result


async def test_unknown_initialize_version_is_answered_with_ours(wire_factory: Any) -> None:
    wire = wire_factory(make_server())
    assert (await initialize(wire, "2030-01-01"))["result"]["protocolVersion"] == "2025-11-25"


async def test_legacy_results_have_legacy_shapes(wire_factory: Any) -> None:
    wire = wire_factory(make_server())
    await initialize(wire)
    assert (await wire.request("ping", with_meta=False))["result"] == {}
    assert (await wire.request("logging/setLevel", {"level": "info"}, with_meta=False))["result"] == {}
    tools = (await wire.request("tools/list", with_meta=False))["result"]
    assert "resultType" not in tools and "ttlMs" not in tools and "_meta" not in tools
    call = (await wire.request("tools/call", {"name": "add", "arguments": {"a": 2, "b": 3}},
                               with_meta=False))["result"]
    assert call == {"content": [{"type": "text", "text": '{"sum":5}'}], "structuredContent": {"sum": 5}}


async def test_missing_resource_is_32002_on_the_legacy_wire(wire_factory: Any) -> None:
    wire = wire_factory(make_server())
    await initialize(wire)
    reply = await wire.request("resources/read", {"uri": "test://nope"}, with_meta=False)
    assert reply["error"]["code"] == -32002


async def test_modern_only_methods_are_unknown_to_a_legacy_session(wire_factory: Any) -> None:
    wire = wire_factory(make_server())
    await initialize(wire)
    reply = await wire.request("server/discover", with_meta=False)
    assert reply["error"]["code"] == -32601


async def test_initialize_after_a_modern_request_is_refused_naming_versions(wire_factory: Any) -> None:
    wire = wire_factory(make_server())
    await wire.request("server/discover")
    reply = await initialize(wire)
    assert reply["error"]["code"] == -32600
    assert "2026-07-28" in reply["error"]["message"] and "2025-11-25" in reply["error"]["message"]


async def test_second_initialize_is_refused(wire_factory: Any) -> None:
    wire = wire_factory(make_server())
    await initialize(wire)
    assert "error" in await initialize(wire)


async def test_a_legacy_session_hears_list_changes_and_its_subscribed_updates(
    wire_factory: Any,
) -> None:
    server = make_server()
    wire = wire_factory(server)
    await initialize(wire)
    assert (await wire.request("resources/subscribe", {"uri": "test://static"},
                               with_meta=False))["result"] == {}
    server.notify_resource_updated("test://other")  # not subscribed: nothing
    server.notify_resource_updated("test://static")
    note = await wire.next()
    assert note == {"jsonrpc": "2.0", "method": "notifications/resources/updated",
                    "params": {"uri": "test://static"}}
    server.notify_resource_updated("test://static", changes=2)  # two, coalesced into one
    assert (await wire.next())["params"] == {"uri": "test://static",
                                             "_meta": {"dev.mcpkit/changes": 2}}
    server.notify_tools_changed()
    assert (await wire.next())["method"] == "notifications/tools/list_changed"
    assert (await wire.request("resources/unsubscribe", {"uri": "test://static"},
                               with_meta=False))["result"] == {}
    server.notify_resource_updated("test://static")
    server.notify_prompts_changed()
    assert (await wire.next())["method"] == "notifications/prompts/list_changed"
    assert wire.inbox.empty()
