"""A stream's ASGI call returns, whatever ends it: nothing escapes the app for the ASGI server
to log as "Exception in ASGI application" (uvicorn logs a cancelled app call so, traceback
and all).

- A 2025-11-25 client that leaves while its session is deleted (a client closing: its GET
  stream's connection goes and its DELETE comes, together) ends its GET stream for two
  reasons at once; the stream's task is cancelled once, and the call returns.
- A stream that opens as the server stops (its request was on its way when the stop began)
  ends at once, as the streams open then did: a legacy GET stream with a `retry` to resume
  it elsewhere, a listen stream with its result. It never waits for a change that cannot
  come until the ASGI server cancels it.

The app is called as an ASGI server calls it, in this process, so the order of events is the
test's: both ends of the first case reach the app before the stream's task runs again. Every
message the app sends is schema-checked.
"""

from __future__ import annotations

import asyncio
from typing import Any

import orjson
from helpers.wire import LEGACY, MODERN, check_server_message

from mcpkit import Server
from mcpkit.transports.http_server.app import HTTPApp

BOUND_S = 10.0
JSON_AND_SSE = [(b"content-type", b"application/json"),
                (b"accept", b"application/json, text/event-stream")]


class Call:
    """One ASGI call of the app: what it receives is the test's, what it sends is kept."""

    def __init__(self, app: HTTPApp, method: str, headers: list[tuple[bytes, bytes]],
                 body: bytes | None = None) -> None:
        self.incoming: asyncio.Queue[dict[str, Any]] = asyncio.Queue()
        if body is not None:
            self.incoming.put_nowait({"type": "http.request", "body": body, "more_body": False})
        self.sent: list[dict[str, Any]] = []
        self.started = asyncio.Event()
        scope = {"type": "http", "method": method, "path": "/mcp",
                 "headers": [(b"host", b"127.0.0.1"), *headers]}
        self.task = asyncio.ensure_future(app(scope, self.incoming.get, self._send))

    async def _send(self, message: dict[str, Any]) -> None:
        self.sent.append(message)
        self.started.set()

    async def done(self) -> None:
        """The call returned, and raised nothing (a cancellation included)."""
        async with asyncio.timeout(BOUND_S):
            await asyncio.wait({self.task})
        assert not self.task.cancelled(), "the app's call ended cancelled"
        assert self.task.exception() is None, self.task.exception()

    @property
    def status(self) -> int:
        return int(self.sent[0]["status"])

    @property
    def body(self) -> bytes:
        return b"".join(m.get("body", b"") for m in self.sent[1:])

    def events(self) -> list[dict[str, Any]]:
        """The JSON messages of its SSE events."""
        found = []
        for block in self.body.split(b"\n\n"):
            data = b"".join(line[5:].strip() for line in block.split(b"\n")
                            if line.startswith(b"data:"))
            if data:
                found.append(orjson.loads(data))
        return found


async def open_session(app: HTTPApp) -> list[tuple[bytes, bytes]]:
    """A 2025-11-25 session, initialized; the headers naming it."""
    init = Call(app, "POST", JSON_AND_SSE, orjson.dumps({
        "jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
            "protocolVersion": LEGACY, "capabilities": {},
            "clientInfo": {"name": "stream-endings", "version": "1"}}}))
    await init.done()
    reply = orjson.loads(init.body) if init.body.startswith(b"{") else init.events()[0]
    check_server_message(LEGACY, reply, "initialize")
    session = dict(init.sent[0]["headers"])[b"mcp-session-id"]
    named = [(b"mcp-session-id", session), (b"mcp-protocol-version", LEGACY.encode())]
    initialized = Call(app, "POST", JSON_AND_SSE + named, orjson.dumps({
        "jsonrpc": "2.0", "method": "notifications/initialized"}))
    await initialized.done()
    assert initialized.status == 202
    return named


async def test_a_client_leaving_as_its_session_is_deleted_ends_its_get_stream_cleanly() -> None:
    app = HTTPApp(Server("endings"))
    named = await open_session(app)
    stream = Call(app, "GET", [(b"accept", b"text/event-stream"), *named])
    async with asyncio.timeout(BOUND_S):
        await stream.started.wait()
    assert stream.status == 200
    stream.incoming.put_nowait({"type": "http.disconnect"})  # its connection goes...
    deleted = Call(app, "DELETE", named)  # ...as its DELETE comes
    await deleted.done()
    assert deleted.status == 200
    await stream.done()


async def test_a_get_stream_opened_as_the_server_stops_ends_at_once_with_a_retry() -> None:
    app = HTTPApp(Server("endings"))
    named = await open_session(app)
    app.close()  # the server stops; this GET was on its way
    stream = Call(app, "GET", [(b"accept", b"text/event-stream"), *named])
    await stream.done()
    assert stream.status == 200
    assert b"retry: " in stream.body  # resumed elsewhere, or here once restarted
    assert stream.sent[-1].get("more_body") is False


async def test_a_listen_stream_opened_as_the_server_stops_ends_at_once_with_its_result() -> None:
    app = HTTPApp(Server("endings"))
    app.close()
    meta = {"io.modelcontextprotocol/protocolVersion": MODERN,
            "io.modelcontextprotocol/clientCapabilities": {}}
    listen = Call(app, "POST", [
        *JSON_AND_SSE, (b"mcp-protocol-version", MODERN.encode()),
        (b"mcp-method", b"subscriptions/listen")],
        orjson.dumps({"jsonrpc": "2.0", "id": 7, "method": "subscriptions/listen", "params": {
            "notifications": {"toolsListChanged": True}, "_meta": meta}}))
    await listen.done()
    assert listen.status == 200
    events = listen.events()
    for event in events:
        check_server_message(MODERN, event, "subscriptions/listen")
    assert events[0]["method"] == "notifications/subscriptions/acknowledged"
    assert events[-1]["id"] == 7 and events[-1]["result"]["resultType"] == "complete"
