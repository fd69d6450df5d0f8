"""`HTTPClientTransport`'s limits and failure paths: an SSE event or a JSON body over
`max_message_bytes`, a 2xx reply that is not JSON-RPC, a legacy stream whose resume is refused
or brings nothing, and a notification that meets a network error or an ended session.

No correct server misbehaves like this, so most peers are a scripted ASGI app on a real uvicorn
(servers/hostile_http.py); the ended session is a real `mcpkit run --http` process. Every POST
the client sends is schema-checked (`checked_transport`), and so is every message the scripted
peer sends that is meant to be valid.
"""

from __future__ import annotations

import itertools
from collections.abc import AsyncIterator
from typing import Any

import orjson
import pytest
from http_peer import checked_transport, meta
from servers.hostile_http import Exchange, HostilePeer, Reply, result, serving
from wire import MODERN, check_server_message

from mcpkit.errors import TransportError
from mcpkit.transports.http_client import (
    HTTPClientTransport,
)

LIMIT = 64 * 1024
"""The clients' `max_message_bytes` here: small, so a flood is refused early."""
BUDGET = 32 * 1024 * 1024
"""What a flooding peer writes at most: far more than LIMIT plus every socket buffer between
the two, so a client that hangs up at its limit is seen doing so before the budget is spent."""

_ids = itertools.count(1)


def call(tool: str, revision: str = MODERN, **arguments: Any) -> dict[str, Any]:
    """A tools/call request of `revision` (the transport checks it against the schema)."""
    params: dict[str, Any] = {"name": tool, "arguments": arguments}
    if revision == MODERN:
        params["_meta"] = meta()
    return {"jsonrpc": "2.0", "id": next(_ids), "method": "tools/call", "params": params}


async def echo(exchange: Exchange, reply: Reply) -> bool:
    """Answer the `echo` tool (what proves a client still works); False for anything else."""
    if exchange.tool != "echo":
        return False
    await reply.json(result(exchange.message["id"], exchange.message["params"]["arguments"]
                            ["text"], reply.revision), answers="tools/call")
    return True


async def still_works(transport: HTTPClientTransport, revision: str = MODERN) -> None:
    response = await transport.request(call("echo", revision, text="still here"))
    check_server_message(revision, response, "tools/call")
    assert response["result"]["content"][0]["text"] == "still here"


@pytest.fixture
async def limited() -> AsyncIterator[HTTPClientTransport]:
    """A modern client whose limit is LIMIT (its URL is set by each test)."""
    transport = checked_transport("http://127.0.0.1:1/unset", max_message_bytes=LIMIT)
    yield transport
    await transport.close()


# -- max_message_bytes -------------------------------------------------------------------------

async def test_an_sse_event_over_the_limit_is_refused_and_the_client_hangs_up(
    limited: HTTPClientTransport
) -> None:
    async def script(exchange: Exchange, reply: Reply) -> None:
        if await echo(exchange, reply):
            return
        await reply.open_stream()
        await reply.event({"jsonrpc": "2.0", "method": "notifications/progress", "params": {
            "progressToken": "flood", "progress": 1}})
        # One event that never ends: data lines, and no blank line after them.
        await reply.flood(b"data: " + b"x" * 1017 + b"\n", BUDGET)
        await reply.end()

    seen: list[dict[str, Any]] = []

    async def on_notification(message: dict[str, Any]) -> None:
        seen.append(message)

    peer = HostilePeer(script)
    async with serving(peer) as url:
        limited.url = url
        with pytest.raises(TransportError) as info:
            await limited.request(call("flood"), on_notification=on_notification)
        assert str(info.value) == (
            f"tools/call: an SSE event is larger than {LIMIT} bytes (max_message_bytes)")
        assert type(info.value) is TransportError
        assert [m["params"]["progress"] for m in seen] == [1]  # events under the limit pass
        await still_works(limited)
    flood = peer.calls()[0]
    assert flood.hung_up and flood.sent < BUDGET  # the client stopped reading: memory bounded


async def test_a_json_body_over_the_limit_is_refused_and_the_client_hangs_up(
    limited: HTTPClientTransport
) -> None:
    async def script(exchange: Exchange, reply: Reply) -> None:
        if await echo(exchange, reply):
            return
        # A valid response, only too large: its shape is checked with a short text.
        reply_to = exchange.message["id"]
        check_server_message(MODERN, result(reply_to, "x" * 16), "tools/call")
        head, _, tail = orjson.dumps(result(reply_to, "@")).partition(b"@")
        await reply.start(200, "application/json")
        await reply.write(head)
        await reply.flood(b"x" * 65536, BUDGET)
        await reply.write(tail)  # a client without a limit gets the whole response
        await reply.end()

    peer = HostilePeer(script)
    async with serving(peer) as url:
        limited.url = url
        with pytest.raises(TransportError) as info:
            await limited.request(call("big"))
        assert str(info.value) == (
            f"tools/call: the response is larger than {LIMIT} bytes (max_message_bytes)")
        await still_works(limited)
    big = peer.calls()[0]
    assert big.hung_up and big.sent < BUDGET


# -- a 2xx reply that is not JSON-RPC ----------------------------------------------------------

NOT_JSONRPC = {
    "html": (200, "text/html", b"<html><body>Welcome</body></html>", "got HTTP 200 text/html"),
    "no content type": (200, None, b'{"jsonrpc": "2.0"}', "got HTTP 200 without a content type"),
    "garbage JSON": (200, "application/json", b'{"jsonrpc": "2.0", "id": ',
                     "got HTTP 200 application/json that is not JSON"),
    "a JSON list": (200, "application/json", b"[1, 2, 3]",
                    "got HTTP 200 JSON that is not a JSON-RPC response"),
    "a JSON number": (200, "application/json", b"42",
                      "got HTTP 200 JSON that is not a JSON-RPC response"),
    "a notification": (200, "application/json",
                       b'{"jsonrpc": "2.0", "method": "notifications/message", "params": '
                       b'{"level": "info", "data": "hello"}}',
                       "got HTTP 200 JSON that is not a JSON-RPC response"),
    "another id": (200, "application/json",
                   orjson.dumps(result(987654, "for someone else")),
                   "got HTTP 200 with the response to id 987654"),
    "a true id": (200, "application/json", orjson.dumps(result(True, "not a number")),
                  "got HTTP 200 with the response to id True"),
    "202 and no body": (202, None, b"", "got HTTP 202 without a body"),
}


@pytest.mark.parametrize("case", list(NOT_JSONRPC), ids=list(NOT_JSONRPC))
async def test_a_2xx_reply_that_is_not_a_jsonrpc_response_is_a_clear_error(
    case: str, limited: HTTPClientTransport
) -> None:
    status, media, body, expected = NOT_JSONRPC[case]

    async def script(exchange: Exchange, reply: Reply) -> None:
        if not await echo(exchange, reply):
            await reply.raw(body, status=status, media=media)

    async with serving(HostilePeer(script)) as url:
        limited.url = url
        message = {**call("odd"), "id": 1}  # the id a `true` could be mistaken for
        with pytest.raises(TransportError) as info:
            await limited.request(message)
        assert type(info.value) is TransportError
        assert str(info.value) == (
            f"tools/call (id {message['id']!r}): expected a JSON-RPC response, {expected}")
        await still_works(limited)


async def test_on_a_stream_only_the_response_with_the_requests_own_id_answers_it(
    limited: HTTPClientTransport
) -> None:
    async def script(exchange: Exchange, reply: Reply) -> None:
        request_id = exchange.message["id"]
        await reply.open_stream()
        for other in (request_id + 1, True, float(request_id)):  # never this request's answer
            await reply.write(b"data: " + orjson.dumps(result(other, "not yours")) + b"\n\n")
        await reply.event(result(request_id, "yours"), answers="tools/call")
        await reply.end()

    async with serving(HostilePeer(script)) as url:
        limited.url = url
        message = call("mixed")
        response = await limited.request(message)
    assert response["id"] == message["id"]
    assert response["result"]["content"][0]["text"] == "yours"
