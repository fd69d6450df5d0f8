"""What the framing properties found, over a real HTTP response stream: a scripted peer under
uvicorn on 127.0.0.1 (tests/helpers/transports/servers/hostile_http.py) and the client's
`HTTPClientTransport`, each message it posts schema-checked.

An SSE `retry` field whose digits are not ASCII is ignored, and the response after it is
read; an event over `max_message_bytes` is refused even when the next event arrives in the
same chunk as its end. Either way the same transport then makes a clean call.
"""

from __future__ import annotations

from typing import Any

import orjson
import pytest
from helpers.transports.http_peer import checked_transport, meta
from helpers.transports.servers.hostile_http import Exchange, HostilePeer, Reply, result, serving
from helpers.wire import MODERN, check_server_message

from mcpkit.errors import TransportError

LIMIT = 4096


def call(tool: str, request_id: int, **arguments: Any) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "id": request_id, "method": "tools/call",
            "params": {"name": tool, "arguments": arguments, "_meta": meta()}}


async def answer_echo(exchange: Exchange, reply: Reply) -> bool:
    if exchange.tool != "echo":
        return False
    await reply.json(result(exchange.message["id"], "still here"), answers="tools/call")
    return True


async def test_an_sse_retry_of_digits_outside_ascii_is_ignored_and_the_response_read() -> None:
    """Before: str.isdigit() let "retry: ²" through to int(), whose ValueError came out of
    `request` instead of the response."""

    async def script(exchange: Exchange, reply: Reply) -> None:
        if await answer_echo(exchange, reply):
            return
        response = result(exchange.message["id"], "after the retry field")
        check_server_message(MODERN, response, "tools/call")
        await reply.open_stream()
        await reply.write("retry: ²\nid: 1\ndata:\n\n".encode())
        await reply.write(b"data: " + orjson.dumps(response) + b"\n\n")
        await reply.end()

    transport = checked_transport("http://127.0.0.1:1/unset", max_message_bytes=LIMIT)
    try:
        async with serving(HostilePeer(script)) as url:
            transport.url = url
            got = await transport.request(call("retry", 1))
            assert got["result"]["content"][0]["text"] == "after the retry field"
            assert (await transport.request(call("echo", 2)))["result"]["content"][0]["text"] \
                == "still here"
    finally:
        await transport.close()


async def test_an_event_over_the_limit_is_refused_when_the_next_comes_in_its_chunk() -> None:
    """Before: only the block a chunk left open was measured, so an event of twice the limit
    followed, in one write, by the response was read as if within it."""

    async def script(exchange: Exchange, reply: Reply) -> None:
        if await answer_echo(exchange, reply):
            return
        big = {"jsonrpc": "2.0", "method": "notifications/progress",
               "params": {"progressToken": "t", "progress": 1, "message": "x" * (2 * LIMIT)}}
        response = result(exchange.message["id"], "too late")
        check_server_message(MODERN, big, None)
        check_server_message(MODERN, response, "tools/call")
        await reply.open_stream()
        await reply.write(b"data: " + orjson.dumps(big) + b"\n\ndata: " + orjson.dumps(response)
                          + b"\n\n")
        await reply.end()

    transport = checked_transport("http://127.0.0.1:1/unset", max_message_bytes=LIMIT)
    try:
        async with serving(HostilePeer(script)) as url:
            transport.url = url
            with pytest.raises(TransportError) as info:
                await transport.request(call("big", 1))
            assert str(info.value) == (
                f"tools/call: an SSE event is larger than {LIMIT} bytes (max_message_bytes)")
            assert (await transport.request(call("echo", 2)))["result"]["content"][0]["text"] \
                == "still here"
    finally:
        await transport.close()
