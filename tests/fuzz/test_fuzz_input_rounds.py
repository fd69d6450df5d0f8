"""Retries of multi round-trip requests as a client may send them, to a real server connection.

A tool asks (a form, a model completion, the roots, all three at once) and another opens a
handle. The first round is real: the server answers `input_required` with a real sealed
`requestState`. The retry then carries anything: answers of any shape under the right keys or
others, the real state or a changed one, capabilities declared or not. The server answers
each with a result, an `isError` result or a JSON-RPC error naming what was wrong (-32602,
-32021), every reply schema-checked; never -32603, never a traceback logged, and the
connection goes on answering.
"""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
from checked_connection import CheckedConnection, watching
from hypothesis import given
from hypothesis import strategies as st
from peer_values import json_values
from token_mutations import MUTATIONS, mutate

from mcpkit import Context, Server, ServerOptions
from mcpkit.server.asking import Elicit, ListRoots, Sample

KEY = bytes(range(32))
CAPABILITIES = {"elicitation": {"form": {}}, "sampling": {}, "roots": {}}


def _asking_server() -> Server:
    server = Server("asking", "1.0", options=ServerOptions(state_keys=(KEY,)))

    @server.tool()
    async def ask_name(ctx: Context) -> str:
        """Asks for a name."""
        answer = await ctx.elicit("user", "Your name?", {"name": str, "age": int})
        return f"Hello {answer['name']}" if answer.accepted else answer.action

    @server.tool()
    async def ask_all(ctx: Context) -> str:
        """Asks three kinds of question at once, the answers good for one use."""
        answers = await ctx.ask({
            "user": Elicit("Your name?", {"name": str}),
            "greeting": Sample("Greet", max_tokens=20),
            "roots": ListRoots(),
        }, single_use=True)
        return f"{answers['greeting'].text} ({len(answers['roots'])} roots)"

    @server.tool()
    def new_cart(ctx: Context) -> str:
        """A handle for an empty cart."""
        return ctx.mint_handle("cart", {"items": []})

    @server.tool()
    def cart(ctx: Context, handle: str) -> str:
        """What a cart holds."""
        return str(ctx.open_handle("cart", handle))

    return server


ANSWERS = st.one_of(
    st.fixed_dictionaries({}, optional={
        "action": st.sampled_from(["accept", "decline", "cancel", "maybe"]) | json_values(1),
        "content": st.fixed_dictionaries({}, optional={"name": json_values(1),
                                                       "age": json_values(1)}) | json_values(2),
        "role": st.sampled_from(["assistant", "user"]) | json_values(1),
        "model": json_values(1),
        "roots": st.lists(st.fixed_dictionaries({}, optional={
            "uri": st.sampled_from(["file:///tmp", "http://x"]) | json_values(1),
            "name": json_values(1)}), max_size=2) | json_values(2),
        "stopReason": json_values(1),
    }).map(lambda d: {**d, "content": d["content"]} if "content" in d else d),
    json_values(3),
)


async def _call(conn: CheckedConnection, tool: str, arguments: dict[str, Any],
                extra: dict[str, Any], capabilities: Any) -> dict[str, Any]:
    """One modern `tools/call` declaring `capabilities`; its response."""
    conn.wire._ids += 1
    request_id = f"call-{conn.wire._ids}"
    meta = conn.wire.meta()
    meta["io.modelcontextprotocol/clientCapabilities"] = capabilities
    conn.send({"jsonrpc": "2.0", "id": request_id, "method": "tools/call", "params": {
        "name": tool, "arguments": arguments, "_meta": meta, **extra}})
    while True:
        reply = await conn.wire.next(timeout=10)
        if reply.get("id") == request_id and "method" not in reply:
            return reply


async def _scenario(tool: str, answers: dict[str, Any], mutation: Any, capabilities: Any,
                    extra_keys: dict[str, Any]) -> None:
    async with watching(_asking_server()) as conn:
        first = await _call(conn, tool, {}, {}, CAPABILITIES)
        result = first["result"]
        assert result["resultType"] == "input_required", result
        state = result["requestState"]
        presented = state if mutation is None else mutate(state, mutation)
        retry: dict[str, Any] = {"inputResponses": {**answers, **extra_keys}}
        if presented:
            retry["requestState"] = presented
        await _call(conn, tool, {}, retry, capabilities)
        await conn.ping(0)


@pytest.mark.parametrize("tool", ["ask_name", "ask_all"])
@given(st.fixed_dictionaries({}, optional={
           "user": st.just({"action": "accept", "content": {"name": "Ada", "age": 36}})
           | st.just({"action": "decline"}) | ANSWERS,
           "greeting": st.just({"role": "assistant", "model": "m",
                                "content": {"type": "text", "text": "hi"}}) | ANSWERS,
           "roots": st.just({"roots": [{"uri": "file:///tmp", "name": "tmp"}]}) | ANSWERS}),
       st.none() | MUTATIONS,
       st.sampled_from([CAPABILITIES, {}, {"elicitation": {}}]) | json_values(2),
       st.dictionaries(st.text(max_size=3), json_values(2), max_size=2))
def test_any_retry_is_answered_or_refused_by_name(
    tool: str, answers: dict[str, Any], mutation: Any, capabilities: Any,
    extra_keys: dict[str, Any]
) -> None:
    asyncio.run(_scenario(tool, answers, mutation, capabilities, extra_keys))


async def _handles(handle: Any, mutation: Any) -> None:
    async with watching(_asking_server()) as conn:
        minted = await _call(conn, "new_cart", {}, {}, {})
        token = minted["result"]["content"][0]["text"]
        if handle is None:
            handle = mutate(token, mutation) if mutation is not None else token
        reply = await _call(conn, "cart", {"handle": handle}, {}, {})
        if handle == token:
            assert reply["result"]["content"][0]["text"] == "{'items': []}"
        else:
            assert reply["result"].get("isError") is True or "error" in reply, reply
        await conn.ping(0)


@given(st.none() | json_values(2), st.none() | MUTATIONS)
def test_any_handle_argument_opens_only_if_it_is_the_one_minted(handle: Any, mutation: Any) -> None:
    asyncio.run(_handles(handle, mutation))
