"""Helpers for testing servers and clients: a client on a server in one line, and the wire.

    async with connect(server) as client:
        assert (await client.call_tool("add", {"a": 1, "b": 2})).structured == ...

`connect(server, json=True)` pushes every message through a real JSON encode and decode, as a
byte stream would. `WireRecorder` keeps every message in both directions, for assertions and
for schema checks of what each side sent. `ServerWire` is a server's connection seen from the
wire, for tests that write the JSON-RPC themselves (exact ids, malformed bytes, a cancellation
at a chosen moment) where a `Client` would smooth them over.

Built on the public API, and on `StreamConnection`, the byte stream every stdio and in-memory
connection runs on, so a `ServerWire` is served exactly as a stdio client would be.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Mapping
from typing import Any

import orjson

from mcpkit.client import ClientOptions
from mcpkit.clients import Client
from mcpkit.transports.memory import InMemory
from mcpkit.transports.stream import StreamConnection
from mcpkit.types.constants import (
    CLIENT_CAPABILITIES_KEY,
    CLIENT_INFO_KEY,
    MODERN_VERSION,
    PROTOCOL_VERSION_KEY,
)

__all__ = [
    "ServerWire",
    "WireRecorder",
    "connect",
]

Tap = Callable[[str, dict[str, Any]], None]
"""Sees each message as it passes: `("send" | "receive", message)`."""


class WireRecorder:
    """Every message of a connection, in order, as `(direction, message)`.

    `direction` is `"send"` (client to server) or `"receive"` (server to client).
    """

    def __init__(self) -> None:
        self.messages: list[tuple[str, dict[str, Any]]] = []

    def __call__(self, direction: str, message: dict[str, Any]) -> None:
        self.messages.append((direction, message))

    @property
    def sent(self) -> list[dict[str, Any]]:
        return [m for d, m in self.messages if d == "send"]

    @property
    def received(self) -> list[dict[str, Any]]:
        return [m for d, m in self.messages if d == "receive"]

    def requests(self, method: str | None = None) -> list[dict[str, Any]]:
        """Requests the client sent (of `method`, when given)."""
        return [
            m for m in self.sent
            if "id" in m and "method" in m and (method is None or m["method"] == method)
        ]

    def clear(self) -> None:
        self.messages.clear()


def connect(
    server: Any,
    *,
    json: bool = False,
    recorder: WireRecorder | None = None,
    options: ClientOptions | None = None,
    principal: Any = None,
    **client_options: Any,
) -> Client:
    """A `Client` for `server` in this process; use it with `async with`.

    Keyword arguments other than these go to `Client` (handlers, `client_info`, `on_log`).
    """
    connector = InMemory(server, json=json, tap=recorder, principal=principal)
    extra: Mapping[str, Any] = client_options
    return Client(connector, options=options, **extra)


class ServerWire:
    """A hand-written client's end of one connection to `server`, in this process.

    For testing a server at the level of JSON-RPC: `send` writes a message exactly as given,
    `send_raw` writes bytes (not JSON, an id of the wrong type), `next` reads what the server
    sent next, and `request` sends a modern request (its `_meta` filled in) and returns its
    response, keeping the notifications that came before it in `notifications`. Every message
    the server sends is kept in `recorder` (with what was sent to it) and passed to `tap`, for
    example to check it against the schema; `methods` maps each request id sent to its method,
    so a tap can tell which method a response answers.

        wire = ServerWire(server)
        reply = await wire.request("tools/call", {"name": "add", "arguments": {"a": 1, "b": 2}})
        assert reply["result"]["structuredContent"] == {"sum": 3}
        wire.close()

    Messages travel as bytes through the `StreamConnection` stdio serves with, one line each.
    """

    def __init__(
        self,
        server: Any,
        *,
        tap: Tap | None = None,
        client_info: Mapping[str, Any] | None = None,
        principal: Any = None,
    ) -> None:
        self.server = server
        self.tap = tap
        self.client_info = dict(client_info or {"name": "mcpkit-testing", "version": "1.0"})
        self.recorder = WireRecorder()
        self.methods: dict[Any, str] = {}
        self.notifications: list[dict[str, Any]] = []
        self.inbox: asyncio.Queue[dict[str, Any]] = asyncio.Queue()
        """What the server sent that `next` has not read yet."""
        self.conn = StreamConnection(server, self._write, principal=principal)
        self._ids = 0

    def _write(self, data: bytes) -> None:
        assert data.endswith(b"\n") and data.count(b"\n") == 1, "one message per line"
        message = orjson.loads(data)
        self.recorder("receive", message)
        if self.tap is not None:
            self.tap("receive", message)
        self.inbox.put_nowait(message)

    def meta(self, **extra: Any) -> dict[str, Any]:
        """The `_meta` of a modern request: this version, no capabilities, `client_info`."""
        return {
            PROTOCOL_VERSION_KEY: MODERN_VERSION,
            CLIENT_CAPABILITIES_KEY: {},
            CLIENT_INFO_KEY: dict(self.client_info),
            **extra,
        }

    def send(self, message: dict[str, Any]) -> None:
        """Send `message` as it is (a request's id and method are noted in `methods`)."""
        if "id" in message and "method" in message:
            self.methods[message["id"]] = message["method"]
        self.recorder("send", message)
        if self.tap is not None:
            self.tap("send", message)
        self.conn.receive(orjson.dumps(message))

    def send_raw(self, data: bytes) -> None:
        """Send one line of bytes as it is, JSON or not (nothing is noted or recorded)."""
        self.conn.receive(data)

    async def next(self, timeout: float = 5.0) -> dict[str, Any]:
        """The server's next message; `TimeoutError` if none comes within `timeout` seconds."""
        return await asyncio.wait_for(self.inbox.get(), timeout)

    async def request(
        self, method: str, params: dict[str, Any] | None = None, *, with_meta: bool = True,
        **meta_extra: Any,
    ) -> dict[str, Any]:
        """Send a request and return its response (notifications before it are kept).

        Ids are 1, 2, 3... `_meta` is `meta(**meta_extra)` under whatever `params["_meta"]`
        already holds; `with_meta=False` sends `params` as given (a legacy request, or one
        the server should refuse).
        """
        self._ids += 1
        request_id = self._ids
        if with_meta:
            params = dict(params or {})
            params["_meta"] = {**self.meta(**meta_extra), **params.get("_meta", {})}
        message: dict[str, Any] = {"jsonrpc": "2.0", "id": request_id, "method": method}
        if params is not None:
            message["params"] = params
        self.send(message)
        self.notifications = []
        while True:
            reply = await self.next()
            if reply.get("id") == request_id and "method" not in reply:
                return reply
            self.notifications.append(reply)

    def close(self) -> None:
        """Cancel whatever the server is still doing for this connection."""
        self.conn.cancel_all()
