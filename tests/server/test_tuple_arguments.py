"""A tool parameter typed as a fixed-length tuple: what a call must send for it, and the
problem a call that sends something else is told. Over a real stream connection."""

from __future__ import annotations

from typing import Any

import pytest

from mcpkit import Server


def make_server() -> Server:
    server = Server("tuple-test", "1.0.0")

    @server.tool()
    def move(to: tuple[int, int]) -> str:
        """Moves to a point."""
        return f"at {to[0]},{to[1]}"

    return server


async def call(wire: Any, arguments: dict[str, Any]) -> dict[str, Any]:
    result = (await wire.request("tools/call", {"name": "move", "arguments": arguments}))["result"]
    assert result["resultType"] == "complete"
    return result  # type: ignore[no-any-return]


async def test_a_tuple_of_the_right_length_reaches_the_function(wire_factory: Any) -> None:
    wire = wire_factory(make_server())
    result = await call(wire, {"to": [3, 4]})
    assert "isError" not in result or result["isError"] is False
    assert result["content"] == [{"type": "text", "text": "at 3,4"}]


@pytest.mark.parametrize(("value", "problem"), [
    ("3,4", "arguments.to: expected array of 2 items, got string '3,4'"),
    ({"x": 3}, "arguments.to: expected array of 2 items, got object"),
    ([3], "arguments.to: expected exactly 2 items, got 1"),
], ids=["string", "object", "too-short"])
async def test_a_value_that_is_not_such_a_tuple_is_an_error_result_saying_what_was_expected(
    wire_factory: Any, value: Any, problem: str,
) -> None:
    wire = wire_factory(make_server())
    result = await call(wire, {"to": value})
    assert result["isError"] is True
    assert problem in result["content"][0]["text"]
