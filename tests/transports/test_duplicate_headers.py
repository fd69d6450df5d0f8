"""A request naming its Host or Origin twice is refused, whichever value comes last, in both
eras: two Host headers with 400 (RFC 9112 §3.2), two Origin headers with 403 (an Origin that
is not valid is answered with 403, and the origin of such a request cannot be told). Served
for real: `mcpkit run --http` on 127.0.0.1, and uvicorn's two HTTP/1.1 parsers in this
process, the requests written on a bare socket (an HTTP library sends one Host)."""

from __future__ import annotations

import asyncio
import socket
from collections.abc import AsyncIterator
from typing import Any

import orjson
import pytest
import uvicorn
from helpers.transports.http_peer import ServerProcess, meta, read_response
from helpers.wire import LEGACY, MODERN, check_server_message

from mcpkit import Server

DISCOVER = orjson.dumps({"jsonrpc": "2.0", "id": 1, "method": "server/discover",
                         "params": {"_meta": meta()}})
INITIALIZE = orjson.dumps({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
    "protocolVersion": LEGACY, "capabilities": {},
    "clientInfo": {"name": "duplicates", "version": "1.0"}}})
MODERN_LINES = ("MCP-Protocol-Version: 2026-07-28", "Mcp-Method: server/discover")
EVIL = "http://evil.example"


async def post(port: int, first: list[str], era: str, *, method: str = "POST",
               extra: tuple[str, ...] = ()) -> tuple[int, dict[str, Any] | None]:
    """A request whose head starts with the lines `first` (Host and Origin lines, in order)."""
    body = DISCOVER if era == MODERN else INITIALIZE
    lines = [f"{method} /mcp HTTP/1.1", *first, "Content-Type: application/json",
             "Accept: application/json, text/event-stream", *extra,
             *(MODERN_LINES if era == MODERN else ()),
             f"Content-Length: {len(body) if method == 'POST' else 0}", "Connection: close"]
    reader, writer = await asyncio.open_connection("127.0.0.1", port)
    try:
        writer.write(("\r\n".join(lines) + "\r\n\r\n").encode("latin-1")
                     + (body if method == "POST" else b""))
        await writer.drain()
        status, headers, data = await read_response(reader)
    finally:
        writer.close()
    if not data:
        return status, None
    message: dict[str, Any] = orjson.loads(data)
    if headers.get("content-type", "").startswith("application/json"):
        check_server_message(era, message, None)
    return status, message


@pytest.fixture(scope="module")
def served() -> Any:
    server = ServerProcess.start()
    yield server
    server.stop()


def hosts(port: int, *, evil_last: bool) -> list[str]:
    ours = f"Host: 127.0.0.1:{port}"
    return ["Host: evil.example", ours] if evil_last is False else [ours, "Host: evil.example"]


@pytest.mark.parametrize("era", [MODERN, LEGACY])
@pytest.mark.parametrize("evil_last", [False, True], ids=["allowed-last", "allowed-first"])
async def test_two_host_headers_are_a_bad_request(served: ServerProcess, era: str,
                                                  evil_last: bool) -> None:
    status, message = await post(served.port, hosts(served.port, evil_last=evil_last), era)
    assert status == 400
    assert message is not None
    assert message["error"]["code"] == -32600
    assert message["error"]["message"] == (
        "Bad Request: the Host header appears 2 times; a request names its host once")


@pytest.mark.parametrize("era", [MODERN, LEGACY])
@pytest.mark.parametrize("origins", [["http://127.0.0.1", EVIL], [EVIL, "http://127.0.0.1"],
                                     ["http://127.0.0.1", "http://127.0.0.1"]],
                         ids=["allowed-first", "allowed-last", "the-same-twice"])
async def test_two_origin_headers_are_forbidden(served: ServerProcess, era: str,
                                                origins: list[str]) -> None:
    lines = [f"Host: 127.0.0.1:{served.port}", *(f"Origin: {o}" for o in origins)]
    status, message = await post(served.port, lines, era)
    assert status == 403
    assert message is not None
    assert message["error"]["message"] == (
        "Forbidden: the Origin header appears 2 times; a request comes from one origin")


async def test_a_session_s_get_with_two_origins_is_forbidden(served: ServerProcess) -> None:
    lines = [f"Host: 127.0.0.1:{served.port}", "Origin: http://127.0.0.1", f"Origin: {EVIL}"]
    status, _ = await post(served.port, lines, LEGACY, method="GET",
                           extra=("Mcp-Session-Id: whatever", f"MCP-Protocol-Version: {LEGACY}"))
    assert status == 403


@pytest.mark.parametrize("era", [MODERN, LEGACY])
async def test_one_host_and_one_origin_are_served(served: ServerProcess, era: str) -> None:
    lines = [f"Host: 127.0.0.1:{served.port}", "Origin: http://127.0.0.1"]
    status, message = await post(served.port, lines, era)
    assert status == 200
    assert message is not None and "result" in message


# -- both of uvicorn's parsers -------------------------------------------------------------


@pytest.fixture(params=["h11", "httptools"])
async def parser_port(request: pytest.FixtureRequest) -> AsyncIterator[int]:
    app = Server("duplicates", "1.0.0").asgi()
    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    sock.listen()
    runner = uvicorn.Server(uvicorn.Config(app, log_level="error", lifespan="off",
                                           http=request.param))
    task = asyncio.create_task(runner.serve(sockets=[sock]))
    try:
        yield sock.getsockname()[1]
    finally:
        runner.should_exit = True
        await asyncio.wait_for(task, 10)
        sock.close()


async def test_each_parser_refuses_two_hosts_and_two_origins(parser_port: int) -> None:
    # h11 refuses two Host headers itself (400, no body); httptools passes both on to us.
    status, _ = await post(parser_port, hosts(parser_port, evil_last=False), MODERN)
    assert status == 400
    lines = [f"Host: 127.0.0.1:{parser_port}", "Origin: http://127.0.0.1", f"Origin: {EVIL}"]
    status, message = await post(parser_port, lines, MODERN)
    assert status == 403 and message is not None
    assert "Origin header appears 2 times" in message["error"]["message"]
