"""The HTTP side of the probe (VER-12) and of legacy sessions (LEG-13, LEG-14), against small
ASGI apps that behave like servers the project did not write, served by uvicorn on 127.0.0.1."""

from __future__ import annotations

import asyncio
import itertools
import json
import socket
from collections.abc import AsyncIterator, Callable
from typing import Any, NamedTuple

import pytest
from helpers.client.fake_wire import problem_of
from helpers.wire import LEGACY, MODERN, spec_available

from mcpkit.client import Client

Receive = Callable[[], Any]
Send = Callable[[dict[str, Any]], Any]


class Answer(NamedTuple):
    """What `LegacyApp` answers one HTTP request with; `off_schema` says why `body` is meant to
    be off the schema (a real server's quirk the client must bear)."""

    status: int
    body: dict[str, Any] | None = None
    headers: list[tuple[bytes, bytes]] = []
    off_schema: str | None = None


NO_SESSION_ID = "the reference server refuses a request without a session with id null"
UNKNOWN_SESSION = "an unknown session is refused with id null, as real servers do"


class LegacyApp:
    """A 2025-11-25-only Streamable HTTP server with sessions, in a few of the ways real ones
    refuse a request they do not understand (`refusal`); two of the refusals are modern servers.

    Every JSON-RPC message it answers with is checked against the schema of its era before it
    is sent (tests/helpers/client/fake_wire.py, as the stdio fakes do), so a fake gone off the schema
    cannot pass a client bug or fail a test for the wrong reason. A message off the schema is
    not sent: the request is answered 500 naming the problem, and `problems` keeps it for the
    `serve` fixture to fail the test with. A message meant to be off the schema carries
    `off_schema="why"`, and must really be off it."""

    def __init__(self, refusal: str) -> None:
        self.refusal = refusal
        self.revision = MODERN if refusal in ("modern-reject-first", "header-check") else LEGACY
        self.sessions: set[str] = set()
        self.ids = itertools.count(1)
        self.seen: list[tuple[str, dict[str, str], dict[str, Any] | None]] = []
        self.first = True
        self.problems: list[str] = []

    async def __call__(self, scope: dict[str, Any], receive: Receive, send: Send) -> None:
        assert scope["type"] == "http"
        headers = {k.decode().lower(): v.decode() for k, v in scope["headers"]}
        body = b""
        while True:
            event = await receive()
            body += event.get("body", b"")
            if not event.get("more_body"):
                break
        message = json.loads(body) if body else None
        self.seen.append((scope["method"], headers, message))
        answer = self.route(scope["method"], headers, message)
        if answer.body is not None:
            method = message.get("method") if isinstance(message, dict) else None
            problem = problem_of(self.revision, answer.body, method)
            if answer.off_schema is not None:
                problem = None if problem is not None or not spec_available() else (
                    f"marked off the schema ({answer.off_schema}), but it is a valid message")
            if problem is not None:
                self.problems.append(f"{method}: {problem}")
                return await self.reply(send, 500, f"refusing to send a message off the "
                                        f"{self.revision} schema: {problem}".encode(),
                                        [(b"content-type", b"text/plain")])
        data = json.dumps(answer.body).encode() if answer.body is not None else b""
        head = [(b"content-type", b"application/json")] if data else []
        await self.reply(send, answer.status, data, head + answer.headers)

    def route(self, verb: str, headers: dict[str, str], message: dict[str, Any] | None
              ) -> Answer:
        if verb == "DELETE":
            self.sessions.discard(headers.get("mcp-session-id", ""))
            return Answer(200)
        if verb != "POST" or message is None:
            return Answer(405)
        if self.refusal == "modern-reject-first":
            return self.modern(message)
        if self.refusal == "header-check":
            return self.headers(message, headers)
        method = message.get("method")
        if method == "initialize":
            session = f"session-{next(self.ids)}"
            self.sessions.add(session)
            return Answer(200, {"jsonrpc": "2.0", "id": message["id"], "result": {
                "protocolVersion": "2025-11-25", "capabilities": {"tools": {}},
                "serverInfo": {"name": "legacy-http", "version": "1"}}},
                [(b"mcp-session-id", session.encode())])
        session = headers.get("mcp-session-id")
        if session is None:
            if self.refusal == "jsonrpc-400":
                return Answer(400, {"jsonrpc": "2.0", "id": None, "error": {
                    "code": -32000, "message": "Bad Request: No valid session ID provided"}},
                    off_schema=NO_SESSION_ID)
            return Answer(400 if self.refusal == "empty-400" else 404)
        if session not in self.sessions:
            return Answer(404, {"jsonrpc": "2.0", "id": None, "error": {
                "code": -32001, "message": "Session not found"}}, off_schema=UNKNOWN_SESSION)
        if "id" not in message:
            return Answer(202)
        if method == "tools/call" and message["params"]["name"] == "forget_sessions":
            self.sessions.clear()
        return Answer(200, {"jsonrpc": "2.0", "id": message["id"], "result": {
            "content": [{"type": "text", "text": f"{method} ok"}], "tools": []}})

    def modern(self, message: dict[str, Any]) -> Answer:
        """A modern server that rejects the very first request's version (CONF
        request-metadata): the client must stay modern and retry."""
        if "id" not in message:
            return Answer(202)
        version = message["params"]["_meta"]["io.modelcontextprotocol/protocolVersion"]
        if self.first:
            self.first = False
            return Answer(400, {"jsonrpc": "2.0", "id": message["id"], "error": {
                "code": -32022, "message": "Unsupported protocol version",
                "data": {"supported": [MODERN], "requested": version}}})
        result: dict[str, Any] = {"resultType": "complete", "ttlMs": 0, "cacheScope": "public"}
        if message["method"] == "server/discover":
            result.update(supportedVersions=[MODERN], capabilities={"tools": {}})
        else:
            result["tools"] = []
        return Answer(200, {"jsonrpc": "2.0", "id": message["id"], "result": result})

    def headers(self, message: dict[str, Any], headers: dict[str, str]) -> Answer:
        """A modern server whose tool mirrors `region` into `Mcp-Param-Region` (HTTP-14) and
        refuses a call without it (HTTP-19)."""
        result: dict[str, Any] = {"resultType": "complete", "ttlMs": 0, "cacheScope": "public"}
        method = message["method"]
        if method == "server/discover":
            result.update(supportedVersions=[MODERN], capabilities={"tools": {}})
        elif method == "tools/list":
            result["tools"] = [{"name": "regional", "inputSchema": {"type": "object", "properties": {
                "region": {"type": "string", "x-mcp-header": "Region"}}}}]
        elif headers.get("mcp-param-region") != message["params"]["arguments"]["region"]:
            return Answer(400, {"jsonrpc": "2.0", "id": message["id"], "error": {
                "code": -32020, "message": "Header mismatch: Mcp-Param-Region is missing"}})
        else:
            result["content"] = [{"type": "text", "text": f"in {headers['mcp-param-region']}"}]
        return Answer(200, {"jsonrpc": "2.0", "id": message["id"], "result": result})

    @staticmethod
    async def reply(send: Send, status: int, data: bytes,
                    headers: list[tuple[bytes, bytes]]) -> None:
        await send({"type": "http.response.start", "status": status, "headers": headers})
        await send({"type": "http.response.body", "body": data})


@pytest.fixture
async def serve() -> AsyncIterator[Callable[[Any], str]]:
    """Serve an ASGI app with uvicorn on a free 127.0.0.1 port; stopped after the test, which
    then fails if the app kept `problems` (messages it would not send off the schema)."""
    import uvicorn

    running: list[tuple[Any, asyncio.Task[None], Any]] = []

    def start(app: Any) -> str:
        sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        sock.bind(("127.0.0.1", 0))
        sock.listen(16)  # connections queue here until uvicorn accepts them
        server = uvicorn.Server(uvicorn.Config(app, log_level="warning", lifespan="off"))
        running.append((server, asyncio.ensure_future(server.serve(sockets=[sock])), app))
        return f"http://127.0.0.1:{sock.getsockname()[1]}/mcp"

    yield start
    for server, task, _ in running:
        server.should_exit = True
        await asyncio.wait_for(task, 10)
    for _, _, app in running:
        problems = getattr(app, "problems", [])
        assert not problems, "the fake sent messages off the schema:\n" + "\n".join(problems)


@pytest.mark.parametrize("refusal", ["jsonrpc-400", "empty-400", "plain-404"])
async def test_a_legacy_http_server_is_reached_by_initialize_and_a_session(
    serve: Callable[[Any], str], connect: Callable[..., Client], refusal: str
) -> None:
    app = LegacyApp(refusal)
    client = connect("http", serve(app), check_server=False)
    result = await client.call_tool("anything")
    assert (client.era, client.protocol_version) == ("legacy", "2025-11-25")
    assert result["content"][0]["text"] == "tools/call ok"
    posts = [(h, m) for verb, h, m in app.seen if verb == "POST"]
    assert [m["method"] for _, m in posts][:4] == [
        "server/discover", "initialize", "notifications/initialized", "tools/call"]
    call_headers = posts[3][0]
    assert call_headers["mcp-session-id"] == "session-1"
    assert call_headers["mcp-protocol-version"] == "2025-11-25"


async def test_an_ended_legacy_session_is_initialized_again_and_the_call_retried(
    serve: Callable[[Any], str], connect: Callable[..., Client]
) -> None:
    app = LegacyApp("jsonrpc-400")
    client = connect("http", serve(app), check_server=False)
    await client.call_tool("forget_sessions")
    result = await client.call_tool("after")
    assert result["content"][0]["text"] == "tools/call ok"
    methods = [m["method"] for verb, _, m in app.seen if verb == "POST" and m]
    assert methods.count("initialize") == 2
    assert methods.count("server/discover") == 1, "the era is remembered, not probed again"
    last = next(h for verb, h, m in reversed(app.seen) if verb == "POST")
    assert last["mcp-session-id"] == "session-2"


async def test_a_modern_error_in_a_400_keeps_the_client_modern(
    serve: Callable[[Any], str], connect: Callable[..., Client]
) -> None:
    app = LegacyApp("modern-reject-first")
    client = connect("http", serve(app), check_server=False)
    assert await client.list_tools() == []
    assert (client.era, client.protocol_version) == ("modern", MODERN)
    methods = [m["method"] for verb, _, m in app.seen if verb == "POST" and m]
    assert methods == ["server/discover", "server/discover", "tools/list"]
    assert "initialize" not in methods
    headers = [h for verb, h, _ in app.seen if verb == "POST"]
    assert all(h["mcp-protocol-version"] == MODERN for h in headers)


async def test_a_header_mismatch_relists_the_tools_and_retries_with_the_headers(
    serve: Callable[[Any], str], connect: Callable[..., Client]
) -> None:
    app = LegacyApp("header-check")
    client = connect("http", serve(app), check_server=False)
    result = await client.call_tool("regional", {"region": "eu west 1"})
    assert result["content"][0]["text"] == "in eu west 1"
    methods = [m["method"] for verb, _, m in app.seen if verb == "POST" and m]
    assert methods == ["server/discover", "tools/call", "tools/list", "tools/call"]
