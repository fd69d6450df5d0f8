"""What a tool returns, as the client sees it: `structuredContent` held to the tool's
outputSchema (TOOL-12), and `ToolResult` spelled out field by field, every reply schema-checked
by the `wire_factory` connection."""

from __future__ import annotations

import dataclasses
import enum
import logging
import subprocess
import sys
from dataclasses import InitVar, dataclass, field
from datetime import UTC, date, datetime
from typing import Any, NotRequired, TypedDict
from uuid import UUID

import orjson
import pytest
from jsonschema import Draft202012Validator
from pydantic import BaseModel, ConfigDict, Field, RootModel, computed_field

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
    result = reply["result"]
    assert result["isError"] is True and "structuredContent" not in result
    assert "rows" not in str(reply)
    text = result["content"][0]["text"]
    assert "tool 'data_as_content' returned a ToolResult whose content is not content" in text
    assert "ToolResult.structured" in text
    after = await wire.request("tools/call", {"name": "only_text"})
    assert after["result"]["content"] == [{"type": "text", "text": "just this"}]


# -- typed tools: the outputSchema derived from the return annotation is held too (TOOL-12) -----


class Sum(TypedDict):
    sum: int
    terms: NotRequired[list[int]]


class Colour(enum.Enum):
    RED = "red"
    BLUE = "blue"


@dataclass
class Leg:
    start: datetime
    day: date


@dataclass
class Trip:
    """A dataclass with everything `output_to_json` converts on its way out."""

    name: str
    colour: Colour
    legs: list[Leg]
    stops: tuple[int, str]
    tags: set[str]
    ident: UUID
    scale: InitVar[int]
    note: str | None = None
    total: int = field(init=False, default=0)

    def __post_init__(self, scale: int) -> None:
        self.total = len(self.legs) * scale


class Reading(BaseModel):
    """A model whose JSON form is not its input: an alias, a computed field, no extras allowed."""

    model_config = ConfigDict(extra="forbid", populate_by_name=True)

    value: int = Field(alias="readingValue")
    taken: datetime
    unit: str = "mm"

    @computed_field  # type: ignore[prop-decorator]
    @property
    def doubled(self) -> int:
        return self.value * 2


@dataclass(frozen=True)
class Stop:
    at: int | bool


class Tree(TypedDict):
    kids: NotRequired[list[Tree]]


class Labels(RootModel[list[str]]):
    """A model whose JSON form is no object."""


WHEN = datetime(2026, 7, 28, 9, 30, tzinfo=UTC)
TRIP = Trip(
    name="coast",
    colour=Colour.BLUE,
    legs=[Leg(WHEN, date(2026, 7, 29))],
    stops=(3, "harbour"),
    tags={"sea"},
    ident=UUID(int=7),
    scale=5,
)
TRIP_JSON = {
    "name": "coast",
    "colour": "blue",
    "legs": [{"start": "2026-07-28T09:30:00+00:00", "day": "2026-07-29"}],
    "stops": [3, "harbour"],
    "tags": ["sea"],
    "ident": "00000000-0000-0000-0000-000000000007",
    "note": None,
    "total": 5,
}


def typed_server() -> Server:
    """Tools that return whatever they are told to, each under a declared return type."""
    server = Server("typed", "1.0.0")
    outputs: dict[str, Any] = {}
    server.outputs = outputs  # type: ignore[attr-defined]

    @server.tool()
    def total(case: str) -> Sum:
        """A TypedDict."""
        return outputs[case]  # type: ignore[no-any-return]

    @server.tool()
    def trip(case: str) -> Trip:
        """A dataclass."""
        return outputs[case]  # type: ignore[no-any-return]

    @server.tool()
    def reading(case: str) -> Reading:
        """A pydantic model."""
        return outputs[case]  # type: ignore[no-any-return]

    @server.tool()
    def labels(case: str) -> Labels:
        """A pydantic root model."""
        return outputs[case]  # type: ignore[no-any-return]

    @server.tool()
    def count(case: str) -> int:
        """A primitive, sent wrapped as {"result": ...}."""
        return outputs[case]  # type: ignore[no-any-return]

    @server.tool(structured_output=True)
    def word(case: str) -> str:
        """A str made structured."""
        return outputs[case]  # type: ignore[no-any-return]

    @server.tool()
    def numbers(case: str) -> list[int]:
        """A list."""
        return outputs[case]  # type: ignore[no-any-return]

    @server.tool()
    def maybe(case: str) -> int | None:
        """An Optional."""
        return outputs[case]  # type: ignore[no-any-return]

    @server.tool()
    def stops(case: str) -> frozenset[Stop]:
        """A set, sent as an array of unique items."""
        return outputs[case]  # type: ignore[no-any-return]

    @server.tool()
    def tree(case: str) -> Tree:
        """A recursive type."""
        return outputs[case]  # type: ignore[no-any-return]

    @server.tool()
    def spelled_count(case: str) -> int:
        """A ToolResult from a tool declared to return int."""
        return ToolResult(content="counted", structured=outputs[case])  # type: ignore[return-value]

    return server


async def call_typed(wire: Any, tool: str, value: Any) -> dict[str, Any]:
    wire.server.outputs["case"] = value
    return await wire.request("tools/call", {"name": tool, "arguments": {"case": "case"}})


def refusal(reply: dict[str, Any], tool: str) -> str:
    """The message of the internal error a broken structured result must be."""
    assert "result" not in reply, reply
    error = reply["error"]
    assert error["code"] == -32603
    message: str = error["message"]
    assert f"tool {tool!r} returned structured content that does not match its outputSchema" in (
        message
    )
    return message


def sent(reply: dict[str, Any], schema: dict[str, Any]) -> Any:
    """The structured content of a result, after checking its text copy says the same and that
    it fits the outputSchema the tool advertises (by a schema interpreter, not the server's own
    checkers)."""
    result = reply["result"]
    assert "isError" not in result
    structured = result["structuredContent"]
    assert result["content"] == [{"type": "text", "text": orjson.dumps(structured).decode()}]
    Draft202012Validator(schema).validate(structured)
    return structured


async def advertised(wire: Any) -> dict[str, dict[str, Any]]:
    """Each tool's outputSchema, as tools/list gives it."""
    tools = (await wire.request("tools/list"))["result"]["tools"]
    return {t["name"]: t["outputSchema"] for t in tools if "outputSchema" in t}


@pytest.mark.parametrize(
    ("value", "problem"),
    [
        ({"sum": "x"}, "structuredContent.sum: expected integer, got string 'x'"),
        ({"sum": True}, "structuredContent.sum: expected integer, got boolean true"),
        ({"sum": 1, "terms": [1, "2"]}, "structuredContent.terms[1]: expected integer, got string '2'"),
        ({"total": 3}, "structuredContent.sum: missing required property"),
        ([3], "structuredContent: expected object, got array"),
        (None, "structuredContent: expected object, got null"),
    ],
)
async def test_a_typed_dict_result_that_breaks_its_type_is_refused(
    wire_factory: Any, value: Any, problem: str
) -> None:
    wire = wire_factory(typed_server())
    assert problem in refusal(await call_typed(wire, "total", value), "total")


async def test_a_typed_dict_result_that_fits_is_sent_unchanged(wire_factory: Any) -> None:
    wire = wire_factory(typed_server())
    schema = (await advertised(wire))["total"]
    assert schema["required"] == ["sum"]
    assert sent(await call_typed(wire, "total", {"sum": 3}), schema) == {"sum": 3}
    fitting = {"sum": 3, "terms": [1, 2], "extra": {"kept": True}}
    assert sent(await call_typed(wire, "total", fitting), schema) == fitting


async def test_a_dataclass_result_is_checked_in_the_json_form_it_is_sent_in(
    wire_factory: Any,
) -> None:
    """Dates, enums, UUIDs, tuples, sets, nested dataclasses, an InitVar and a field the
    constructor does not take: what the server makes of a right value passes untouched."""
    wire = wire_factory(typed_server())
    schema = (await advertised(wire))["trip"]
    assert sent(await call_typed(wire, "trip", TRIP), schema) == TRIP_JSON


@pytest.mark.parametrize(
    ("change", "problem"),
    [
        ({"name": 5}, "structuredContent.name: expected string, got integer 5"),
        ({"colour": "green"}, "structuredContent.colour: expected one of 'red', 'blue', got "
         "string 'green'"),
        ({"legs": [Leg(WHEN, "soon")]}, "structuredContent.legs[0].day: expected date string"),
        ({"stops": (3,)}, "structuredContent.stops: expected exactly 2 items, got 1"),
        ({"ident": 7}, "structuredContent.ident: expected UUID string, got integer 7"),
        ({"note": ["x"]}, "structuredContent.note: expected string, got array"),
    ],
)
async def test_a_dataclass_result_holding_a_wrong_value_is_refused(
    wire_factory: Any, change: dict[str, Any], problem: str
) -> None:
    """A dataclass checks none of its fields' types, so the instance itself may be wrong."""
    wire = wire_factory(typed_server())
    wrong = dataclasses.replace(TRIP, scale=1)
    for key, value in change.items():
        setattr(wrong, key, value)
    assert problem in refusal(await call_typed(wire, "trip", wrong), "trip")
    schema = (await advertised(wire))["trip"]
    assert sent(await call_typed(wire, "trip", TRIP), schema) == TRIP_JSON


async def test_a_pydantic_result_that_fits_is_sent_as_pydantic_dumps_it(wire_factory: Any) -> None:
    """The alias, the computed field and the forbidden extras do not turn its own dump away."""
    wire = wire_factory(typed_server())
    dumped = {
        "readingValue": 4,
        "taken": "2026-07-28T09:30:00Z",
        "unit": "mm",
        "doubled": 8,
    }
    schema = (await advertised(wire))["reading"]
    assert sent(await call_typed(wire, "reading", Reading(value=4, taken=WHEN)), schema) == dumped
    assert sent(await call_typed(wire, "reading", dumped), schema) == dumped
    partial = {"readingValue": 4, "taken": "2026-07-28T09:30:00Z", "doubled": 8}
    assert sent(await call_typed(wire, "reading", partial), schema) == partial


@pytest.mark.parametrize(
    ("value", "problem"),
    [
        ({"readingValue": "x", "taken": "2026-07-28T09:30:00Z", "doubled": 0},
         "structuredContent.readingValue: Input should be a valid integer"),
        ({"readingValue": "5", "taken": "2026-07-28T09:30:00Z", "doubled": 10},
         "structuredContent.readingValue: expected integer 5, got string '5'"),
        ({"readingValue": 5, "taken": 1785231000, "doubled": 10},
         "structuredContent.taken: expected string '2026-07-28T09:30:00Z', got integer 1785231000"),
        ({"readingValue": 5, "taken": "2026-07-28T09:30:00Z", "doubled": "10"},
         "structuredContent.doubled: expected integer 10, got string '10'"),
        ({"readingValue": 5, "taken": "2026-07-28T09:30:00Z", "doubled": 10, "other": 1},
         "structuredContent.other: Extra inputs are not permitted"),
        ({"taken": "2026-07-28T09:30:00Z", "doubled": 0},
         "structuredContent.readingValue: missing required property"),
        ({"readingValue": 5, "taken": "2026-07-28T09:30:00Z"},
         "structuredContent.doubled: missing required property"),
        ("reading", "structuredContent: Input should be a valid dictionary or instance of Reading"),
    ],
)
async def test_a_pydantic_result_that_breaks_the_model_is_refused(
    wire_factory: Any, value: Any, problem: str
) -> None:
    """Lax validation would turn "5" into 5 and a timestamp into a date: what is sent is checked,
    so those are refused like any other value outside the advertised schema."""
    wire = wire_factory(typed_server())
    assert problem in refusal(await call_typed(wire, "reading", value), "reading")


async def test_a_pydantic_root_model_is_checked_as_its_root(wire_factory: Any) -> None:
    wire = wire_factory(typed_server())
    schema = (await advertised(wire))["labels"]
    assert sent(await call_typed(wire, "labels", Labels(["a", "b"])), schema) == ["a", "b"]
    wrong = await call_typed(wire, "labels", ["a", 1])
    assert "structuredContent[1]: Input should be a valid string" in refusal(wrong, "labels")
    assert "structuredContent: Input should be a valid list" in refusal(
        await call_typed(wire, "labels", {"a": 1}), "labels"
    )


@pytest.mark.parametrize(
    ("tool", "value", "problem"),
    [
        ("count", "str", "structuredContent.result: expected integer, got string 'str'"),
        ("count", 1.5, "structuredContent.result: expected integer, got number 1.5"),
        ("count", None, "structuredContent.result: expected integer, got null"),
        ("word", 5, "structuredContent.result: expected string, got integer 5"),
        ("numbers", [1, "x"], "structuredContent.result[1]: expected integer, got string 'x'"),
        ("numbers", {"a": 1}, "structuredContent.result: expected array, got object"),
        ("maybe", "x", "structuredContent.result: expected integer, got string 'x'"),
    ],
)
async def test_a_wrapped_result_that_breaks_its_type_is_refused(
    wire_factory: Any, tool: str, value: Any, problem: str
) -> None:
    wire = wire_factory(typed_server())
    assert problem in refusal(await call_typed(wire, tool, value), tool)


@pytest.mark.parametrize(
    ("tool", "value"),
    [("count", 5), ("count", 2.0), ("word", "hi"), ("numbers", [1, 2]), ("numbers", []),
     ("maybe", None), ("maybe", 0)],
)
async def test_a_wrapped_result_that_fits_is_sent_unchanged(
    wire_factory: Any, tool: str, value: Any
) -> None:
    wire = wire_factory(typed_server())
    schema = (await advertised(wire))[tool]
    assert sent(await call_typed(wire, tool, value), schema) == {"result": value}


async def test_a_tool_result_from_a_wrapped_type_is_wrapped_and_checked_like_a_plain_return(
    wire_factory: Any,
) -> None:
    """`-> int` advertises {"result": integer}: ToolResult(structured=5) is sent in that shape."""
    wire = wire_factory(typed_server())
    good = (await call_typed(wire, "spelled_count", 5))["result"]
    assert good["structuredContent"] == {"result": 5}
    assert good["content"] == [{"type": "text", "text": "counted"}]
    bad = await call_typed(wire, "spelled_count", "five")
    assert "structuredContent.result: expected integer, got string 'five'" in refusal(
        bad, "spelled_count"
    )
    twice = await call_typed(wire, "spelled_count", {"result": 5})
    assert "structuredContent.result: expected integer, got object" in refusal(
        twice, "spelled_count"
    )


async def test_a_refused_result_leaves_the_server_serving(wire_factory: Any) -> None:
    wire = wire_factory(typed_server())
    refusal(await call_typed(wire, "count", "str"), "count")
    refusal(await call_typed(wire, "trip", {"name": 1}), "trip")
    schema = (await advertised(wire))["count"]
    assert sent(await call_typed(wire, "count", 7), schema) == {"result": 7}


async def test_a_set_of_objects_is_sent_as_unique_items_and_duplicates_are_refused(
    wire_factory: Any,
) -> None:
    """Frozen dataclasses in a frozenset become dicts on the wire, which no set can hold: they
    are compared as JSON values, not refused as unhashable."""
    wire = wire_factory(typed_server())
    schema = (await advertised(wire))["stops"]
    assert schema["properties"]["result"]["uniqueItems"] is True
    structured = sent(await call_typed(wire, "stops", frozenset({Stop(1), Stop(2)})), schema)
    assert sorted(item["at"] for item in structured["result"]) == [1, 2]
    twice = await call_typed(wire, "stops", [Stop(1), {"at": 1.0}])
    assert "structuredContent.result: items must be unique" in refusal(twice, "stops")
    # Equal in Python, but two values in JSON: 1 and true.
    distinct = sent(await call_typed(wire, "stops", [Stop(1), Stop(True)]), schema)
    assert distinct == {"result": [{"at": 1}, {"at": True}]}


async def test_a_result_nested_deeper_than_the_check_can_go_is_refused_by_name(
    wire_factory: Any,
) -> None:
    wire = wire_factory(typed_server())
    deep: dict[str, Any] = {}
    for _ in range(200):
        deep = {"kids": [deep]}
    message = refusal(await call_typed(wire, "tree", deep), "tree")
    assert "structuredContent: nested too deeply to check" in message
    schema = (await advertised(wire))["tree"]
    assert sent(await call_typed(wire, "tree", {"kids": [{"kids": []}]}), schema) == {
        "kids": [{"kids": []}]
    }


CHECK_WITHOUT_JSONSCHEMA = """
import sys
from typing import TypedDict
from mcpkit.server.tool_results import call_result
from mcpkit.server.tools import build_tool

class Sum(TypedDict):
    sum: int

def total() -> Sum:
    return {"sum": "x"}

def count() -> int:
    return 3

try:
    call_result(build_tool(total), total())
except Exception as exc:
    print(type(exc).__name__, exc)
print(call_result(build_tool(count), count())["structuredContent"])
print("jsonschema" in sys.modules)
"""


def test_typed_output_is_checked_without_loading_jsonschema() -> None:
    """The compiled checkers do the work; a schema interpreter is for raw schemas only."""
    ran = subprocess.run(
        [sys.executable, "-c", CHECK_WITHOUT_JSONSCHEMA],
        capture_output=True, text=True, timeout=120, check=True,
    )
    lines = ran.stdout.splitlines()
    assert lines[0].startswith("InternalError tool 'total' returned structured content")
    assert "structuredContent.sum: expected integer, got string 'x'" in lines[0]
    assert lines[1:] == ["{'result': 3}", "False"]
