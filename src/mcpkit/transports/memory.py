"""A client and a `Server` in one process: `InMemory` (a `Connector`) and `MemoryTransport`.

Messages go through a real `StreamConnection`, so concurrency, cancellation, era pinning and
the legacy adapter behave exactly as on stdio. By default messages are handed over as Python
objects (fast; results may be objects the server also caches, so treat them as read-only);
`json=True` encodes and decodes every message as the wire would, which catches anything that
does not survive JSON.
"""

from __future__ import annotations

import itertools
from contextlib import AsyncExitStack
from typing import Any

import orjson

from mcpkit.client.routing import RoutedTransport, StreamRouter
from mcpkit.protocol.codec import classify, encode
from mcpkit.transports.stream import StreamConnection

__all__ = [
    "InMemory",
    "MemoryTransport",
]

Tap = Any  # Callable[[str, dict[str, Any]], None]: ("send" | "receive", message)

_names = itertools.count(1)


class InMemory:
    """Connects a client to `server` in this process; each `connect()` is a new connection."""

    kind = "memory"

    def __init__(
        self, server: Any, *, json: bool = False, tap: Tap | None = None, principal: Any = None
    ) -> None:
        self.server = server
        self.json = json
        self.tap = tap
        self.principal = principal
        self.key = f"memory:{getattr(server, 'name', 'server')}#{next(_names)}"

    async def connect(self) -> MemoryTransport:
        """A new connection, holding the server's lifespan until it is closed."""
        held = AsyncExitStack()
        await held.enter_async_context(self.server.running())
        transport = MemoryTransport(self.server, json=self.json, tap=self.tap,
                                    principal=self.principal)
        transport._held = held
        return transport

    def __repr__(self) -> str:
        return f"InMemory({self.server!r}, json={self.json})"


class _ObjectConnection(StreamConnection):
    """A StreamConnection that hands messages over as objects instead of bytes."""

    def __init__(self, server: Any, deliver: Any, principal: Any) -> None:
        super().__init__(server, _no_bytes, principal=principal)
        self._deliver = deliver

    def send(self, message: dict[str, Any]) -> None:
        self._deliver(message)



def _no_bytes(data: bytes) -> None:  # pragma: no cover - _ObjectConnection overrides send
    raise AssertionError("the object connection never writes bytes")


class MemoryTransport(RoutedTransport):
    """The client side of one in-process connection."""

    def __init__(
        self, server: Any, *, json: bool = False, tap: Tap | None = None, principal: Any = None
    ) -> None:
        self._tap = tap
        self._json = json
        self._router = StreamRouter(self._to_server)
        self.conn: StreamConnection
        if json:
            self.conn = StreamConnection(server, self._bytes_from_server, principal=principal)
        else:
            self.conn = _ObjectConnection(server, self._from_server, principal)
        self._closed = False
        self._held: AsyncExitStack | None = None
        """The server's lifespan, held while the connection is open (`InMemory.connect`)."""

    # -- ClientTransport -------------------------------------------------------------------

    async def close(self) -> None:
        if self._closed:
            return
        self._closed = True
        self.conn.cancel_all()
        try:
            await self.conn.close()
        finally:
            self._router.close("the in-memory connection was closed")
            held, self._held = self._held, None
            if held is not None:
                await held.aclose()

    # -- the two directions ----------------------------------------------------------------

    def _to_server(self, message: dict[str, Any]) -> None:
        if self._tap is not None:
            self._tap("send", message)
        if self._json:
            self.conn.receive(encode(message))
        else:
            self.conn.receive_message(classify(message))

    def _bytes_from_server(self, data: bytes) -> None:
        self._from_server(orjson.loads(data))

    def _from_server(self, message: dict[str, Any]) -> None:
        if self._tap is not None:
            self._tap("receive", message)
        self._router.receive(message)
