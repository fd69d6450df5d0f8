"""`mcpkit.testing.ServerWire`: a server driven by hand-written JSON-RPC, every message kept."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
from helpers.wire import MODERN, check_server_message

from mcpkit import Context, Server
from mcpkit.testing import ServerWire


def make_server() -> Server:
    server = Server("wired", "1.0.0")

    @server.tool()
    async def greet(name: str, ctx: Context) -> str:
        """Say hello, after a progress report."""
        await ctx.report_progress(1, 1, "greeting")
        return f"hello {name}"

    return server


async def test_a_request_gets_its_response_and_the_notifications_before_it_are_kept() -> None:
    seen: list[tuple[str, dict[str, Any]]] = []
    wire = ServerWire(make_server(), tap=lambda d, m: seen.append((d, m)))
    reply = await wire.request("tools/call", {"name": "greet", "arguments": {"name": "Ada"}},
                               progressToken="p1")
    assert reply["id"] == 1
    assert reply["result"]["content"][0]["text"] == "hello Ada"
    assert [n["method"] for n in wire.notifications] == ["notifications/progress"]
    for direction, message in seen:
        if direction == "receive":
            method = wire.methods.get(message.get("id")) if "method" not in message else None
            check_server_message(MODERN, message, method)
    assert wire.recorder.messages == seen
    assert wire.recorder.requests("tools/call")[0]["params"]["_meta"] == wire.meta(
        progressToken="p1")
    assert wire.methods == {1: "tools/call"}
    wire.close()


async def test_the_modern_meta_is_filled_in_under_what_params_give() -> None:
    wire = ServerWire(make_server(), client_info={"name": "me", "version": "2"})
    await wire.request("tools/list", {"_meta": {"io.modelcontextprotocol/clientCapabilities": {
        "elicitation": {}}}})
    sent = wire.recorder.sent[0]["params"]["_meta"]
    assert sent == {"io.modelcontextprotocol/protocolVersion": MODERN,
                    "io.modelcontextprotocol/clientCapabilities": {"elicitation": {}},
                    "io.modelcontextprotocol/clientInfo": {"name": "me", "version": "2"}}
    refused = await wire.request("tools/list", with_meta=False)
    assert refused["id"] == 2 and refused["error"]["code"] == -32602
    wire.close()


async def test_raw_bytes_and_messages_go_as_they_are() -> None:
    wire = ServerWire(make_server())
    wire.send_raw(b"{not json")
    assert (await wire.next())["error"]["code"] == -32700
    wire.send({"jsonrpc": "2.0", "id": "mine", "method": "ping", "params": {"_meta": wire.meta()}})
    assert (await wire.next())["id"] == "mine"
    assert wire.methods == {"mine": "ping"}
    assert len(wire.recorder.sent) == 1, "raw bytes are not recorded as a message"
    assert wire.inbox.empty()
    with pytest.raises(asyncio.TimeoutError):
        await wire.next(timeout=0.05)
    wire.close()
