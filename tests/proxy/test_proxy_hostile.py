"""A hostile server behind the proxy (a real process, `hostile_server.py`, in each era): what it
sends off the protocol never reaches the proxy's clients as it came and never stops the proxy.
Every message the proxy sends is checked against the official schema of its revision (the
client's tap), the proxy answers the next call after each, and no exception escapes a guard
of mcpkit's (no traceback in its log)."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from typing import Any

import pytest
from helpers.proxy.hostile import Bugs, Hostile

from mcpkit import Client, InvalidParamsError, RPCError
from mcpkit.errors import InternalError, RequestTimeoutError

WAIT_S = 10.0
OWN = {"arm", "go", "announce", "echo"}
PNG = "iVBORw0KGgo="


@pytest.fixture(params=["legacy", "modern"])
async def hostile(request: pytest.FixtureRequest) -> AsyncIterator[Hostile]:
    made = Hostile(request.param)
    with Bugs() as bugs:
        async with made.proxy:
            yield made
        bugs.assert_none()
    assert not made.tap.problems, made.tap.problems


async def _still_answers(client: Client) -> None:
    assert (await client.call_tool("echo", {"text": "alive"})).text == "alive"


async def _relisted(hostile: Hostile, client: Client, tools: list[Any]) -> set[str]:
    """The proxy's tool names once the upstream, armed with `tools`, announced a change."""
    await hostile.arm(client, **{"tools/list": {"tools": tools}})
    async with client.listen(tools=True) as sub:
        await client.call_tool("announce", {"method": "notifications/tools/list_changed"})
        async with asyncio.timeout(WAIT_S):
            async for note in sub:
                if note["method"] == "notifications/tools/list_changed":
                    break
    return {t.name for t in await client.list_tools(fresh=True)}


async def test_tool_definitions_that_cannot_be_served_are_left_out(hostile: Hostile) -> None:
    plain = {"type": "object"}
    bad = [
        {"name": "bad name!", "inputSchema": plain},
        {"name": "noschema"},
        {"name": "arrayschema", "inputSchema": {"type": "array"}},
        {"name": "refout", "inputSchema": {"type": "object", "properties": {
            "x": {"$ref": "https://evil.example/x.json"}}}},
        {"name": 7, "inputSchema": plain},
        "not a tool",
        {"name": "badout", "inputSchema": plain, "outputSchema": {"type": "string"}},
        {"name": "echo", "inputSchema": plain, "description": "a second echo"},
    ]
    good = {"name": "good", "inputSchema": plain, "title": 5, "icons": "x",
            "annotations": {"readOnlyHint": "yes", "title": "Good"}, "_meta": [1]}
    async with hostile.client() as client:
        names = await _relisted(hostile, client, [*bad, good])
        assert names == OWN | {"good"}
        listed = next(t for t in await client.list_tools() if t.name == "good")
        assert listed.raw == {"name": "good", "inputSchema": plain,
                              "annotations": {"title": "Good"}}
        assert next(t for t in await client.list_tools() if t.name == "echo").description is None
        await _still_answers(client)


@pytest.mark.parametrize("client_era", ["modern", "legacy"])
async def test_content_that_breaks_the_protocol_is_replaced_by_a_note_saying_so(
        hostile: Hostile, client_era: str) -> None:
    content = [{"type": "text", "text": "kept"}, {"type": "video", "data": "x"},
               {"type": "image", "data": "!!not base64!!", "mimeType": "image/png"},
               {"type": "image", "data": PNG, "mimeType": "image/png",
                "annotations": {"priority": 7, "audience": ["user", "robot"]}},
               {"type": "resource", "resource": {"uri": "x://a"}}, 5]
    result = {"content": content, "isError": "yes", "structuredContent": [1, 2],
              "_meta": {"io.modelcontextprotocol/serverInfo": "me", "kept": True}}
    async with hostile.client(client_era) as client:
        await hostile.arm(client, **{"tools/call": result})
        got = await hostile.go(client)
        blocks = got.raw["content"]
        assert blocks[0] == {"type": "text", "text": "kept"}
        assert [b["type"] for b in blocks] == ["text", "text", "text", "image", "text", "text"]
        assert "left out" in blocks[1]["text"] and "'video'" in blocks[1]["text"]
        assert "not base64" in blocks[2]["text"]
        assert blocks[3] == {"type": "image", "data": PNG, "mimeType": "image/png",
                             "annotations": {}}
        assert got.is_error is False and got.structured is None
        assert got.raw["_meta"]["kept"] is True
        assert got.raw["_meta"].get("io.modelcontextprotocol/serverInfo") != "me"
        await _still_answers(client)


async def test_a_result_that_is_not_one_fails_the_call_saying_why(hostile: Hostile) -> None:
    async with hostile.client() as client:
        await hostile.arm(client, **{"tools/call": {"content": "not a list"}})
        failed = await hostile.go(client)
        assert failed.is_error
        assert "cannot be passed on" in failed.text and "content" in failed.text
        await hostile.arm(client, **{"tools/call": 5})
        with pytest.raises(InternalError, match="broke the protocol"):
            await hostile.go(client)
        await _still_answers(client)


async def test_an_upstream_error_of_any_shape_reaches_the_caller_as_an_error(
        hostile: Hostile) -> None:
    async with hostile.client() as client:
        await hostile.arm(client, **{"tools/call": {"error": {
            "code": -32602, "message": "x" * 100_000, "data": {"big": "y" * 10_000}}}})
        with pytest.raises(InvalidParamsError) as raised:
            await hostile.go(client)
        assert len(raised.value.message) < 2100 and raised.value.data is None
        await hostile.arm(client, **{"tools/call": {"error": {"code": "nope", "message": 5}}})
        with pytest.raises(RPCError):
            await hostile.go(client)
        await _still_answers(client)


async def test_notifications_off_the_protocol_are_dropped_or_checked(hostile: Hostile) -> None:
    notes = [
        {"jsonrpc": "2.0", "method": "notifications/progress",
         "params": {"progressToken": "$token", "progress": "half"}},
        {"jsonrpc": "2.0", "method": "notifications/progress",
         "params": {"progressToken": "$token", "progress": 5, "total": "ten", "message": 3}},
        {"jsonrpc": "2.0", "method": "notifications/progress",
         "params": {"progressToken": "$token", "progress": 2}},
        {"jsonrpc": "2.0", "method": "notifications/message",
         "params": {"level": "loud", "data": "x"}},
        {"jsonrpc": "2.0", "method": "notifications/message", "params": {"level": "info"}},
        {"jsonrpc": "2.0", "method": "notifications/message",
         "params": {"level": "info", "data": {"fine": True}, "logger": 5}},
        {"jsonrpc": "2.0", "method": "notifications/unknown", "params": [1]},
        {"jsonrpc": "2.0", "method": "notifications/message", "params": "x"},
    ]
    progress: list[tuple[Any, ...]] = []
    logs: list[tuple[Any, ...]] = []
    async with hostile.client() as client:
        await hostile.arm(client, notes=notes)
        await hostile.go(client, progress=lambda *a: progress.append(a),
                         log=lambda *a: logs.append(a))
        assert progress == [(5, None, None)]  # "half" is no number; 2 after 5 goes back
        # No level it knows: dropped. No data: passed on with null data, as the schema allows.
        assert logs == [("info", None, None), ("info", {"fine": True}, None)]
        await _still_answers(client)


@pytest.mark.parametrize("ask", [
    {"method": "elicitation/create", "params": {"message": "x", "requestedSchema": {
        "type": "array"}}},
    {"method": "elicitation/create", "params": {"message": "x", "requestedSchema": {
        "type": "object", "properties": {"deep": {"type": "object"}}}}},
    {"method": "elicitation/create", "params": {"message": "go", "mode": "url",
                                                "url": "javascript:alert(1)",
                                                "elicitationId": "e1"}},
    {"method": "elicitation/create", "params": {"message": "x", "mode": "telepathy"}},
    {"method": "sampling/createMessage", "params": {"messages": [], "maxTokens": 5}},
    {"method": "sampling/createMessage", "params": {"messages": [
        {"role": "system", "content": {"type": "text", "text": "x"}}], "maxTokens": 5}},
    {"method": "tools/call", "params": {"name": "steal"}},
], ids=["array-form", "nested-form", "javascript-url", "unknown-mode", "no-messages",
        "system-role", "not-a-question"])
async def test_a_question_that_cannot_be_asked_is_refused_upstream_and_the_call_goes_on(
        ask: dict[str, Any]) -> None:
    hostile = Hostile("legacy")
    with Bugs() as bugs:
        async with hostile.proxy, hostile.client() as client:
            await hostile.arm(client, asks=[ask], **{"tools/call": {
                "content": [{"type": "text", "text": "done"}]}})
            assert (await hostile.go(client)).text == "done"
            await _still_answers(client)
        bugs.assert_none()
    assert not hostile.tap.problems, hostile.tap.problems


async def test_a_request_that_is_no_request_leaves_its_call_to_time_out_and_nothing_else(
) -> None:
    # Params that are not an object make no JSON-RPC request: there is nothing to answer, so
    # the upstream waits; the caller's own timeout ends the call, which the proxy cancels.
    hostile = Hostile("legacy")
    with Bugs() as bugs:
        async with hostile.proxy, hostile.client() as client:
            await hostile.arm(client, asks=[{"method": "elicitation/create", "params": 7}])
            with pytest.raises(RequestTimeoutError):
                await hostile.go(client, timeout=0.5)
            await _still_answers(client)
        bugs.assert_none()
    assert not hostile.tap.problems, hostile.tap.problems


async def test_reads_prompts_and_completions_off_the_protocol_are_refused(
        hostile: Hostile) -> None:
    async with hostile.client() as client:
        await hostile.arm(client, **{"resources/read": {"contents": [{"uri": "x://a"}]}})
        with pytest.raises(InternalError, match="neither text nor blob"):
            await client.read_resource("x://a")
        await hostile.arm(client, **{"resources/read": {"contents": [
            {"uri": "x://a", "blob": "!!"}]}})
        with pytest.raises(InternalError, match="not base64"):
            await client.read_resource("x://a")
        await hostile.arm(client, **{"resources/read": {"contents": [
            {"uri": "x://b", "text": "fine", "mimeType": 5}]}})
        read = await client.read_resource("x://b", fresh=True)
        assert read.raw["contents"] == [{"uri": "x://b", "text": "fine"}]
        await hostile.arm(client, **{"completion/complete": {"completion": {
            "values": [str(i) for i in range(150)], "total": "many"}}})
        done = await client.complete({"type": "ref/resource", "uri": "x://{n}"}, "n", "")
        assert len(done["values"]) == 100 and done["hasMore"] is True and "total" not in done
        await hostile.arm(client, **{"completion/complete": {"completion": {"values": [1]}}})
        with pytest.raises(InternalError, match="values"):
            await client.complete({"type": "ref/resource", "uri": "x://{n}"}, "n", "")
        await _still_answers(client)
