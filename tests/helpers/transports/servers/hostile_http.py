"""A hand-written ASGI peer for the HTTP client's failure paths, served by uvicorn on 127.0.0.1.

A correct mcpkit server never sends an SSE event larger than the client's limit, a 200 that is
not JSON-RPC, or a stream cut before its response that no resume can finish, so each test
scripts what this peer answers. Every exchange is recorded (headers, message, how many body
bytes went out, whether the client hung up first). Messages meant to be valid are checked with
tests/helpers/wire.py as they are sent (`Reply.json`, `Reply.event`); the invalid ones are written raw
on purpose. The Recorder of resume_peer.py checks *every* message as valid, which is why this
peer is not wrapped in it.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any

import orjson

from helpers.transports.resume_peer import on_free_port, request_body
from helpers.wire import LEGACY, MODERN, check_server_message

SESSION = "hostile-session-1"
"""The session id this peer gives a legacy `initialize`."""


@dataclass
class Exchange:
    """One HTTP request the peer received, and what it did with it."""

    method: str
    headers: dict[str, str]
    message: Any
    sent: int = 0
    """Response body bytes written while the client was still connected."""
    hung_up: bool = False
    """The client closed the connection before the peer finished writing."""

    @property
    def rpc_method(self) -> str | None:
        return self.message.get("method") if isinstance(self.message, dict) else None

    @property
    def tool(self) -> str | None:
        if self.rpc_method != "tools/call":
            return None
        name: str = self.message["params"]["name"]
        return name


class Reply:
    """Writes one response; `json` and `event` check the message against the schema first."""

    def __init__(self, exchange: Exchange, send: Any, receive: Any) -> None:
        self.exchange = exchange
        self._send = send
        self._gone = asyncio.Event()
        self._watch = asyncio.ensure_future(self._watch_disconnect(receive))

    async def _watch_disconnect(self, receive: Any) -> None:
        while (await receive())["type"] != "http.disconnect":
            pass
        self._gone.set()

    @property
    def revision(self) -> str:
        return LEGACY if "mcp-session-id" in self.exchange.headers else MODERN

    async def start(self, status: int, media: str | None,
                    headers: list[tuple[bytes, bytes]] | None = None) -> None:
        found = list(headers or [])
        if media is not None:
            found.append((b"content-type", media.encode()))
        await self._send({"type": "http.response.start", "status": status, "headers": found})

    async def write(self, data: bytes) -> None:
        """One body chunk, unless the client already hung up (then it is not counted)."""
        await asyncio.sleep(0)  # let the disconnect watcher run between chunks
        if self._gone.is_set():
            self.exchange.hung_up = True
            return
        await self._send({"type": "http.response.body", "body": data, "more_body": True})
        self.exchange.sent += len(data)

    async def end(self) -> None:
        """End the body: for an SSE response, the stream is cut here."""
        await self._send({"type": "http.response.body", "body": b"", "more_body": False})
        self._watch.cancel()

    async def raw(self, body: bytes, *, status: int = 200, media: str | None = "application/json",
                  headers: list[tuple[bytes, bytes]] | None = None) -> None:
        await self.start(status, media, headers)
        if body:
            await self.write(body)
        await self.end()

    async def json(self, message: dict[str, Any], *, status: int = 200, answers: str | None = None,
                   revision: str | None = None,
                   headers: list[tuple[bytes, bytes]] | None = None) -> None:
        """A JSON-RPC message meant to be valid (`answers`: the method of the request it answers)."""
        check_server_message(revision or self.revision, message, answers)
        await self.raw(orjson.dumps(message), status=status, headers=headers)

    async def open_stream(self) -> None:
        await self.start(200, "text/event-stream")

    async def event(self, message: dict[str, Any] | None = None, *, event_id: str | None = None,
                    retry: int | None = None, answers: str | None = None) -> None:
        """One SSE event; `message` None writes a priming event (an id and empty data)."""
        lines = []
        if event_id is not None:
            lines.append(f"id: {event_id}")
        if retry is not None:
            lines.append(f"retry: {retry}")
        if message is None:
            lines.append("data:")
        else:
            check_server_message(self.revision, message, answers)
            lines.append("data: " + orjson.dumps(message).decode())
        await self.write(("\n".join(lines) + "\n\n").encode())

    async def flood(self, chunk: bytes, budget: int) -> None:
        """Write `chunk` again and again until the client hangs up or `budget` bytes went out
        (a client without a limit reads all of it)."""
        while self.exchange.sent < budget and not self.exchange.hung_up:
            await self.write(chunk)


Script = Callable[[Exchange, Reply], Awaitable[None]]
"""How the peer answers one exchange (it must write a whole response)."""


class HostilePeer:
    """The ASGI app: records each exchange, answers a legacy handshake itself when `legacy`,
    and hands everything else to `script`."""

    def __init__(self, script: Script, *, legacy: bool = False) -> None:
        self.script = script
        self.legacy = legacy
        self.exchanges: list[Exchange] = []

    def gets(self) -> list[Exchange]:
        return [e for e in self.exchanges if e.method == "GET"]

    def calls(self) -> list[Exchange]:
        return [e for e in self.exchanges if e.rpc_method == "tools/call"]

    async def __call__(self, scope: dict[str, Any], receive: Any, send: Any) -> None:
        if scope["type"] != "http":
            return
        body = await request_body(receive)
        headers = {k.decode("latin-1"): v.decode("latin-1") for k, v in scope["headers"]}
        exchange = Exchange(scope["method"], headers, orjson.loads(body) if body else None)
        self.exchanges.append(exchange)
        reply = Reply(exchange, send, receive)
        if self.legacy and exchange.rpc_method == "initialize":
            await reply.json({"jsonrpc": "2.0", "id": exchange.message["id"], "result": {
                "protocolVersion": LEGACY, "capabilities": {"tools": {}},
                "serverInfo": {"name": "hostile", "version": "1.0"}}},
                answers="initialize", revision=LEGACY,
                headers=[(b"mcp-session-id", SESSION.encode())])
            return
        if exchange.method == "POST" and isinstance(exchange.message, dict) \
                and "id" not in exchange.message:
            await reply.raw(b"", status=202, media=None)  # a notification
            return
        await self.script(exchange, reply)


def result(request_id: Any, text: str, revision: str = MODERN) -> dict[str, Any]:
    """A tools/call result carrying `text`, in the shape of `revision`."""
    content: dict[str, Any] = {"content": [{"type": "text", "text": text}]}
    if revision == MODERN:
        content["resultType"] = "complete"
    return {"jsonrpc": "2.0", "id": request_id, "result": content}


def serving(app: HostilePeer) -> contextlib.AbstractAsyncContextManager[str]:
    """`app` under uvicorn on a free 127.0.0.1 port; yields the endpoint URL."""
    return on_free_port(app)

