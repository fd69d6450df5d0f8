"""Typed results: what `call_tool`, the lists, `read_resource` and `get_prompt` return, the
structured content read into the caller's type (`result=`), and the deprecated dict view."""

from __future__ import annotations

import asyncio
import base64
import dataclasses
import json
import sys
import textwrap
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, TypedDict

import pydantic
import pytest
from helpers.client.client_server import make_server
from helpers.client.schema_tap import SchemaTap

from mcpkit import Image, Server, ServerOptions
from mcpkit.client import (
    BlobResourceContents,
    CallToolResult,
    ClientOptions,
    EmbeddedResource,
    ImageContent,
    Prompt,
    ReadResourceResult,
    Resource,
    ResourceTemplate,
    ResultAsDictWarning,
    TextContent,
    TextResourceContents,
    Tool,
)
from mcpkit.clients import Client
from mcpkit.errors import ProtocolViolation, ResultTypeError, ToolError
from mcpkit.ext.tasks import TaskOptions
from mcpkit.testing import WireRecorder, connect
from mcpkit.transports.stdio.client import StdioServer

TASKS = "io.modelcontextprotocol/tasks"


class Sum(TypedDict):
    sum: int


@dataclasses.dataclass
class Slot:
    room: str
    starts: datetime


@dataclasses.dataclass
class Booking:
    title: str
    slot: Slot
    seats: int = 1


class Point(pydantic.BaseModel):
    x: float
    y: float


def typed_server() -> Server:
    server = Server("typed", options=ServerOptions(
        extensions={"tasks": TaskOptions(store="memory:", sync_budget_s=0.0)}))
    release = server.release = asyncio.Event()  # type: ignore[attr-defined]

    @server.tool()
    def add(a: int, b: int) -> Sum:
        """Add two integers."""
        return {"sum": a + b}

    @server.tool()
    def book(title: str) -> Booking:
        """Book a room."""
        return Booking(title, Slot("Ada", datetime(2031, 3, 4, 9, 30, tzinfo=UTC)), 4)

    @server.tool()
    def where() -> Point:
        """Where it is."""
        return Point(x=1.5, y=-2)

    @server.tool()
    def count(n: int) -> int:
        """A count, sent wrapped as {"result": n}."""
        return n

    @server.tool()
    def names() -> list[str]:
        """Some names."""
        return ["ada", "grace"]

    @server.tool()
    def say(text: str) -> str:
        """Text only: no structured content."""
        return text

    @server.tool()
    def picture() -> Image:
        """An image."""
        return Image(b"\x89PNG fake", "image/png")

    @server.tool()
    def refuse() -> Sum:
        """Always fails."""
        raise ValueError("no sums today")

    @server.tool(task="optional")
    async def slow_sum(a: int, b: int) -> Sum:
        """A sum run as a task: it waits for the test to release it."""
        await release.wait()
        return {"sum": a + b}

    return server


async def test_call_tool_returns_typed_content_structured_content_and_is_error(
    memory_client: Callable[..., Client],
) -> None:
    client = memory_client(make_server())
    result = await client.call_tool("add", {"a": 2, "b": 3})
    assert isinstance(result, CallToolResult)
    assert result.structured == {"sum": 5}
    assert result.data == {"sum": 5}, "without result=, data is the structured content"
    assert result.is_error is False
    [block] = result.content
    assert isinstance(block, TextContent) and json.loads(block.text) == {"sum": 5}
    assert result.text == block.text
    assert result.raw["structuredContent"] == {"sum": 5}


async def test_a_typeddict_names_the_type_of_data() -> None:
    async with connect(typed_server()) as client:
        result = await client.call_tool("add", {"a": 1, "b": 2}, result=Sum)
        assert result.data == {"sum": 3}


async def test_a_dataclass_is_built_with_its_nested_dataclass_and_datetime() -> None:
    async with connect(typed_server()) as client:
        booking = (await client.call_tool("book", {"title": "standup"}, result=Booking)).data
    assert booking == Booking("standup", Slot("Ada", datetime(2031, 3, 4, 9, 30,
                                                             tzinfo=UTC)), 4)
    assert isinstance(booking.slot.starts, datetime)


async def test_a_pydantic_model_is_validated_by_pydantic() -> None:
    async with connect(typed_server()) as client:
        point = (await client.call_tool("where", result=Point)).data
    assert point == Point(x=1.5, y=-2.0)


async def test_a_type_that_is_not_an_object_reads_the_wrapped_result() -> None:
    async with connect(typed_server()) as client:
        assert (await client.call_tool("count", {"n": 7}, result=int)).data == 7
        assert (await client.call_tool("names", result=list[str])).data == ["ada", "grace"]
        assert (await client.call_tool("count", {"n": 7})).data == {"result": 7}


async def test_structured_content_that_does_not_fit_the_type_names_the_tool_type_and_place(
) -> None:
    async with connect(typed_server()) as client:
        with pytest.raises(ResultTypeError, match=r"tools/call 'add'.*fit Booking.*"
                           r"structuredContent.title: missing required property"):
            await client.call_tool("add", {"a": 1, "b": 2}, result=Booking)
        with pytest.raises(ResultTypeError, match=r"fit str.*structuredContent.result"):
            await client.call_tool("count", {"n": 7}, result=str)


async def test_a_tool_without_structured_content_cannot_be_read_as_a_type() -> None:
    async with connect(typed_server()) as client:
        with pytest.raises(ResultTypeError, match=r"'say'.*no structuredContent.*without result="):
            await client.call_tool("say", {"text": "hi"}, result=Sum)
        plain = await client.call_tool("say", {"text": "hi"})
        assert plain.data is None and plain.text == "hi"


async def test_a_type_the_client_cannot_read_is_refused_before_the_tool_runs() -> None:
    recorder = WireRecorder()
    async with connect(typed_server(), recorder=recorder) as client:
        with pytest.raises(TypeError, match="unsupported type annotation"):
            await client.call_tool("add", {"a": 1, "b": 2}, result=complex)
    assert recorder.requests("tools/call") == []


async def test_a_failed_tool_is_a_result_whose_data_raises_the_tool_error() -> None:
    async with connect(typed_server()) as client:
        failed = await client.call_tool("refuse", result=Sum)
    assert failed.is_error and "refuse" in failed.text
    with pytest.raises(ToolError, match=r"tools/call 'refuse' failed: .*refuse"):
        failed.data  # noqa: B018


async def test_a_typed_call_reads_the_tool_list_once_to_check_the_output_schema() -> None:
    recorder = WireRecorder()
    async with connect(typed_server(), recorder=recorder) as client:
        await client.call_tool("add", {"a": 1, "b": 2}, result=Sum)
        await client.call_tool("add", {"a": 3, "b": 4}, result=Sum)
    assert len(recorder.requests("tools/list")) == 1


async def test_image_content_is_typed_and_decoded() -> None:
    async with connect(typed_server()) as client:
        [block] = (await client.call_tool("picture")).content
    assert isinstance(block, ImageContent)
    assert block.mime_type == "image/png" and block.bytes == b"\x89PNG fake"
    assert block.data == base64.b64encode(b"\x89PNG fake").decode()


async def test_a_task_result_is_read_into_the_type_too() -> None:
    server = typed_server()
    async with connect(server, options=ClientOptions(extensions={TASKS: {}})) as client:
        handle = await client.start_tool("slow_sum", {"a": 20, "b": 22}, result=Sum)
        assert handle.task_id is not None, "the server ran it as a task"
        server.release.set()  # type: ignore[attr-defined]
        assert (await handle.wait()).data == {"sum": 42}
        called = await client.call_tool("slow_sum", {"a": 1, "b": 1}, result=Sum)
        assert called.data == {"sum": 2}
        again = await client.task(handle.task_id, result=Sum).wait()
        assert again.data == {"sum": 42}


async def test_lists_return_typed_items(memory_client: Callable[..., Client]) -> None:
    client = memory_client(make_server())
    tools = await client.list_tools()
    assert all(isinstance(t, Tool) for t in tools)
    add = client.tools["add"]
    assert add.name == "add" and add.description == "Add two integers."
    assert add.input_schema["required"] == ["a", "b"]
    assert add.output_schema is not None and "sum" in add.output_schema["properties"]
    [resource, *_] = await client.list_resources()
    assert isinstance(resource, Resource)
    assert resource.uri == "mem://counter" and resource.mime_type == "text/plain"
    [template] = await client.list_resource_templates()
    assert isinstance(template, ResourceTemplate) and template.uri_template == "mem://items/{name}"
    prompts = {p.name: p for p in await client.list_prompts()}
    greet = prompts["greet"]
    assert isinstance(greet, Prompt)
    assert [(a.name, a.required) for a in greet.arguments] == [("name", True)]
    assert await client.list_tools() == tools, "items compare by their wire objects"


async def test_read_resource_and_get_prompt_return_typed_results(
    memory_client: Callable[..., Client],
) -> None:
    client = memory_client(make_server())
    read = await client.read_resource("mem://items/pen")
    assert isinstance(read, ReadResourceResult)
    [contents] = read.contents
    assert isinstance(contents, TextResourceContents)
    assert (contents.uri, contents.text, read.text) == ("mem://items/pen", "item pen", "item pen")
    prompt = await client.get_prompt("greet", {"name": "Ada"})
    [message] = prompt.messages
    assert message.role == "user"
    assert isinstance(message.content, TextContent) and message.content.text == "Hello, Ada!"


def test_blob_contents_and_embedded_resources_are_typed() -> None:
    raw = {"content": [{"type": "resource", "resource": {
        "uri": "file:///a.bin", "mimeType": "application/octet-stream",
        "blob": base64.b64encode(b"\x00\x01").decode()}}]}
    [block] = CallToolResult(raw).content
    assert isinstance(block, EmbeddedResource)
    assert isinstance(block.resource, BlobResourceContents)
    assert block.resource.bytes == b"\x00\x01"


@pytest.mark.parametrize(("content", "message"), [
    ([{"type": "video", "uri": "x"}], r"content\[0\]: content type 'video' is none of"),
    (["just text"], r"content\[0\]: expected a content block object, got string 'just text'"),
    ([{"type": "text", "text": 5}], r"content\[0\]: 'text' is integer 5, not a string"),
    ([{"type": "image", "data": "%%%", "mimeType": "image/png"}], "'data' is not base64"),
    ("text", r"'content' is string 'text', not a list"),
])
def test_a_hostile_result_is_refused_by_place_when_read(content: Any, message: str) -> None:
    result = CallToolResult({"content": content}, "tools/call 'x'")

    def read() -> None:
        for block in result.content:
            getattr(block, "text", None) or getattr(block, "bytes", None)

    with pytest.raises(ProtocolViolation, match=r"tools/call 'x'.*" + message):
        read()


async def test_reading_a_result_as_a_dict_still_works_and_warns(
    memory_client: Callable[..., Client],
) -> None:
    client = memory_client(make_server())
    result = await client.call_tool("add", {"a": 2, "b": 3})
    with pytest.warns(ResultAsDictWarning, match=r"reading a CallToolResult as a dict.*\.raw"):
        assert result["structuredContent"] == {"sum": 5}
    with pytest.warns(ResultAsDictWarning):
        assert result.get("isError", False) is False
    with pytest.warns(ResultAsDictWarning):
        assert result == result.raw
    with pytest.warns(ResultAsDictWarning):
        assert dict(result) == result.raw
    tools = await client.list_tools()
    with pytest.warns(ResultAsDictWarning, match="reading a Tool as a dict"):
        assert tools[0]["name"] == tools[0].name
    assert json.loads(json.dumps(result.raw)) == result.raw, "the wire dict serializes as it is"
    with pytest.raises(TypeError, match="not JSON serializable"):
        json.dumps(result)


LYING_SERVER = """
    import json, sys
    SCHEMA = {"type": "object", "properties": {"sum": {"type": "integer"}}, "required": ["sum"]}
    for line in sys.stdin:
        msg = json.loads(line)
        if "id" not in msg:
            continue
        done = {"resultType": "complete", "ttlMs": 0, "cacheScope": "public"}
        method = msg["method"]
        if method == "server/discover":
            result = {**done, "supportedVersions": ["2026-07-28"], "capabilities": {"tools": {}},
                      "serverInfo": {"name": "liar", "version": "1"}}
        elif method == "tools/list":
            result = {**done, "tools": [{"name": "add", "inputSchema": {"type": "object"},
                                         "outputSchema": SCHEMA}]}
        else:
            result = {"resultType": "complete", "content": [],
                      "structuredContent": {"sum": "five"}}
        print(json.dumps({"jsonrpc": "2.0", "id": msg["id"], "result": result}), flush=True)
"""


async def test_a_typed_call_holds_the_result_to_the_tools_output_schema(tmp_path: Path) -> None:
    path = tmp_path / "liar.py"
    path.write_text(textwrap.dedent(LYING_SERVER))
    tap = SchemaTap(check_server=False)
    async with Client(StdioServer([sys.executable, str(path)], stderr="capture",
                                  tap=tap)) as client:
        untyped = await client.call_tool("add")
        assert untyped.structured == {"sum": "five"}, "unchecked unless asked"
        with pytest.raises(ProtocolViolation, match=r"'add'.*does not match the tool's "
                           r"outputSchema at sum"):
            await client.call_tool("add", result=Sum)
    tap.assert_clean()
