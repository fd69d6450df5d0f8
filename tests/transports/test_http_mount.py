"""`server.asgi()` inside a Starlette application, served by a real uvicorn on 127.0.0.1."""

from __future__ import annotations

import asyncio
import socket
from collections.abc import AsyncIterator
from typing import Any

import httpx
import pytest
import uvicorn
from helpers.transports.http_peer import checked_transport, meta
from helpers.wire import MODERN, check_server_message
from starlette.applications import Starlette
from starlette.responses import PlainTextResponse
from starlette.routing import Mount, Route

from mcpkit import Context, Server


def make_server() -> Server:
    server = Server("mounted", "1.0.0")

    @server.tool()
    async def shout(text: str, ctx: Context) -> str:
        """Upper-case the text, reporting progress once."""
        await ctx.report_progress(1, 1)
        return text.upper()

    return server


async def health(request: Any) -> PlainTextResponse:
    return PlainTextResponse("ok")


@pytest.fixture
async def site() -> AsyncIterator[str]:
    server = make_server()
    app = Starlette(routes=[
        Route("/health", health),
        Route("/mcp", server.asgi()),
        Mount("/tenants/acme", server.asgi()),
    ])
    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    sock.listen()
    port = sock.getsockname()[1]
    runner = uvicorn.Server(uvicorn.Config(app, log_level="error", lifespan="off"))
    task = asyncio.create_task(runner.serve(sockets=[sock]))
    yield f"http://127.0.0.1:{port}"
    runner.should_exit = True
    await asyncio.wait_for(task, 10)
    sock.close()


@pytest.mark.parametrize("path", ["/mcp", "/tenants/acme/"])
async def test_the_app_serves_mcp_inside_starlette(site: str, path: str) -> None:
    transport = checked_transport(site + path)
    seen: list[dict[str, Any]] = []

    async def on_notification(message: dict[str, Any]) -> None:
        seen.append(message)

    try:
        message = {"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {
            "name": "shout", "arguments": {"text": "hi"}, "_meta": meta(progressToken=1)}}
        reply = await transport.request(message, on_notification=on_notification)
        check_server_message(MODERN, reply, "tools/call")
        assert reply["result"]["content"] == [{"type": "text", "text": "HI"}]
        assert [m["method"] for m in seen] == ["notifications/progress"]
    finally:
        await transport.close()
    async with httpx.AsyncClient() as client:
        assert (await client.get(site + "/health")).text == "ok"
