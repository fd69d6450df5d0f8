"""`-> ToolResult` is a pass-through, and which return annotations publish no outputSchema.

A tool that publishes an outputSchema promises `structuredContent` in every result: strict
clients (the TypeScript SDK among them) refuse a result without it. So only an annotation that
describes data publishes one; text, content, a spelled-out `ToolResult`, `Any` and the types of
values that are no JSON data publish none. A `ToolResult` tool can publish one all the same
with an explicit `output_schema=`, and is then held to it.
"""

from __future__ import annotations

import typing
from collections.abc import AsyncIterator, Awaitable, Coroutine, Generator, Iterator
from typing import Any, Optional

import pytest

from mcpkit import Server
from mcpkit.server.content import (
    Audio,
    Blob,
    ContentBlock,
    Image,
    ResourceLink,
    Text,
    ToolResult,
)

SERVER_INFO = "io.modelcontextprotocol/serverInfo"

NO_SCHEMA: list[Any] = [
    ToolResult,
    Optional[ToolResult],  # noqa: UP045 (the spelling users write)
    ToolResult | None,
    typing.Annotated[ToolResult, "spelled out"],
    Text, Image, Audio, Blob, ResourceLink, ContentBlock,
    Image | Text,
    Optional[Image],  # noqa: UP045
    list[Image],
    list[ContentBlock],
    list[str | Image],
    tuple[Image, Text],
    bytes, bytearray, bytes | None,
    str, Optional[str], str | None,  # noqa: UP045
    Any, Optional[Any], object,  # noqa: UP045
    None,
    Awaitable[ToolResult], Awaitable[int], Coroutine[Any, Any, dict[str, int]],
    Iterator[str], Generator[int, None, None], AsyncIterator[int],
]


def _returning(annotation: Any) -> Any:
    def tool() -> Any:
        return "x"

    tool.__annotations__["return"] = annotation
    return tool


@pytest.mark.parametrize("annotation", NO_SCHEMA, ids=repr)
def test_an_annotation_that_describes_no_data_publishes_no_output_schema(annotation: Any) -> None:
    server = Server("results")
    tool = server.add_tool(_returning(annotation), "t")
    assert "outputSchema" not in tool.definition
    assert tool.signature.output_schema is None and tool.check_output is None


def test_no_annotation_at_all_publishes_none() -> None:
    server = Server("results")
    tool = server.add_tool(lambda: "x", "t")
    assert "outputSchema" not in tool.definition


@pytest.mark.parametrize("annotation", [int, list[str], dict[str, int], str | int], ids=repr)
def test_an_annotation_of_data_still_publishes_its_schema(annotation: Any) -> None:
    server = Server("results")
    tool = server.add_tool(_returning(annotation), "t")
    assert tool.definition["outputSchema"]["type"] == "object"


def text_or_nothing_server() -> Server:
    server = Server("results", "1.0.0")

    @server.tool()
    def maybe_text(give: bool) -> str | None:
        """Text, or nothing when there is none."""
        return "plain words" if give else None

    @server.tool()
    def anything(kind: str) -> Any | None:
        """Whatever it finds."""
        return {"found": 1} if kind == "data" else "words"

    return server


async def test_text_or_nothing_is_sent_as_text_not_as_structured_json(wire_factory: Any) -> None:
    wire = wire_factory(text_or_nothing_server())
    listed = {t["name"]: t for t in (await wire.request("tools/list"))["result"]["tools"]}
    assert "outputSchema" not in listed["maybe_text"] and "outputSchema" not in listed["anything"]
    text = (await wire.request("tools/call", {"name": "maybe_text", "arguments": {"give": True}}))
    assert text["result"]["content"] == [{"type": "text", "text": "plain words"}]
    assert "structuredContent" not in text["result"]
    empty = (await wire.request("tools/call", {"name": "maybe_text", "arguments": {"give": False}}))
    assert empty["result"]["content"] == [] and "isError" not in empty["result"]
    data = (await wire.request("tools/call", {"name": "anything", "arguments": {"kind": "data"}}))
    assert data["result"]["content"] == [{"type": "text", "text": '{"found":1}'}]


def test_structured_output_forced_on_a_tool_result_is_refused_pointing_to_output_schema() -> None:
    server = Server("results")

    def spelled() -> ToolResult:
        return ToolResult(content="x")

    with pytest.raises(TypeError, match="pass output_schema= to publish one") as caught:
        server.add_tool(spelled, structured_output=True)
    assert "spelled" in str(caught.value)
    assert server.tools == {}


SUM = {"type": "object", "properties": {"sum": {"type": "integer"}}, "required": ["sum"]}


def schema_server() -> Server:
    server = Server("results", "1.0.0")

    @server.tool(output_schema=SUM)
    def add(a: int, b: int) -> ToolResult:
        """Spells out its result, and publishes the schema it keeps to."""
        return ToolResult(content=f"{a} + {b} = {a + b}", structured={"sum": a + b},
                          meta={"example.com/step": 1})

    @server.tool(output_schema=SUM)
    def forgets() -> ToolResult:
        """Publishes a schema and then sends no structured content."""
        return ToolResult(content="the sum is 3")

    @server.tool(output_schema=SUM)
    def cannot(why: str) -> ToolResult:
        """Reports an error, which needs no structured content."""
        return ToolResult(content=f"cannot add: {why}", is_error=True)

    @server.tool(output_schema=SUM)
    def wrong() -> ToolResult:
        return ToolResult(content="three", structured={"sum": "three"})

    return server


async def test_a_tool_result_with_an_explicit_output_schema_publishes_it_and_keeps_to_it(
    wire_factory: Any,
) -> None:
    wire = wire_factory(schema_server())
    listed = {t["name"]: t for t in (await wire.request("tools/list"))["result"]["tools"]}
    assert listed["add"]["outputSchema"] == SUM
    result = (await wire.request("tools/call", {"name": "add", "arguments": {"a": 1, "b": 2}}))[
        "result"]
    assert result == {
        "resultType": "complete",
        "content": [{"type": "text", "text": "1 + 2 = 3"}],
        "structuredContent": {"sum": 3},
        "_meta": {"example.com/step": 1, SERVER_INFO: {"name": "results", "version": "1.0.0"}},
    }
    wrong = await wire.request("tools/call", {"name": "wrong"})
    assert wrong["error"]["code"] == -32603
    assert "tool 'wrong' returned structured content that does not match" in wrong["error"][
        "message"]


async def test_a_tool_result_missing_the_structured_content_its_schema_promises_is_refused(
    wire_factory: Any,
) -> None:
    wire = wire_factory(schema_server())
    reply = await wire.request("tools/call", {"name": "forgets"})
    assert "result" not in reply
    assert reply["error"]["code"] == -32603
    assert reply["error"]["message"] == (
        "tool 'forgets' has an outputSchema, so its ToolResult must carry structured content "
        "(ToolResult.structured), unless it reports an error (is_error=True)"
    )
    error = (await wire.request("tools/call", {"name": "cannot", "arguments": {"why": "no"}}))
    assert error["result"]["isError"] is True
    assert error["result"]["content"] == [{"type": "text", "text": "cannot add: no"}]
    assert "structuredContent" not in error["result"]
