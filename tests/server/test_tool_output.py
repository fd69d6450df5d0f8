"""What a tool returns, as the client sees it: `structuredContent` held to the tool's
outputSchema (TOOL-12), and `ToolResult` spelled out field by field, every reply schema-checked
by the `wire_factory` connection."""

from __future__ import annotations

import logging
from typing import Any

import pytest

from mcpkit import Image, ResourceLink, Server, Text, ToolResult

SERVER_INFO = "io.modelcontextprotocol/serverInfo"
POINT = {
    "type": "object",
    "properties": {"x": {"type": "integer"}, "y": {"type": "integer"}},
    "required": ["x", "y"],
}
PNG = b"\x89PNG\r\n\x1a\n" + bytes(8)


def output_server() -> Server:
    server = Server("output", "1.0.0")

    @server.tool(output_schema=POINT)
    def point(x: Any, y: Any) -> dict[str, Any]:
        """Returns whatever it is given, held to its outputSchema."""
        return {"x": x, "y": y}

    @server.tool(output_schema=POINT)
    def spelled_point(x: Any, y: Any) -> ToolResult:
        """The same, as a ToolResult."""
        return ToolResult(content=[f"{x},{y}"], structured={"x": x, "y": y})

    @server.tool(output_schema={"type": "array", "items": {"type": "integer"}})
    def numbers(values: list[Any]) -> list[Any]:
        """An outputSchema whose root is not an object (JSS-7)."""
        return values

    @server.tool()
    def everything() -> ToolResult:
        """Every field of a ToolResult at once."""
        return ToolResult(
            content=[
                "plain",
                Text("noted", annotations={"audience": ["user"], "priority": 0.5}),
                Image(PNG),
                ResourceLink("test://doc/1", "doc-1", title="Doc one", mime_type="text/plain"),
            ],
            structured={"answer": 42, "tags": ["a", "b"]},
            is_error=True,
            meta={"example.com/trace": "t-1"},
        )

    @server.tool()
    def bare() -> ToolResult:
        """A ToolResult with nothing in it."""
        return ToolResult()

    @server.tool()
    def only_text() -> ToolResult:
        """Content given as one string."""
        return ToolResult(content="just this")

    @server.tool()
    def data_as_content() -> ToolResult:
        """Data put where content belongs."""
        return ToolResult(content=[{"rows": 3}])

    return server


async def test_structured_content_that_breaks_the_output_schema_is_an_internal_error(
    wire_factory: Any,
) -> None:
    wire = wire_factory(output_server())
    reply = await wire.request("tools/call", {"name": "point", "arguments": {"x": 1, "y": "two"}})
    assert "result" not in reply
    error = reply["error"]
    assert error["code"] == -32603
    assert "'point'" in error["message"] and "outputSchema" in error["message"]
    assert "'two' is not of type 'integer'" in error["message"]


async def test_structured_content_that_fits_the_output_schema_is_sent_with_a_text_copy(
    wire_factory: Any,
) -> None:
    wire = wire_factory(output_server())
    result = (await wire.request("tools/call", {"name": "point", "arguments": {"x": 1, "y": 2}}))[
        "result"
    ]
    assert result["structuredContent"] == {"x": 1, "y": 2}
    assert result["content"] == [{"type": "text", "text": '{"x":1,"y":2}'}]
    listed = (await wire.request("tools/list"))["result"]["tools"]
    assert next(t for t in listed if t["name"] == "point")["outputSchema"] == POINT


async def test_a_missing_required_property_is_caught_too(wire_factory: Any) -> None:
    server = Server("output")

    @server.tool(output_schema=POINT)
    def half() -> dict[str, Any]:
        """Forgets y."""
        return {"x": 1}

    wire = wire_factory(server)
    error = (await wire.request("tools/call", {"name": "half"}))["error"]
    assert error["code"] == -32603
    assert "'half'" in error["message"] and "'y' is a required property" in error["message"]


async def test_a_tool_result_s_structured_content_is_held_to_the_output_schema(
    wire_factory: Any,
) -> None:
    wire = wire_factory(output_server())
    bad = await wire.request("tools/call", {"name": "spelled_point", "arguments": {"x": "a", "y": 2}})
    assert bad["error"]["code"] == -32603
    assert "'spelled_point'" in bad["error"]["message"]
    assert "'a' is not of type 'integer'" in bad["error"]["message"]
    good = (await wire.request("tools/call", {"name": "spelled_point", "arguments": {"x": 3, "y": 4}}))
    assert good["result"]["structuredContent"] == {"x": 3, "y": 4}
    assert good["result"]["content"] == [{"type": "text", "text": "3,4"}]


async def test_an_output_schema_need_not_be_an_object(wire_factory: Any) -> None:
    wire = wire_factory(output_server())
    good = (await wire.request("tools/call", {"name": "numbers", "arguments": {"values": [1, 2]}}))
    assert good["result"]["structuredContent"] == [1, 2]
    assert good["result"]["content"] == [{"type": "text", "text": "[1,2]"}]
    bad = await wire.request("tools/call", {"name": "numbers", "arguments": {"values": [1, "x"]}})
    assert bad["error"]["code"] == -32603
    assert "'numbers'" in bad["error"]["message"] and "'x' is not of type 'integer'" in bad["error"][
        "message"
    ]


async def test_every_field_of_a_tool_result_reaches_the_wire(wire_factory: Any) -> None:
    wire = wire_factory(output_server())
    result = (await wire.request("tools/call", {"name": "everything"}))["result"]
    assert result["content"] == [
        {"type": "text", "text": "plain"},
        {"type": "text", "text": "noted", "annotations": {"audience": ["user"], "priority": 0.5}},
        {"type": "image", "data": "iVBORw0KGgoAAAAAAAAAAA==", "mimeType": "image/png"},
        {
            "type": "resource_link",
            "uri": "test://doc/1",
            "name": "doc-1",
            "title": "Doc one",
            "mimeType": "text/plain",
        },
    ]
    assert result["structuredContent"] == {"answer": 42, "tags": ["a", "b"]}
    assert result["isError"] is True
    assert result["_meta"]["example.com/trace"] == "t-1"
    assert result["_meta"][SERVER_INFO] == {"name": "output", "version": "1.0.0"}


async def test_an_empty_tool_result_is_empty_content_and_nothing_else(wire_factory: Any) -> None:
    wire = wire_factory(output_server())
    result = (await wire.request("tools/call", {"name": "bare"}))["result"]
    assert result == {"resultType": "complete", "content": [], "_meta": {SERVER_INFO: {
        "name": "output", "version": "1.0.0"}}}
    text = (await wire.request("tools/call", {"name": "only_text"}))["result"]
    assert text["content"] == [{"type": "text", "text": "just this"}]
    assert "structuredContent" not in text and "isError" not in text


async def test_a_tool_annotated_to_return_a_tool_result_advertises_no_output_schema(
    wire_factory: Any,
) -> None:
    """ToolResult's own fields (content, structured, is_error, meta) are not the tool's output."""
    wire = wire_factory(output_server())
    tools = {t["name"]: t for t in (await wire.request("tools/list"))["result"]["tools"]}
    for name in ("everything", "bare", "only_text", "data_as_content"):
        assert "outputSchema" not in tools[name], name
    assert tools["spelled_point"]["outputSchema"] == POINT


async def test_data_given_as_tool_result_content_is_an_error_not_an_empty_result(
    wire_factory: Any, caplog: pytest.LogCaptureFixture
) -> None:
    wire = wire_factory(output_server())
    with caplog.at_level(logging.ERROR, logger="mcpkit.server"):
        reply = await wire.request("tools/call", {"name": "data_as_content"})
    assert reply["error"]["code"] == -32603
    assert "rows" not in str(reply)
    assert "tool 'data_as_content' returned a ToolResult whose content is not content" in caplog.text
    assert "ToolResult.structured" in caplog.text
    after = await wire.request("tools/call", {"name": "only_text"})
    assert after["result"]["content"] == [{"type": "text", "text": "just this"}]
