"""The conformance server's fixtures, checked without the suite: over a real stream connection,
both eras, every message validated against the official schema. The suite itself runs from
`scripts/conformance`; these tests catch a broken fixture in milliseconds and without Node."""

from __future__ import annotations

import asyncio
import base64
import json
from typing import Any

import everything_server as fixtures
import pytest
from helpers.wire import meta

SERVER = fixtures.server


async def initialize(wire: Any, caps: dict[str, Any] | None = None) -> None:
    reply = await wire.request(
        "initialize",
        {"protocolVersion": "2025-11-25", "capabilities": caps or {},
         "clientInfo": {"name": "conformance-test-client", "version": "1.0.0"}},
        with_meta=False,
    )
    assert reply["result"]["protocolVersion"] == "2025-11-25"
    wire.send({"jsonrpc": "2.0", "method": "notifications/initialized"})


async def call(wire: Any, name: str, **params: Any) -> dict[str, Any]:
    reply = await wire.request("tools/call", {"name": name, **params})
    assert "result" in reply, reply
    return reply["result"]  # type: ignore[no-any-return]


async def test_the_first_listed_tool_succeeds_with_no_arguments(wire_factory: Any) -> None:
    wire = wire_factory(SERVER)
    tools = (await wire.request("tools/list"))["result"]["tools"]
    result = await call(wire, tools[0]["name"], arguments={})
    assert not result.get("isError")
    assert all(t.get("description") for t in tools)


async def test_test_reconnection_answers_where_a_stream_cannot_be_closed_early(
    wire_factory: Any
) -> None:
    wire = wire_factory(SERVER)  # a byte stream, not legacy HTTP: there is nothing to close
    result = await call(wire, "test_reconnection", arguments={})
    assert result["content"] == [{"type": "text", "text": "Reconnection test completed"}]


async def test_every_tool_and_prompt_the_server_leg_names_is_offered(wire_factory: Any) -> None:
    wire = wire_factory(SERVER)
    tools = {t["name"] for t in (await wire.request("tools/list"))["result"]["tools"]}
    prompts = {p["name"] for p in (await wire.request("prompts/list"))["result"]["prompts"]}
    assert {
        "test_simple_text", "test_image_content", "test_audio_content", "test_embedded_resource",
        "test_multiple_content_types", "test_error_handling", "test_tool_with_progress",
        "test_tool_with_logging", "json_schema_2020_12_tool", "test_missing_capability",
        "test_streaming_elicitation", "test_logging_tool", "test_trigger_tool_change",
        "test_trigger_prompt_change", "test_reconnection",
    } <= tools
    assert {
        "test_simple_prompt", "test_prompt_with_arguments", "test_prompt_with_embedded_resource",
        "test_prompt_with_image",
    } <= prompts


async def test_content_tools_return_the_exact_blocks_the_suite_expects(wire_factory: Any) -> None:
    wire = wire_factory(SERVER)
    text = await call(wire, "test_simple_text")
    assert text["content"] == [{"type": "text", "text": "This is a simple text response for testing."}]
    image = (await call(wire, "test_image_content"))["content"][0]
    assert image["mimeType"] == "image/png"
    assert base64.b64decode(image["data"]).startswith(b"\x89PNG\r\n\x1a\n")
    audio = (await call(wire, "test_audio_content"))["content"][0]
    assert audio["type"] == "audio" and audio["mimeType"] == "audio/wav"
    assert base64.b64decode(audio["data"])[8:12] == b"WAVE"
    embedded = (await call(wire, "test_embedded_resource"))["content"][0]
    assert embedded == {"type": "resource", "resource": {
        "uri": "test://embedded-resource", "mimeType": "text/plain",
        "text": "This is an embedded resource content."}}
    mixed = (await call(wire, "test_multiple_content_types"))["content"]
    assert [b["type"] for b in mixed] == ["text", "image", "resource"]
    assert mixed[2]["resource"]["mimeType"] == "application/json"


async def test_the_error_tool_fails_as_a_tool_result(wire_factory: Any) -> None:
    wire = wire_factory(SERVER)
    result = await call(wire, "test_error_handling")
    assert result["isError"] is True and result["content"][0]["text"]


async def test_progress_arrives_three_times_growing_with_the_callers_token(wire_factory: Any) -> None:
    wire = wire_factory(SERVER)
    await call(wire, "test_tool_with_progress", _meta={"progressToken": "progress-test-1"})
    progress = [n["params"] for n in wire.notifications if n["method"] == "notifications/progress"]
    assert [p["progress"] for p in progress] == [0, 50, 100]
    assert {p["progressToken"] for p in progress} == {"progress-test-1"}


async def test_missing_sampling_is_32021_naming_it_and_declared_sampling_succeeds(
    wire_factory: Any,
) -> None:
    wire = wire_factory(SERVER)
    reply = await wire.request("tools/call", {"name": "test_missing_capability"})
    assert reply["error"]["code"] == -32021
    assert reply["error"]["data"] == {"requiredCapabilities": {"sampling": {}}}
    caps = {"io.modelcontextprotocol/clientCapabilities": {"sampling": {}}}
    result = await call(wire, "test_missing_capability", _meta=caps)
    assert result["content"][0]["text"] == "Success"


async def test_the_logging_tool_logs_only_when_the_request_asks(wire_factory: Any) -> None:
    wire = wire_factory(SERVER)
    await call(wire, "test_logging_tool")
    assert wire.notifications == []
    await call(wire, "test_logging_tool", _meta={"io.modelcontextprotocol/logLevel": "info"})
    assert [n["method"] for n in wire.notifications] == ["notifications/message"]


async def test_trigger_tools_reach_only_the_listen_streams_that_asked(wire_factory: Any) -> None:
    wire = wire_factory(SERVER)
    for request_id, flag in ((901, "toolsListChanged"), (902, "promptsListChanged")):
        wire.methods[request_id] = "subscriptions/listen"
        wire.send({"jsonrpc": "2.0", "id": request_id, "method": "subscriptions/listen",
                   "params": {"notifications": {flag: True}, "_meta": meta()}})
    acks = [await wire.next(), await wire.next()]
    assert {a["method"] for a in acks} == {"notifications/subscriptions/acknowledged"}
    seen: list[dict[str, Any]] = []
    for tool in ("test_trigger_tool_change", "test_trigger_prompt_change"):
        await call(wire, tool)
        seen += wire.notifications
    while len(seen) < 2:
        seen.append(await wire.next())
    by_stream = {n["params"]["_meta"]["io.modelcontextprotocol/subscriptionId"]: n["method"]
                 for n in seen}
    assert by_stream == {901: "notifications/tools/list_changed",
                         902: "notifications/prompts/list_changed"}
    with pytest.raises(asyncio.TimeoutError):
        await wire.next(timeout=0.05)


async def test_resources_read_as_the_suite_expects_and_unknown_uris_name_themselves(
    wire_factory: Any,
) -> None:
    wire = wire_factory(SERVER)
    listed = (await wire.request("resources/list"))["result"]["resources"]
    assert all(r["uri"] and r["name"] for r in listed)
    first = (await wire.request("resources/read", {"uri": listed[0]["uri"]}))["result"]
    assert first["ttlMs"] >= 0 and first["cacheScope"] in ("public", "private")
    text = (await wire.request("resources/read", {"uri": "test://static-text"}))["result"]
    assert text["contents"][0]["text"] == "This is the content of the static text resource."
    blob = (await wire.request("resources/read", {"uri": "test://static-binary"}))["result"]
    assert blob["contents"][0]["mimeType"] == "image/png" and blob["contents"][0]["blob"]
    data = (await wire.request("resources/read", {"uri": "test://template/123/data"}))["result"]
    assert json.loads(data["contents"][0]["text"])["id"] == "123"
    uri = "test://nonexistent-resource-for-conformance-testing"
    missing = await wire.request("resources/read", {"uri": uri})
    assert missing["error"]["code"] == -32602 and missing["error"]["data"] == {"uri": uri}


async def test_prompts_carry_their_arguments_and_content_kinds(wire_factory: Any) -> None:
    wire = wire_factory(SERVER)
    args = {"arg1": "testValue1", "arg2": "testValue2"}
    got = (await wire.request("prompts/get", {"name": "test_prompt_with_arguments",
                                               "arguments": args}))["result"]
    text = got["messages"][0]["content"]["text"]
    assert "testValue1" in text and "testValue2" in text
    embedded = (await wire.request("prompts/get", {
        "name": "test_prompt_with_embedded_resource",
        "arguments": {"resourceUri": "test://example-resource"}}))["result"]
    assert embedded["messages"][0]["content"]["resource"]["uri"] == "test://example-resource"
    image = (await wire.request("prompts/get", {"name": "test_prompt_with_image"}))["result"]
    assert image["messages"][0]["content"]["type"] == "image"


async def test_completion_offers_values_for_a_prompt_argument(wire_factory: Any) -> None:
    wire = wire_factory(SERVER)
    reply = await wire.request("completion/complete", {
        "ref": {"type": "ref/prompt", "name": "test_prompt_with_arguments"},
        "argument": {"name": "arg1", "value": "test"}})
    assert reply["result"]["completion"]["values"] == ["test", "testValue1"]


async def test_the_2020_12_tool_lists_its_schema_verbatim(wire_factory: Any) -> None:
    wire = wire_factory(SERVER)
    tools = (await wire.request("tools/list"))["result"]["tools"]
    tool = next(t for t in tools if t["name"] == "json_schema_2020_12_tool")
    assert tool["inputSchema"] == fixtures.JSON_SCHEMA_2020_12


async def test_a_legacy_session_gets_logs_after_set_level_and_may_subscribe(wire_factory: Any) -> None:
    wire = wire_factory(SERVER)
    await initialize(wire, {"sampling": {}, "elicitation": {}})
    assert (await wire.request("logging/setLevel", {"level": "debug"}, with_meta=False))["result"] == {}
    reply = await wire.request("tools/call", {"name": "test_tool_with_logging", "arguments": {}},
                               with_meta=False)
    assert "result" in reply
    levels = [n["params"]["level"] for n in wire.notifications]
    assert levels == ["info", "info", "info"]
    for method in ("resources/subscribe", "resources/unsubscribe"):
        reply = await wire.request(method, {"uri": "test://watched-resource"}, with_meta=False)
        assert reply["result"] == {}


async def test_input_required_tools_finish_on_the_retry_with_the_sealed_state(
    wire_factory: Any,
) -> None:
    wire = wire_factory(SERVER)
    caps = {"io.modelcontextprotocol/clientCapabilities": {"elicitation": {}}}
    first = await call(wire, "test_input_required_result_request_state", _meta=caps)
    assert first["resultType"] == "input_required"
    assert first["inputRequests"]["confirm"]["method"] == "elicitation/create"
    answers = {"confirm": {"action": "accept", "content": {"ok": True}}}
    done = await call(wire, "test_input_required_result_request_state", _meta=caps,
                      inputResponses=answers, requestState=first["requestState"])
    assert done["content"][0]["text"].startswith("state-ok")
    tampered = await wire.request("tools/call", {
        "name": "test_input_required_result_tampered_state", "_meta": caps,
        "inputResponses": answers,
        "requestState": (await call(wire, "test_input_required_result_tampered_state",
                                    _meta=caps))["requestState"] + "-TAMPERED"})
    assert tampered["error"]["code"] == -32602


async def test_input_requests_follow_the_declared_capabilities(wire_factory: Any) -> None:
    wire = wire_factory(SERVER)
    caps = {"io.modelcontextprotocol/clientCapabilities": {"sampling": {}}}
    first = await call(wire, "test_input_required_result_capabilities", _meta=caps)
    assert [r["method"] for r in first["inputRequests"].values()] == ["sampling/createMessage"]
