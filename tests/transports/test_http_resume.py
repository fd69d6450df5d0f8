"""Legacy resumability on the client: a response stream that ends after naming an event is read
on from a GET with `Last-Event-ID`, after the server's `retry` wait; in the modern era a broken
stream stays lost (a scripted server on a real uvicorn, every client message schema-checked)."""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections.abc import AsyncIterator
from typing import Any

import orjson
import pytest
from helpers.transports.resume_peer import on_free_port, request_body
from helpers.wire import LEGACY, MODERN, check_client_message

from mcpkit.errors import TransportError
from mcpkit.transports.http_client.transport import HTTPClientTransport

RETRY_MS = 300


class Resumable:
    """A legacy server that closes each tools/call stream after a priming event and delivers
    the response on the GET that resumes it."""

    def __init__(self, revision: str, priming: bytes = b"data: \n") -> None:
        self.revision = revision
        self.priming = priming
        self.closed_at: float | None = None
        self.resumes: list[tuple[float, str | None]] = []
        self.pending: Any = None

    async def __call__(self, scope: dict[str, Any], receive: Any, send: Any) -> None:
        if scope["type"] != "http":
            return
        headers = dict(scope["headers"])
        if scope["method"] == "GET":
            self.resumes.append((asyncio.get_running_loop().time(),
                                 headers.get(b"last-event-id", b"").decode() or None))
            await send({"type": "http.response.start", "status": 200,
                        "headers": [(b"content-type", b"text/event-stream")]})
            if self.pending is not None and headers.get(b"last-event-id") == b"e-1":
                answer = orjson.dumps({"jsonrpc": "2.0", "id": self.pending,
                                       "result": {"content": [{"type": "text", "text": "ok"}]}})
                await send({"type": "http.response.body", "body": b"id: e-2\ndata: " + answer
                            + b"\n\n", "more_body": True})
            await send({"type": "http.response.body", "body": b""})
            return
        body = await request_body(receive)
        request = orjson.loads(body)
        check_client_message(self.revision, request)
        if "id" not in request:
            await send({"type": "http.response.start", "status": 202, "headers": []})
            await send({"type": "http.response.body", "body": b""})
            return
        if request["method"] == "initialize":
            answer = orjson.dumps({"jsonrpc": "2.0", "id": request["id"], "result": {
                "protocolVersion": LEGACY, "capabilities": {"tools": {}},
                "serverInfo": {"name": "resumable", "version": "1"}}})
            await send({"type": "http.response.start", "status": 200, "headers": [
                (b"content-type", b"application/json"), (b"mcp-session-id", b"s-1")]})
            await send({"type": "http.response.body", "body": answer})
            return
        self.pending = request["id"]
        await send({"type": "http.response.start", "status": 200,
                    "headers": [(b"content-type", b"text/event-stream")]})
        priming = f"id: e-1\nretry: {RETRY_MS}\n".encode() + self.priming + b"\n"
        await send({"type": "http.response.body", "body": priming, "more_body": True})
        self.closed_at = asyncio.get_running_loop().time()
        await send({"type": "http.response.body", "body": b""})


@pytest.fixture
async def serve() -> AsyncIterator[Any]:
    """`await serve(app)`: the URL of `app` on a free port, served until the test ends."""
    async with contextlib.AsyncExitStack() as running:

        async def start(app: Any) -> str:
            return await running.enter_async_context(on_free_port(app))

        yield start


def call(request_id: int, meta: dict[str, Any] | None = None) -> dict[str, Any]:
    params: dict[str, Any] = {"name": "slow", "arguments": {}}
    if meta is not None:
        params["_meta"] = meta
    return {"jsonrpc": "2.0", "id": request_id, "method": "tools/call", "params": params}


@pytest.mark.parametrize("priming", [b"data: \n", b""], ids=["empty-data", "no-data-line"])
async def test_a_legacy_stream_closed_after_an_event_is_resumed_after_the_retry_wait(
    serve: Any, priming: bytes
) -> None:
    app = Resumable(LEGACY, priming)
    transport = HTTPClientTransport(await serve(app))
    try:
        await transport.request({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
            "protocolVersion": LEGACY, "capabilities": {},
            "clientInfo": {"name": "tests", "version": "1"}}})
        reply = await asyncio.wait_for(transport.request(call(1)), 10)
    finally:
        await transport.close()
    assert reply["id"] == 1 and reply["result"]["content"][0]["text"] == "ok"
    assert app.closed_at is not None
    resumed_at, last_event_id = app.resumes[-1]
    assert last_event_id == "e-1"
    # Not a measure of speed: the server and the client share one event loop, whose clock the
    # client's wait runs on. asyncio wakes a wait of `retry` no earlier than `retry` minus the
    # clock's resolution after it began (and the wait began after the stream closed), however
    # loaded the machine: only a client that skipped or shortened the wait can come in under it.
    resolution = time.get_clock_info("monotonic").resolution
    assert resumed_at - app.closed_at >= RETRY_MS / 1000 - resolution


async def test_a_modern_stream_that_ends_early_is_lost_not_resumed(serve: Any) -> None:
    app = Resumable(MODERN)
    transport = HTTPClientTransport(await serve(app))
    meta = {"io.modelcontextprotocol/protocolVersion": MODERN,
            "io.modelcontextprotocol/clientCapabilities": {}}
    try:
        with pytest.raises(TransportError, match="request is lost"):
            await asyncio.wait_for(transport.request(call(1, meta)), 10)
    finally:
        await transport.close()
    assert app.resumes == []
