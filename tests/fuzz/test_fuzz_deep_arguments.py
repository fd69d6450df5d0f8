"""Tool arguments nested as deep as the wire lets them be (the JSON decoder stops at 1024
levels), sent over the byte stream stdio serves with, to tools whose parameters take any JSON
(`Any`, `dict[str, Any]`, `list[Any]`) and to one that echoes what it got.

What must hold (docs/security.md: bad input gets a clear error, nothing fails behind a guard):
each call is answered with a result or an `isError` result naming the tool, or, when the
request nests deeper than `MAX_NESTING` (past what the server could store or send back), with
-32602 naming `tools/call`; never -32603, and mcpkit logs no traceback; a value the tool got
back it could send is echoed unchanged.
"""

from __future__ import annotations

import asyncio
import json
from typing import Any

import pytest
from checked_connection import watching
from hypothesis import given
from hypothesis import strategies as st

from mcpkit import Server
from mcpkit.protocol.codec import MAX_NESTING


def nested(depth: int, kind: str, leaf: Any) -> Any:
    value = leaf
    for _ in range(depth):
        value = [value] if kind == "list" else {"k": value}
    return value


def nested_json(depth: int, kind: str, leaf: Any) -> bytes:
    """The JSON text of `nested(...)`, written out directly: no encoder of ours (orjson stops
    at 255 levels, the standard library's at the recursion limit) writes what the decoder reads."""
    opening, closing = (b"[", b"]") if kind == "list" else (b'{"k":', b"}")
    return opening * depth + json.dumps(leaf).encode() + closing * depth


def deep_server() -> Server:
    server = Server("deep")

    @server.tool()
    def take_any(value: Any) -> str:
        return "ok"

    @server.tool()
    def take_dict(value: dict[str, Any]) -> str:
        return "ok"

    @server.tool()
    def take_list(value: list[Any]) -> str:
        return "ok"

    @server.tool()
    def echo(value: Any) -> dict[str, Any]:
        return {"value": value}

    return server


async def calls(arguments: list[tuple[str, tuple[int, str, Any]]]) -> list[dict[str, Any]]:
    replies = []
    async with watching(deep_server()) as conn:
        for n, (tool, shape) in enumerate(arguments):
            conn.wire.methods[n] = "tools/call"
            head = json.dumps({"jsonrpc": "2.0", "id": n, "method": "tools/call", "params": {
                "name": tool, "_meta": conn.wire.meta()}})
            conn.wire.send_raw(head[:-2].encode() + b', "arguments": {"value": '
                               + nested_json(*shape) + b"}}}")
            while True:
                reply = await conn.wire.next(timeout=30)
                if reply.get("id") == n:
                    replies.append(reply)
                    break
    return replies


SHAPES = st.tuples(
    st.sampled_from([0, 1, 100, 254, 255, 256, 500, 997, 998, 1000, 1020]),
    st.sampled_from(["list", "dict"]),
    st.sampled_from([1, "x", None, 2**63, 2**64 - 1, -(2**63), 1.5, {}, []]))
TOOLS = st.sampled_from(["take_any", "take_dict", "take_list", "echo"])


@given(arguments=st.lists(st.tuples(TOOLS, SHAPES), min_size=1, max_size=4))
def test_arguments_nested_to_the_decoder_limit_are_answered_never_crashed(
    arguments: list[tuple[str, tuple[int, str, Any]]],
) -> None:
    replies = asyncio.run(calls(arguments))
    for (tool, shape), reply in zip(arguments, replies, strict=True):
        # The request's levels: itself, params, arguments, the value's containers, the leaf's.
        levels = 3 + shape[0] + (1 if isinstance(shape[2], dict | list) else 0)
        if levels > MAX_NESTING:
            assert reply["error"]["code"] == -32602, reply
            assert reply["error"]["message"].startswith("tools/call: params nested too deeply")
            continue
        assert "result" in reply, reply
        result = reply["result"]
        text = result["content"][0]["text"]
        if result.get("isError"):
            assert repr(tool) in text, text
        elif tool == "echo":
            assert result["structuredContent"] == {"value": nested(*shape)}, result
        else:
            assert text == "ok", result


@pytest.mark.parametrize("kind", ["list", "dict"])
def test_an_argument_a_thousand_levels_deep_is_answered_not_a_recursion_error(
    kind: str,
) -> None:
    tool = "take_dict" if kind == "dict" else "take_list"
    [reply] = asyncio.run(calls([(tool, (1000, kind, 1))]))
    assert reply["error"]["code"] == -32602, reply  # refused where it arrives, with its reason
    deep = MAX_NESTING - 4  # the deepest value a request may carry to a tool
    [reply] = asyncio.run(calls([(tool, (deep, kind, 1))]))
    assert reply["result"].get("isError") is not True, reply
    assert reply["result"]["content"][0]["text"] == "ok", reply
