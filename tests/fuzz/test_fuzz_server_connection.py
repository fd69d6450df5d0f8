"""A whole server connection fed anything: no message, whatever its shape, ends it.

Arbitrary JSON values and near-miss JSON-RPC messages go to a real server over the byte stream
stdio serves with (`mcpkit.testing.ServerWire`, a `StreamConnection`), in both eras (a legacy
connection begins with `initialize`). After each one a ping still gets its answer. Every
message the server sends back, error responses included, is checked against the official
schema of the connection's revision; none is -32603, and nothing inside mcpkit logs a
traceback: every field read from the client is type-checked where it is read, so a malformed
one is the client's error (-32600, -32601, -32602, ...), never an internal one.
"""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
from checked_connection import watching
from hypothesis import example, given
from hypothesis import strategies as st
from peer_values import json_values, mostly_valid_requests, near_miss_messages

ERAS = ["modern", "legacy"]


async def _scenario(era: str, values: list[Any]) -> None:
    async with watching() as conn:
        if era == "legacy":
            await conn.initialize()
        for n, value in enumerate(values):
            conn.send(value)
            await conn.ping(n)
        await conn.ping(len(values))


@pytest.mark.parametrize("era", ERAS)
@given(values=st.lists(near_miss_messages(), min_size=1, max_size=6))
@example(values=[{"jsonrpc": "2.0", "id": 1, "error": None}])
def test_near_miss_messages_never_end_the_connection(era: str, values: list[Any]) -> None:
    asyncio.run(_scenario(era, values))


@pytest.mark.parametrize("era", ERAS)
@given(values=st.lists(json_values(), min_size=1, max_size=4))
def test_any_json_values_never_end_the_connection(era: str, values: list[Any]) -> None:
    asyncio.run(_scenario(era, values))


@pytest.mark.parametrize("era", ERAS)
@given(data=st.data())
def test_requests_that_reach_the_methods_never_end_the_connection(era: str, data: Any) -> None:
    """Requests that pass the envelope, so each method reads params of any shape."""
    values = data.draw(st.lists(mostly_valid_requests(era == "modern"), min_size=1, max_size=6))
    asyncio.run(_scenario(era, values))
