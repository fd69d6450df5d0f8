"""mcpkit as the client of a hostile Streamable HTTP server (a scripted ASGI peer on a real
uvicorn, tests/helpers/transports/servers/hostile_http.py).

The peer answers what no correct server would: a catalogue of 100,000 tools, a 100 MB tool
result as a JSON body, as one SSE event and as an event that never ends, responses to other ids
and duplicates on a stream, a flood of requests the 2026-07-28 era forbids, schemas naming
remote URLs (a listener of the test records any connection), and no answer at all. The
client fails the one call with an error naming its own limit, hangs up instead of reading on,
stays within its memory (the peak resident set of a client process of its own,
measured_client.py), sends nothing it should not, and follows
no remote `$ref`. Every message the client POSTs is checked against the official schema.
"""

from __future__ import annotations

import asyncio
import contextlib
import re
from collections.abc import AsyncIterator, Awaitable, Callable
from typing import Any

import orjson
import pytest
from helpers.client.hostile_probes import Checked, Listener, grown_mib, measured
from helpers.transports.servers.hostile_http import Exchange, HostilePeer, Reply, result, serving

from mcpkit.client import Client, ClientOptions
from mcpkit.errors import ProtocolViolation, RequestTimeoutError

MIB = 1024 * 1024
Script = Callable[[Exchange, Reply], Awaitable[None]]


@contextlib.asynccontextmanager
async def client_of(script: Script, **options: Any) -> AsyncIterator[tuple[Client, HostilePeer]]:
    peer = HostilePeer(script)
    opts = ClientOptions(era="modern", **options)
    async with serving(peer) as url, Client(Checked(url), options=opts) as client:
        yield client, peer


def tools_page(request_id: Any, tools: list[dict[str, Any]]) -> bytes:
    return orjson.dumps({"jsonrpc": "2.0", "id": request_id, "result": {
        "resultType": "complete", "tools": tools, "ttlMs": 0, "cacheScope": "public"}})


def tool(name: str, schema: dict[str, Any] | None = None) -> dict[str, Any]:
    return {"name": name, "inputSchema": schema or {"type": "object"}}


async def test_a_catalogue_of_100000_tools_is_refused_before_one_is_vetted() -> None:
    async def script(exchange: Exchange, reply: Reply) -> None:
        tools = [tool(f"t{i}") for i in range(100_000)]
        await reply.raw(tools_page(exchange.message["id"], tools))

    async with client_of(script) as (client, _peer):
        with pytest.raises(ProtocolViolation, match=r"tools/list: the server lists more than "
                           r"10000 tools \(ClientOptions.max_list_items\); stopped paging after "
                           r"100000"):
            await client.list_tools()
        assert client.tools == {}


def huge_json(exchange: Exchange) -> bytes:
    head = orjson.dumps(result(exchange.message["id"], ""))
    return head[:head.index(b'"text":"') + 8]


@pytest.mark.parametrize("shape", ["json body", "one SSE event", "an event that never ends"])
async def test_a_100_mb_tool_result_is_refused_and_the_client_hangs_up(shape: str) -> None:
    async def script(exchange: Exchange, reply: Reply) -> None:
        if shape == "json body":
            await reply.start(200, "application/json")
            await reply.write(huge_json(exchange))
        else:
            await reply.open_stream()
            if shape == "one SSE event":
                await reply.write(b"data: " + huge_json(exchange))
        await reply.flood(b"a" * MIB, 100 * MIB)
        await reply.end()

    peer = HostilePeer(script)
    async with serving(peer) as url:
        report = await measured({"connect": "http", "url": url, "calls": [{"tool": "huge"}]})
        (huge,) = report["calls"]
        assert re.match(r"TransportError: tools/call: .*larger than 16777216 bytes "
                        r"\(max_message_bytes\)", huge["error"]), huge
        exchange = peer.calls()[0]
        async with asyncio.timeout(30):  # the peer sees the hang-up at its next write
            while not exchange.hung_up:
                await asyncio.sleep(0.01)
        assert exchange.sent < 100 * MIB
    assert grown_mib(huge) < 80, "the client held no more than its limit"


async def test_other_ids_and_duplicates_on_a_stream_answer_nothing() -> None:
    async def script(exchange: Exchange, reply: Reply) -> None:
        own = exchange.message["id"]
        await reply.open_stream()
        for stray in (10**9, "never-sent", [own], {"id": own}, True):
            await reply.write(b"data: " + orjson.dumps(result(stray, "stray")) + b"\n\n")
        await reply.write(b"data: " + orjson.dumps(result(own, "first")) + b"\n\n")
        await reply.write(b"data: " + orjson.dumps(result(own, "second")) + b"\n\n")
        await reply.end()

    async with client_of(script) as (client, _peer):
        for _ in range(2):
            assert (await client.call_tool("x"))["content"][0]["text"] == "first"


async def test_requests_of_a_2026_server_are_dropped_and_cost_no_post() -> None:
    async def script(exchange: Exchange, reply: Reply) -> None:
        await reply.open_stream()
        for n in range(1000):
            method = ("elicitation/create", "roots/list", "ping")[n % 3]
            request = {"jsonrpc": "2.0", "id": f"s{n}", "method": method, "params": {}}
            await reply.write(b"data: " + orjson.dumps(request) + b"\n\n")
        await reply.write(b"data: " + orjson.dumps(result(exchange.message["id"], "done"))
                          + b"\n\n")
        await reply.end()

    async with client_of(script) as (client, peer):
        assert (await client.call_tool("x"))["content"][0]["text"] == "done"
        # Each request read from the stream was handed to the transport's answering work; once
        # all of it has finished, any answer it was going to POST has been POSTed (and received).
        answering = client.transport._incoming.answering  # type: ignore[union-attr]
        async with asyncio.timeout(30):
            while answering:
                await asyncio.wait(set(answering))
        posted = [e.message for e in peer.exchanges if e.method == "POST"]
        assert [m.get("method") for m in posted] == ["tools/call"], "no answer was POSTed"


@pytest.mark.parametrize("silence", ["no response at all", "keep-alives for ever"])
async def test_a_server_that_never_answers_is_timed_out(silence: str) -> None:
    async def script(exchange: Exchange, reply: Reply) -> None:
        if silence == "keep-alives for ever":
            await reply.open_stream()
            for _ in range(2000):  # bounded: the client hangs up long before
                await reply.write(b": keep-alive\n\n")
                if exchange.hung_up:
                    break
                await asyncio.sleep(0.01)
        else:  # not even the status line, until the client hangs up (bounded)
            for _ in range(3000):
                if reply._gone.is_set():
                    return
                await asyncio.sleep(0.01)
        await reply.end()

    async with client_of(script, timeout=0.5) as (client, _peer):
        with pytest.raises(RequestTimeoutError, match=r"tools/call: no response within 0.5 s"):
            await client.call_tool("x")


async def test_remote_references_are_never_followed_over_http() -> None:
    listener = Listener()
    async with listener as remote:
        async def script(exchange: Exchange, reply: Reply) -> None:
            await reply.raw(tools_page(exchange.message["id"], [
                tool("ref", {"type": "object", "properties": {"x": {"$ref": f"{remote}/x"}}}),
                tool("dialect", {"$schema": f"{remote}/s", "type": "object"}),
                tool("based", {"$id": f"{remote}/r.json", "type": "object",
                               "properties": {"x": {"$ref": "x.json"}}}),
                {**tool("output"), "outputSchema": {"$ref": f"{remote}/o"}},
                tool("fine")]))

        async with client_of(script, validate_output=True) as (client, _peer):
            assert [t["name"] for t in await client.list_tools()] == ["fine"]
            assert {r.name for r in client.rejected_tools} == {"ref", "dialect", "based",
                                                               "output"}
    assert listener.connections == 0
