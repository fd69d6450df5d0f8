"""Values a client nests past what the server can keep, send back or walk.

The JSON decoder takes 1,024 levels of nesting, but orjson encodes at most 254 and a recursive
walk of Python's stops near 1,000: a deeper argument made the integer-rounding walk raise
RecursionError (a tool failure and a traceback), a task tool's arguments unstorable (-32603),
and a legacy session's capabilities unsavable. The server now refuses any request nested past
`MAX_NESTING` where it arrives, with -32602 naming the method, and goes on serving. Every
message the server sends is checked against the official schema.
"""

from __future__ import annotations

import logging
import os
from pathlib import Path
from typing import Any

import httpx
import orjson
import pytest
from helpers.transports.http_peer import Peer
from helpers.transports.listening import listening

from mcpkit import Context, Server
from mcpkit.protocol.codec import MAX_NESTING
from mcpkit.protocol.extensions import TASKS
from mcpkit.server.options import ServerOptions
from mcpkit.transports.http_server.options import HTTPOptions

REFUSAL = ("tools/call: params nested too deeply; nest objects and arrays at most 250 levels "
           "deep (the most this side can keep and send back)")


def nested(levels: int) -> str:
    """A JSON object `levels` levels deep."""
    return '{"a":' * (levels - 1) + "{}" + "}" * (levels - 1)


def deep_server(**options: Any) -> Server:
    server = Server("deep", "1.0.0", options=ServerOptions(**options))

    @server.tool()
    def keep(value: dict[str, Any]) -> str:
        return "kept"

    @server.tool()
    def anything(value: Any) -> str:
        return "taken"

    @server.tool(task="required")
    async def job(value: Any, ctx: Context) -> str:
        return "done"

    return server


def raw_call(wire: Any, request_id: int, name: str, value: str, **meta: Any) -> None:
    wire.methods[request_id] = "tools/call"
    envelope = orjson.dumps(wire.meta(**meta)).decode()
    wire.send_raw(
        f'{{"jsonrpc":"2.0","id":{request_id},"method":"tools/call","params":{{"name":"{name}",'
        f'"arguments":{{"value":{value}}},"_meta":{envelope}}}}}'.encode())


@pytest.mark.parametrize("tool", ["keep", "anything"])
async def test_a_dict_argument_a_thousand_levels_deep_is_invalid_params_and_serving_goes_on(
    wire_factory: Any, caplog: pytest.LogCaptureFixture, tool: str
) -> None:
    caplog.set_level(logging.WARNING, "mcpkit")
    wire = wire_factory(deep_server())
    raw_call(wire, 1, tool, nested(1000))
    reply = await wire.next()
    assert reply["id"] == 1 and reply["error"] == {"code": -32602, "message": REFUSAL}
    raw_call(wire, 2, tool, nested(MAX_NESTING - 5))  # within the bound: served
    assert "isError" not in (await wire.next())["result"]
    assert not [r for r in caplog.records if r.levelno >= logging.ERROR]


async def test_a_task_tools_deep_arguments_are_invalid_params_not_an_unstorable_record(
    wire_factory: Any, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.WARNING, "mcpkit")
    wire = wire_factory(deep_server(store=f"sqlite:{tmp_path / 'state.db'}"))
    tasks = {"io.modelcontextprotocol/clientCapabilities": {"extensions": {TASKS: {}}}}
    raw_call(wire, 1, "job", nested(300), **tasks)
    assert (await wire.next())["error"] == {"code": -32602, "message": REFUSAL}
    raw_call(wire, 2, "job", nested(MAX_NESTING - 5), **tasks)
    assert (await wire.next())["result"]["resultType"] == "task"  # stored: the bound suffices
    assert not [r for r in caplog.records if r.levelno >= logging.ERROR]


async def test_a_legacy_initialize_whose_capabilities_nest_too_deep_is_refused_before_it_is_kept(
    redis_url: str, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.WARNING, "mcpkit")
    server = deep_server(store=f"{redis_url}?prefix=deep{os.urandom(6).hex()}:")  # kept as JSON
    body = (b'{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":'
            b'"2025-11-25","clientInfo":{"name":"deep","version":"1"},"capabilities":'
            b'{"experimental":' + nested(300).encode() + b"}}}")
    async with listening(server.asgi(HTTPOptions(legacy=True))) as srv, \
            httpx.AsyncClient(timeout=10) as http:
        peer = Peer(srv.url, http)
        peer.revision = "2025-11-25"
        refused = await peer.post(body, {"Accept": "application/json, text/event-stream"})
        assert refused.status == 400
        assert refused.error["code"] == -32602 and "initialize: params nested too deeply" in \
            refused.error["message"]
        await peer.initialize({"experimental": orjson.loads(nested(MAX_NESTING - 5))})
        assert peer.session is not None  # within the bound: the session is kept
    assert not [r for r in caplog.records if r.levelno >= logging.ERROR]
