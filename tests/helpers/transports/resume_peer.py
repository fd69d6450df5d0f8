"""Test helpers for legacy stream resumption: a recorder wrapped around the ASGI app that checks
every message the server sends against the schema of its era (and that modern streams carry no
event ids), a raw SSE reader that keeps ids and `retry`, a raw legacy client on httpx, and
uvicorn on a free port. The server the resume tests call is in resume_server.py."""

from __future__ import annotations

import asyncio
import contextlib
import socket
from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any

import httpx
import orjson
import uvicorn

from helpers.wire import LEGACY, MODERN, check_client_message, check_server_message

ACCEPT = "application/json, text/event-stream"
TIMEOUT = 10.0
"""How long a resume test waits for any one thing (an event, a gate, a response)."""


@dataclass
class Event:
    """One SSE event as a client sees it (`data` is "" for priming and closing events)."""

    id: str | None
    retry: int | None
    data: str

    @property
    def message(self) -> dict[str, Any] | None:
        return orjson.loads(self.data) if self.data else None

    @property
    def seq(self) -> int:
        assert self.id is not None
        return int(self.id.rpartition(".")[2])

    @property
    def stream(self) -> str:
        assert self.id is not None
        return self.id.rpartition(".")[0]


class SSEReader:
    """Splits SSE bytes into events; written apart from mcpkit's decoder so each checks the
    other. Comment lines are skipped; a block with any field is an event."""

    def __init__(self) -> None:
        self.buffer = b""

    def feed(self, chunk: bytes) -> list[Event]:
        self.buffer += chunk
        events = []
        while b"\n\n" in self.buffer:
            block, self.buffer = self.buffer.split(b"\n\n", 1)
            event_id: str | None = None
            retry: int | None = None
            data: list[str] = []
            seen = False
            for line in block.decode().split("\n"):
                if not line or line.startswith(":"):
                    continue
                name, _, value = line.partition(":")
                value = value[1:] if value.startswith(" ") else value
                seen = True
                if name == "id":
                    event_id = value
                elif name == "retry":
                    retry = int(value)
                elif name == "data":
                    data.append(value)
                else:
                    raise AssertionError(f"unexpected SSE field {line!r}")
            if seen:
                events.append(Event(event_id, retry, "\n".join(data)))
        return events


@dataclass
class Recorded:
    """One HTTP exchange as the server answered it."""

    method: str
    headers: dict[bytes, bytes]
    status: int = 0
    media: str = ""
    body: bytes = b""
    events: list[Event] = field(default_factory=list)
    complete: bool = False

    @property
    def last_event_id(self) -> str | None:
        value = self.headers.get(b"last-event-id")
        return value.decode() if value is not None else None


class Recorder:
    """ASGI middleware: keeps every exchange and checks every server message as it is sent."""

    def __init__(self, app: Any) -> None:
        self.app = app
        self.exchanges: list[Recorded] = []
        self.failures: list[str] = []
        self.on_request: Callable[[Recorded], None] | None = None
        """Called as each request arrives (a test can act on a resume, for instance)."""
        self._methods: dict[tuple[bytes | None, Any], str] = {}

    def gets(self) -> list[Recorded]:
        return [r for r in self.exchanges if r.method == "GET"]

    async def __call__(self, scope: dict[str, Any], receive: Any, send: Any) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        headers = dict(scope["headers"])
        record = Recorded(scope["method"], headers)
        self.exchanges.append(record)
        if self.on_request is not None:
            self.on_request(record)
        session = headers.get(b"mcp-session-id")
        legacy = [session is not None or scope["method"] != "POST"]
        reader = SSEReader()

        async def recv() -> dict[str, Any]:
            message: dict[str, Any] = await receive()
            if message["type"] == "http.request" and message.get("body"):
                with contextlib.suppress(orjson.JSONDecodeError):
                    body = orjson.loads(message["body"])
                    if isinstance(body, dict) and "method" in body and "id" in body:
                        self._methods[(session, body["id"])] = body["method"]
                        legacy[0] = legacy[0] or (body["method"] == "initialize"
                                                  and "_meta" not in (body.get("params") or {}))
            return message

        async def snd(message: dict[str, Any]) -> None:
            try:
                self._see(record, message, reader, session, LEGACY if legacy[0] else MODERN)
            except AssertionError as exc:
                self.failures.append(f"{record.method} {exc}")
            await send(message)

        await self.app(scope, recv, snd)

    def _see(self, record: Recorded, message: dict[str, Any], reader: SSEReader,
             session: bytes | None, revision: str) -> None:
        if message["type"] == "http.response.start":
            record.status = message["status"]
            found = dict(message.get("headers", []))
            record.media = found.get(b"content-type", b"").decode()
            return
        if message["type"] != "http.response.body":
            return
        chunk = message.get("body", b"")
        record.body += chunk
        if not message.get("more_body", False):
            record.complete = True
        if record.media == "text/event-stream":
            for event in reader.feed(chunk):
                record.events.append(event)
                if revision == MODERN:
                    assert event.id is None and event.retry is None, \
                        f"a {MODERN} stream carried an event id or retry: {event}"
                else:
                    assert event.id is not None or not event.data, \
                        f"a {LEGACY} message went out without an event id: {event}"
                self._check(event.message, session, revision)
        elif record.complete and record.media == "application/json" and record.body:
            self._check(orjson.loads(record.body), session, revision)

    def _check(self, message: dict[str, Any] | None, session: bytes | None,
               revision: str) -> None:
        if message is None:
            return
        method = None
        if "method" not in message and "id" in message:
            method = self._methods.get((session, message["id"]))
        check_server_message(revision, message, method)


async def request_body(receive: Any) -> bytes:
    """The whole body of an ASGI HTTP request, however many messages it comes in."""
    body = b""
    while True:
        message = await receive()
        body += message.get("body", b"")
        if not message.get("more_body"):
            return body


def replaying(body: bytes, receive: Any) -> Callable[[], Awaitable[dict[str, Any]]]:
    """An ASGI `receive` for an app behind middleware that read the request first: `body` as
    one message, then what the real `receive` brings next (the disconnect, when it comes)."""
    sent = False

    async def replay() -> dict[str, Any]:
        nonlocal sent
        if not sent:
            sent = True
            return {"type": "http.request", "body": body, "more_body": False}
        later: dict[str, Any] = await receive()
        return later

    return replay


@contextlib.asynccontextmanager
async def on_free_port(app: Any) -> AsyncIterator[str]:
    """`app` as it is under uvicorn on a free 127.0.0.1 port; yields the endpoint URL.

    The socket listens before uvicorn starts, so connections wait in its backlog until uvicorn
    accepts them.
    """
    server = uvicorn.Server(uvicorn.Config(app, log_level="error", lifespan="off"))
    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    sock.listen()
    task = asyncio.create_task(server.serve(sockets=[sock]))
    try:
        yield f"http://127.0.0.1:{sock.getsockname()[1]}/mcp"
    finally:
        server.should_exit = True
        await asyncio.wait_for(task, 10)
        sock.close()


@contextlib.asynccontextmanager
async def serving(app: Any) -> AsyncIterator[tuple[str, Recorder]]:
    """`app` (wrapped in a `Recorder`) under uvicorn on 127.0.0.1, on a free port."""
    recorder = Recorder(app)
    closing = contextlib.AsyncExitStack()
    if hasattr(app, "close"):
        closing.callback(app.close)
    async with on_free_port(recorder) as url, closing:
        yield url, recorder
    assert not recorder.failures, recorder.failures


@contextlib.asynccontextmanager
async def legacy_session(app: Any, http: httpx.AsyncClient
                         ) -> AsyncIterator[tuple[LegacyClient, Recorder]]:
    """`app` served (`serving`) and a `LegacyClient` on it whose 2025-11-25 session is open."""
    async with serving(app) as (url, recorder):
        peer = LegacyClient(url, http)
        await peer.initialize()
        yield peer, recorder


class LegacyClient:
    """A raw 2025-11-25 client: every message it sends is schema-checked."""

    def __init__(self, url: str, client: httpx.AsyncClient) -> None:
        self.url = url
        self.client = client
        self.session: str | None = None
        self.version = LEGACY
        self.ids = 0

    def headers(self, accept: str = ACCEPT) -> dict[str, str]:
        headers = {"Accept": accept, "Content-Type": "application/json"}
        if self.session is not None:
            headers["Mcp-Session-Id"] = self.session
            headers["MCP-Protocol-Version"] = self.version
        return headers

    async def post(self, message: dict[str, Any], accept: str = ACCEPT) -> httpx.Response:
        check_client_message(LEGACY, message)
        return await self.client.post(self.url, content=orjson.dumps(message),
                                      headers=self.headers(accept))

    def request(self, method: str, params: dict[str, Any] | None = None) -> dict[str, Any]:
        self.ids += 1
        message: dict[str, Any] = {"jsonrpc": "2.0", "id": self.ids, "method": method}
        if params is not None:
            message["params"] = params
        return message

    def call(self, tool: str, progress: str | None = None, **arguments: Any) -> dict[str, Any]:
        params: dict[str, Any] = {"name": tool, "arguments": arguments}
        if progress is not None:
            params["_meta"] = {"progressToken": progress}
        return self.request("tools/call", params)

    async def initialize(self, version: str = LEGACY,
                         capabilities: dict[str, Any] | None = None) -> None:
        self.version = version
        reply = await self.post(self.request("initialize", {
            "protocolVersion": version, "capabilities": capabilities or {},
            "clientInfo": {"name": "resume-tests", "version": "1.0"}}))
        assert reply.status_code == 200, reply.text
        assert reply.json()["result"]["protocolVersion"] == version
        self.session = reply.headers["mcp-session-id"]
        note = {"jsonrpc": "2.0", "method": "notifications/initialized"}
        assert (await self.post(note)).status_code == 202

    @contextlib.asynccontextmanager
    async def stream(self, message: dict[str, Any]
                     ) -> AsyncIterator[tuple[httpx.Response, AsyncIterator[Event]]]:
        """POST a request and read its SSE response event by event; leaving drops it."""
        check_client_message(LEGACY, message)
        async with self.client.stream("POST", self.url, content=orjson.dumps(message),
                                      headers=self.headers()) as response:
            yield response, events(response)

    def get_headers(self, last_event_id: str | bytes | None = None) -> dict[str, str | bytes]:
        """The headers of a GET for the session stream (resuming `last_event_id`, any bytes)."""
        headers: dict[str, str | bytes] = {**self.headers("text/event-stream")}
        del headers["Content-Type"]
        if last_event_id is not None:
            headers["Last-Event-ID"] = last_event_id
        return headers

    @contextlib.asynccontextmanager
    async def get(self, last_event_id: str | None = None
                  ) -> AsyncIterator[tuple[httpx.Response, AsyncIterator[Event]]]:
        """GET the session stream, or resume one with `Last-Event-ID`."""
        headers = self.get_headers(last_event_id)
        async with self.client.stream("GET", self.url, headers=headers) as response:
            yield response, events(response)


async def events(response: httpx.Response) -> AsyncIterator[Event]:
    reader = SSEReader()
    async for chunk in response.aiter_bytes():
        for event in reader.feed(chunk):
            yield event


async def collect(stream: AsyncIterator[Event], timeout: float = 10.0) -> list[Event]:
    """Every event until the server ends the response (bounded in time)."""
    async def run() -> list[Event]:
        return [event async for event in stream]

    return await asyncio.wait_for(run(), timeout)


def results(events: list[Event]) -> list[Any]:
    """The messages of a stream, reduced to what a test compares: a progress value, the text
    of a result, or a method name."""
    out: list[Any] = []
    for event in events:
        message = event.message
        if message is None:
            continue
        if message.get("method") == "notifications/progress":
            out.append(message["params"]["progress"])
        elif "result" in message:
            out.append(message["result"]["content"][0]["text"])
        else:
            out.append(message.get("method"))
    return out
