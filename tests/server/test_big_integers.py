"""Integers outside 64 bits: the rule, end to end over the stream connection's bytes.

A JSON number on our wire carries an integer from -2**63 to 2**64-1 (orjson encodes every
message and refuses the rest; peers reading 64-bit integers or doubles would alter them). So:
an integer argument outside the range is refused as the tool's invalid argument (the wire
hands a longer literal over as the nearest double, so taking it would give the tool a number
the client never sent); a tool result holding one is a tool error naming the tool and the
place; a resource or prompt holding one is a -32603 saying so; and the boundaries themselves
pass exactly. Nothing ends a request without a response.
"""

from __future__ import annotations

from typing import Any

import orjson
import pytest

from mcpkit import Message, Server, ToolResult

TOO_BIG = 2**64
TOO_SMALL = -(2**63) - 1


def big_server() -> Server:
    server = Server("big", "1.0.0")

    @server.tool()
    def echo(n: int) -> int:
        """Gives its integer back."""
        return n

    @server.tool()
    def total(values: list[int]) -> int:
        return sum(values)

    @server.tool()
    def anything(value: Any) -> str:
        """Says what it was given."""
        return f"{type(value).__name__} {value!r}"

    @server.tool()
    def power(exponent: int) -> int:
        """2 ** exponent."""
        return int(2**exponent)

    @server.tool()
    def negative() -> int:
        return TOO_SMALL

    @server.tool()
    def plain() -> dict[str, Any]:
        """Data with no declared shape."""
        return {"counts": [1, TOO_BIG]}

    @server.tool()
    def untyped():  # type: ignore[no-untyped-def]
        """Data with no annotation at all: a JSON text only."""
        return {"id": TOO_BIG}

    @server.tool()
    def spelled(where: str) -> ToolResult:
        """Puts the big integer where it is asked to."""
        if where == "structured":
            return ToolResult(content="x", structured={"ids": [1, {"id": TOO_BIG}]})
        if where == "meta":
            return ToolResult(content="x", meta={"example.com/n": TOO_BIG})
        return ToolResult(content=[{"type": "text", "text": "x", "_meta": {"n": TOO_BIG}}])

    @server.tool()
    def block():  # type: ignore[no-untyped-def]
        """Content block dicts, unannotated: content, with no schema."""
        return [{"type": "text", "text": "x", "_meta": {"n": TOO_BIG}}]

    @server.resource("big://data")
    def data() -> dict[str, Any]:
        return {"total": TOO_BIG}

    @server.resource("big://fine")
    def fine() -> dict[str, Any]:
        return {"total": 2**64 - 1}

    @server.prompt()
    def counted() -> Message:
        return Message("user", {"type": "text", "text": "count", "_meta": {"n": TOO_BIG}})

    return server


def raw_call(wire: Any, request_id: int, name: str, arguments_json: str) -> None:
    """Send a tools/call whose arguments are written as JSON text, so a literal longer than
    64 bits reaches the server as the client wrote it."""
    wire.methods[request_id] = "tools/call"
    meta = orjson.dumps(wire.meta()).decode()
    wire.send_raw(
        f'{{"jsonrpc":"2.0","id":{request_id},"method":"tools/call","params":{{"name":"{name}",'
        f'"arguments":{arguments_json},"_meta":{meta}}}}}'.encode()
    )


def tool_error(reply: dict[str, Any]) -> str:
    assert "error" not in reply, reply
    result = reply["result"]
    assert result["isError"] is True and "structuredContent" not in result, result
    text: str = result["content"][0]["text"]
    return text


@pytest.mark.parametrize(
    ("literal", "read_as"),
    [("18446744073709551617", "18446744073709551616"), ("-9223372036854775809",
                                                         "-9223372036854775808")],
)
async def test_an_integer_argument_outside_64_bits_is_refused_not_rounded(
    wire_factory: Any, literal: str, read_as: str
) -> None:
    wire = wire_factory(big_server())
    raw_call(wire, 1, "echo", f'{{"n":{literal}}}')
    text = tool_error(await wire.next())
    assert text.startswith("Invalid arguments for tool 'echo': arguments.n: ")
    assert "outside the 64-bit range a JSON integer can carry" in text
    assert "send it as a string" in text
    assert read_as not in text  # the number the wire made of it is not shown as the client's


async def test_a_nested_integer_argument_outside_64_bits_is_refused_by_its_place(
    wire_factory: Any,
) -> None:
    wire = wire_factory(big_server())
    raw_call(wire, 1, "total", '{"values":[1,99999999999999999999999]}')
    text = tool_error(await wire.next())
    assert text.startswith("Invalid arguments for tool 'total': arguments.values[1]: ")


@pytest.mark.parametrize("literal", ["18446744073709551615", "-9223372036854775808", "0"])
async def test_the_boundaries_pass_exactly_both_ways(wire_factory: Any, literal: str) -> None:
    wire = wire_factory(big_server())
    raw_call(wire, 1, "echo", f'{{"n":{literal}}}')
    result = (await wire.next())["result"]
    assert "isError" not in result
    assert result["structuredContent"] == {"result": int(literal)}
    assert result["content"] == [{"type": "text", "text": f'{{"result":{literal}}}'}]


async def test_an_untyped_argument_gets_what_the_wire_carries_and_the_call_succeeds(
    wire_factory: Any,
) -> None:
    """An `Any` parameter takes any JSON number: a literal past 64 bits is a double there,
    as in every JSON reader that is not told the type."""
    wire = wire_factory(big_server())
    raw_call(wire, 1, "anything", '{"value":18446744073709551617}')
    result = (await wire.next())["result"]
    assert "isError" not in result
    assert result["content"] == [{"type": "text", "text": "float 1.8446744073709552e+19"}]


@pytest.mark.parametrize(
    ("tool", "arguments", "place", "shown"),
    [
        ("power", {"exponent": 64}, "structuredContent.result", "18446744073709551616"),
        ("power", {"exponent": 5000}, "structuredContent.result", "5001 bits"),
        ("negative", {}, "structuredContent.result", "-9223372036854775809"),
        ("plain", {}, "structuredContent.counts[1]", "18446744073709551616"),
        ("untyped", {}, "id", "18446744073709551616"),
        ("spelled", {"where": "structured"}, "structuredContent.ids[1].id", "18446744073709551616"),
        ("spelled", {"where": "meta"}, "_meta.example.com/n", "18446744073709551616"),
        ("spelled", {"where": "content"}, "content[0]._meta.n", "18446744073709551616"),
        ("block", {}, "content[0]._meta.n", "18446744073709551616"),
    ],
)
async def test_a_result_holding_an_integer_outside_64_bits_is_a_tool_error_naming_it(
    wire_factory: Any, tool: str, arguments: dict[str, Any], place: str, shown: str
) -> None:
    wire = wire_factory(big_server())
    reply = await wire.request("tools/call", {"name": tool, "arguments": arguments})
    assert tool_error(reply) == (
        f"tool {tool!r} returned an integer outside the 64-bit range a JSON number can carry "
        f"at {place} ({shown}); send it as a string"
    )
    after = await wire.request("tools/call", {"name": "power", "arguments": {"exponent": 3}})
    assert after["result"]["structuredContent"] == {"result": 8}


async def test_a_resource_holding_one_is_a_json_rpc_error_saying_so(wire_factory: Any) -> None:
    wire = wire_factory(big_server())
    reply = await wire.request("resources/read", {"uri": "big://data"})
    assert reply["error"] == {
        "code": -32603,
        "message": "resource 'big://data' returned an integer outside the 64-bit range a JSON "
                   "number can carry at total (18446744073709551616); send it as a string",
        "data": {"uri": "big://data"},
    }
    fine = (await wire.request("resources/read", {"uri": "big://fine"}))["result"]
    assert fine["contents"][0]["text"] == '{"total":18446744073709551615}'


async def test_a_prompt_holding_one_is_a_json_rpc_error_saying_so(wire_factory: Any) -> None:
    wire = wire_factory(big_server())
    reply = await wire.request("prompts/get", {"name": "counted"})
    assert reply["error"]["code"] == -32603
    assert reply["error"]["message"] == (
        "prompt 'counted' returned an integer outside the 64-bit range a JSON number can carry "
        "at [0].content._meta.n (18446744073709551616); send it as a string"
    )
    assert reply["error"]["data"] == {"name": "counted"}
