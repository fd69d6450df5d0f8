"""Test helpers for HTTP: a real `mcpkit run --http` subprocess on 127.0.0.1, and a raw client
that checks every message the server sends against the official schema of its revision."""

from __future__ import annotations

import asyncio
import contextlib
import os
import re
import subprocess
import sys
import tempfile
import time
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import httpx
import orjson

from helpers.transports.resume_peer import SSEReader
from helpers.wire import LEGACY, MODERN, check_client_message, check_server_message
from mcpkit.transports.http_client.transport import HTTPClientTransport

ROOT = Path(__file__).resolve().parents[3]
FEATURES = str(Path(__file__).resolve().parent / "servers" / "http_features.py")
ACCEPT = "application/json, text/event-stream"


def meta(**extra: Any) -> dict[str, Any]:
    return {
        "io.modelcontextprotocol/protocolVersion": MODERN,
        "io.modelcontextprotocol/clientCapabilities": {},
        "io.modelcontextprotocol/clientInfo": {"name": "tests", "version": "1.0"},
        **extra,
    }


class ServerProcess:
    """`mcpkit run TARGET --http 127.0.0.1:0 ...`, its URL read from the line it announces."""

    def __init__(self, proc: subprocess.Popen[bytes], log: Path, url: str) -> None:
        self.proc = proc
        self.log = log
        self.url = url
        found = re.match(r"http://([^/]+)(/.*)", url)
        assert found is not None
        self.authority = found.group(1)
        self.port = int(self.authority.rsplit(":", 1)[1])

    @classmethod
    def start(cls, target: str = FEATURES, *args: str, address: str = "127.0.0.1:0",
              timeout: float = 20.0, env: dict[str, str] | None = None) -> ServerProcess:
        handle, name = tempfile.mkstemp(prefix="mcpkit-http-", suffix=".log")
        os.close(handle)
        log = Path(name)
        with open(log, "wb") as out:
            proc = subprocess.Popen(
                [sys.executable, "-m", "mcpkit", "run", target, "--http", address, *args],
                cwd=ROOT, stdout=out, stderr=out, stdin=subprocess.DEVNULL,
                env={**os.environ, **(env or {})},
            )
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            found = re.search(r"serving .+? at (http://\S+)", log.read_text(errors="replace"))
            if found:
                return cls(proc, log, found.group(1))
            if proc.poll() is not None:
                break
            time.sleep(0.02)
        proc.kill()
        proc.wait()
        raise AssertionError(f"the server did not start: {log.read_text(errors='replace')}")

    def stop(self) -> int:
        """Terminate (SIGTERM), wait for exit, kill if it lingers; returns the exit status."""
        if self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(15)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        with contextlib.suppress(OSError):
            self.log.unlink()
        return self.proc.returncode

    def output(self) -> str:
        return self.log.read_text(errors="replace")


async def raw_post(port: int, headers: list[tuple[str, str]], body: bytes
                   ) -> tuple[int, dict[str, Any] | None]:
    """POST over a bare socket, for header bytes an HTTP library refuses to send (padded
    values); returns the status and the JSON body, if any."""
    import asyncio

    reader, writer = await asyncio.open_connection("127.0.0.1", port)
    try:
        head = ["POST /mcp HTTP/1.1", f"Host: 127.0.0.1:{port}",
                f"Content-Length: {len(body)}", "Connection: close"]
        head += [f"{name}:{value}" for name, value in headers]
        writer.write(("\r\n".join(head) + "\r\n\r\n").encode("latin-1") + body)
        await writer.drain()
        data = await asyncio.wait_for(reader.read(), 10)
    finally:
        writer.close()
    status = int(data.split(b" ", 2)[1])
    payload = data.split(b"\r\n\r\n", 1)[1]
    return status, orjson.loads(payload) if payload else None


def _legacy_request(request: httpx.Request, message: Any) -> bool:
    """Whether `request` belongs to a legacy session: it carries a session id, is initialize,
    or is no POST (only legacy sessions GET a stream or DELETE)."""
    return (request.method != "POST" or "mcp-session-id" in request.headers
            or (isinstance(message, dict) and message.get("method") == "initialize"))


async def _check_request(request: httpx.Request) -> None:
    if request.method != "POST":
        return
    message = orjson.loads(request.content)
    check_client_message(LEGACY if _legacy_request(request, message) else MODERN, message)


def checked_httpx_options() -> tuple[dict[str, Any], ServerChecks]:
    """The `httpx_options` of an HTTP client whose requests and the server's answers are
    checked against the schema (for a connector made elsewhere, such as from an mcpServers
    entry): the problems the server's side had are in the returned `ServerChecks`."""
    checks = ServerChecks()
    return {"event_hooks": {"request": [_check_request]}, "transport": checks}, checks


def checked_transport(url: str, *, check_server: bool = False, **options: Any) -> Any:
    """An `HTTPClientTransport` whose every POSTed message is checked against the schema of
    its revision (legacy once it carries a session id, or for initialize).

    With `check_server`, every message the server answers with is checked too, as its bytes
    reach the client (`ServerChecks`), and `close()` fails naming any that were off the schema;
    left off for the scripted peers that send broken replies on purpose."""
    httpx_options: dict[str, Any] = {"event_hooks": {"request": [_check_request]}}
    if not check_server:
        return HTTPClientTransport(url, httpx_options=httpx_options, **options)
    checks = ServerChecks()
    transport = CheckedHTTPClientTransport(
        url, httpx_options={**httpx_options, "transport": checks}, **options)
    transport.server_checks = checks
    return transport


class ServerChecks(httpx.AsyncBaseTransport):
    """An httpx transport that checks each server message in the responses it carries against
    the schema of its era: a JSON body when it has all come, an SSE event when its block ends
    (a modern stream may carry no event ids, HTTP-9). A result is checked as the result of
    the method its id was asked with. Problems are kept in `problems` rather than raised in
    the middle of the client's reading, where they could be taken for a broken stream."""

    def __init__(self) -> None:
        self.inner = httpx.AsyncHTTPTransport()
        self.methods: dict[tuple[str | None, str], str] = {}
        self.problems: list[str] = []
        self.checked = 0

    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        message: Any = None
        if request.method == "POST":
            with contextlib.suppress(orjson.JSONDecodeError):
                message = orjson.loads(request.content)
        revision = LEGACY if _legacy_request(request, message) else MODERN
        session = request.headers.get("mcp-session-id")
        if isinstance(message, dict) and "method" in message and "id" in message:
            self.methods[(session, orjson.dumps(message["id"]).decode())] = message["method"]
        response = await self.inner.handle_async_request(request)
        media = response.headers.get("content-type", "").split(";")[0].strip().lower()
        stream = _CheckedStream(self, response.stream, media, revision, session,
                                f"{request.method} {request.url.path}")
        return httpx.Response(response.status_code, headers=response.headers, stream=stream,
                              extensions=response.extensions, request=request)

    def see(self, message: Any, revision: str, session: str | None, where: str) -> None:
        """Check one server message, keeping any problem with where it was sent."""
        try:
            if not isinstance(message, dict):
                raise AssertionError(f"not a JSON-RPC message: {message!r}")
            method = None
            if "method" not in message and "id" in message:
                method = self.methods.pop((session, orjson.dumps(message["id"]).decode()), None)
            check_server_message(revision, message, method)
            self.checked += 1
        except AssertionError as exc:
            self.problems.append(f"{where}: {exc}")

    async def aclose(self) -> None:
        await self.inner.aclose()


class _CheckedStream(httpx.AsyncByteStream):
    """A response body passed on unchanged, each message in it checked as it completes."""

    def __init__(self, checks: ServerChecks, inner: Any, media: str, revision: str,
                 session: str | None, where: str) -> None:
        self.checks = checks
        self.inner = inner
        self.media = media
        self.revision = revision
        self.session = session
        self.where = where
        self.reader = SSEReader()
        self.body = b""

    async def __aiter__(self) -> AsyncIterator[bytes]:
        async for chunk in self.inner:
            if self.media == "text/event-stream":
                for event in self.reader.feed(chunk):
                    if self.revision == MODERN and (event.id is not None
                                                    or event.retry is not None):
                        self.checks.problems.append(
                            f"{self.where}: a {MODERN} stream carried an event id or retry")
                    if event.data:
                        self._see(event.data.encode())
            else:
                self.body += chunk
            yield chunk
        if self.media == "application/json" and self.body:
            self._see(self.body)

    def _see(self, data: bytes) -> None:
        try:
            message = orjson.loads(data)
        except orjson.JSONDecodeError:
            self.checks.problems.append(f"{self.where}: a message that is not JSON: {data!r}")
            return
        self.checks.see(message, self.revision, self.session, self.where)

    async def aclose(self) -> None:
        await self.inner.aclose()


class CheckedHTTPClientTransport(HTTPClientTransport):
    """An `HTTPClientTransport` whose `close()` fails if the server sent a message off the
    schema (`server_checks`), so no test that closes its transport can miss one."""

    server_checks: ServerChecks

    async def close(self) -> None:
        await super().close()
        problems = self.server_checks.problems
        assert not problems, "the server sent messages off the schema:\n" + "\n".join(problems)


class Reply:
    """One HTTP response, its JSON-RPC messages parsed (one for JSON, one per SSE event)."""

    def __init__(self, response: httpx.Response, body: bytes, messages: list[dict[str, Any]]):
        self.status = response.status_code
        self.headers = response.headers
        self.body = body
        self.messages = messages

    @property
    def media(self) -> str:
        return self.headers.get("content-type", "").split(";")[0]

    @property
    def message(self) -> dict[str, Any]:
        """The last message (the response, for a request)."""
        assert self.messages, f"HTTP {self.status} with no message: {self.body!r}"
        return self.messages[-1]

    @property
    def error(self) -> dict[str, Any]:
        error: dict[str, Any] = self.message["error"]
        return error


def parse_sse(body: bytes, legacy: bool = False) -> list[dict[str, Any]]:
    """Messages of an SSE body, insisting that each is one `data:` line of JSON. Only legacy
    streams may carry `id:` and `retry:` fields and events without a message (priming); a
    modern stream has no resumability (HTTP-9), so any of those fails the test."""
    out = []
    for block in body.decode().split("\n\n"):
        for line in block.split("\n"):
            if not line or line.startswith(":"):
                continue
            if legacy and (line.startswith(("id: ", "retry: ")) or line == "data:"):
                continue
            assert line.startswith("data: "), f"unexpected SSE line {line!r}"
            out.append(orjson.loads(line[6:]))
    return out


def mirrored(message: dict[str, Any]) -> dict[str, str]:
    """The headers a conforming modern client sends for `message` (names spelled freely)."""
    headers = {"Accept": ACCEPT, "Content-Type": "application/json"}
    params = message.get("params") or {}
    version = (params.get("_meta") or {}).get("io.modelcontextprotocol/protocolVersion")
    if version is not None:
        headers["MCP-Protocol-Version"] = version
    if "id" in message:
        headers["Mcp-Method"] = message["method"]
        name = params.get("uri" if message["method"] == "resources/read" else "name")
        if name is not None and message["method"] in ("tools/call", "prompts/get",
                                                      "resources/read"):
            headers["Mcp-Name"] = name
    return headers


class Peer:
    """A raw HTTP client of one endpoint; every server message is schema-checked."""

    def __init__(self, url: str, client: httpx.AsyncClient) -> None:
        self.url = url
        self.client = client
        self.revision = MODERN
        self.session: str | None = None
        self.ids = 0

    def request_message(self, method: str, params: dict[str, Any] | None = None, *,
                        with_meta: bool = True, **meta_extra: Any) -> dict[str, Any]:
        self.ids += 1
        if with_meta:
            params = {**(params or {}), "_meta": meta(**meta_extra)}
        message: dict[str, Any] = {"jsonrpc": "2.0", "id": self.ids, "method": method}
        if params is not None:
            message["params"] = params
        return message

    async def post(self, message: dict[str, Any] | bytes, headers: dict[str, str] | None = None,
                   *, mirror: bool = True, check_client: bool = True) -> Reply:
        """POST a message (a dict, mirrored headers added unless `mirror` is False, or raw
        bytes) and read the whole response."""
        sent, all_headers, method = self._prepare(message, headers, mirror, check_client)
        response = await self.client.post(self.url, content=sent, headers=all_headers)
        return self._reply(response, response.content, method)

    @contextlib.asynccontextmanager
    async def stream(self, message: dict[str, Any], headers: dict[str, str] | None = None
                     ) -> AsyncIterator[AsyncIterator[dict[str, Any]]]:
        """POST a request and read its SSE response event by event; leaving closes it."""
        sent, all_headers, method = self._prepare(message, headers, True, True)
        async with self.client.stream("POST", self.url, content=sent,
                                      headers=all_headers) as response:
            assert response.status_code == 200, await response.aread()
            assert response.headers["content-type"] == "text/event-stream"
            assert response.headers["x-accel-buffering"] == "no"
            yield self._events(response, method)

    def get_stream(self) -> contextlib.AbstractAsyncContextManager[httpx.Response]:
        """The legacy session's GET stream."""
        headers = {"Accept": "text/event-stream", "Mcp-Session-Id": self.session or "",
                   "MCP-Protocol-Version": LEGACY}
        return self.client.stream("GET", self.url, headers=headers)

    async def events(self, response: httpx.Response, method: str | None = None
                     ) -> AsyncIterator[dict[str, Any]]:
        async for message in self._events(response, method):
            yield message

    async def _events(self, response: httpx.Response, method: str | None
                      ) -> AsyncIterator[dict[str, Any]]:
        buffer = b""
        async for chunk in response.aiter_bytes():
            buffer += chunk
            while b"\n\n" in buffer:
                block, buffer = buffer.split(b"\n\n", 1)
                for message in parse_sse(block + b"\n\n", self.revision != MODERN):
                    self._check(message, method)
                    yield message

    def _prepare(self, message: dict[str, Any] | bytes, headers: dict[str, str] | None,
                 mirror: bool, check_client: bool) -> tuple[bytes, dict[str, str], str | None]:
        if isinstance(message, bytes):
            return message, {"Content-Type": "application/json", **(headers or {})}, None
        if check_client:
            check_client_message(self.revision, message)
        all_headers = mirrored(message) if mirror else {"Content-Type": "application/json"}
        if self.session is not None:
            all_headers["Mcp-Session-Id"] = self.session
            all_headers["MCP-Protocol-Version"] = LEGACY
        all_headers.update(headers or {})
        method = message.get("method") if "id" in message else None
        return orjson.dumps(message), all_headers, method

    def _reply(self, response: httpx.Response, body: bytes, method: str | None) -> Reply:
        media = response.headers.get("content-type", "").split(";")[0]
        if media == "text/event-stream":
            messages = parse_sse(body, self.revision != MODERN)
        elif body:
            assert media == "application/json", (response.status_code, media, body)
            assert b"\n" not in body, "one message, one line"
            messages = [orjson.loads(body)]
        else:
            messages = []
        for message in messages:
            self._check(message, method)
        return Reply(response, body, messages)

    def _check(self, message: dict[str, Any], method: str | None) -> None:
        check_server_message(self.revision, message, method if "method" not in message else None)

    async def initialize(self, capabilities: dict[str, Any] | None = None) -> dict[str, Any]:
        """Open a legacy session (initialize, then notifications/initialized)."""
        self.revision = LEGACY
        message = self.request_message("initialize", {
            "protocolVersion": LEGACY, "capabilities": capabilities or {},
            "clientInfo": {"name": "legacy-tests", "version": "1.0"}}, with_meta=False)
        reply = await self.post(message, mirror=False)
        assert reply.status == 200, reply.body
        session = reply.headers.get("mcp-session-id")
        assert session and all(0x21 <= ord(c) <= 0x7E for c in session), session
        self.session = session
        note = {"jsonrpc": "2.0", "method": "notifications/initialized"}
        assert (await self.post(note, mirror=False)).status == 202
        result: dict[str, Any] = reply.message["result"]
        return result


# -- raw HTTP/1.1, for what an HTTP client library will not send ---------------------------------

def head(port: int, *lines: str) -> bytes:
    """A POST's request head: the given header lines after the usual ones."""
    return ("\r\n".join(["POST /mcp HTTP/1.1", f"Host: 127.0.0.1:{port}",
                         "Content-Type: application/json", "MCP-Protocol-Version: 2026-07-28",
                         *lines]) + "\r\n\r\n").encode("latin-1")


def chunk(data: bytes) -> bytes:
    return b"%x\r\n%s\r\n" % (len(data), data)


async def read_response(
    reader: asyncio.StreamReader, timeout: float = 10.0
) -> tuple[int, dict[str, str], bytes]:
    """One HTTP/1.1 response with a Content-Length body: (status, headers, body)."""
    async def read() -> tuple[int, dict[str, str], bytes]:
        status_line = await reader.readline()
        assert status_line.startswith(b"HTTP/1.1 "), status_line
        headers: dict[str, str] = {}
        while (line := await reader.readline()) not in (b"\r\n", b""):
            name, _, value = line.decode("latin-1").partition(":")
            headers[name.strip().lower()] = value.strip()
        body = await reader.readexactly(int(headers.get("content-length", "0")))
        return int(status_line.split()[1]), headers, body

    return await asyncio.wait_for(read(), timeout)
