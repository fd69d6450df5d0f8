"""One server connection as the fuzz tests drive it, and the watch on mcpkit's logs.

`CheckedConnection` is a hand-written client's end of a real server connection
(`mcpkit.testing.ServerWire`, the byte stream stdio serves with) that checks every message the
server sends against the official schema of the connection's revision, keeps them for the
test, and can prove the connection still answers (`ping`). `Tracebacks` collects each failure
inside mcpkit that a guard caught and logged with its traceback: behind a guard that keeps the
connection open, a field read without its type check shows up only there. `watching` holds
both for one scenario and fails it on either kind of sign.
"""

from __future__ import annotations

import contextlib
import logging
from collections.abc import AsyncIterator
from typing import Any

from helpers.sample_server import make_server
from helpers.wire import LEGACY, MODERN, check_server_message

from mcpkit.protocol.codec import encode
from mcpkit.testing import ServerWire

__all__ = ["CRASH", "CheckedConnection", "Tracebacks", "watching"]

CRASH = "secret internal detail"
"""What the sample server's `crash` tool raises: its traceback is logged on purpose."""


class Tracebacks(logging.Handler):
    """Failures inside mcpkit that a guard caught and logged with their traceback."""

    def __init__(self) -> None:
        super().__init__(logging.DEBUG)
        self.seen: list[str] = []

    def emit(self, record: logging.LogRecord) -> None:
        if record.exc_info is not None and CRASH not in str(record.exc_info[1]):
            self.seen.append(f"{record.name}: {record.getMessage()}: {record.exc_info[1]!r}")


class CheckedConnection:
    """The server's end of one connection, each message it sends schema-checked."""

    def __init__(self, server: Any = None) -> None:
        self.revision = MODERN
        self.wire = ServerWire(server if server is not None else make_server(), tap=self._check)
        self.sent: list[dict[str, Any]] = []

    def _check(self, direction: str, message: dict[str, Any]) -> None:
        if direction == "receive":
            answers = self.wire.methods.get(message.get("id")) if "method" not in message else None
            check_server_message(self.revision, message, answers)
            self.sent.append(message)

    def send(self, value: Any) -> None:
        if type(value) is dict and type(value.get("method")) is str \
                and type(value.get("id")) in (str, int):
            self.wire.methods[value["id"]] = value["method"]
        self.wire.send_raw(encode(value))

    async def ping(self, n: int) -> None:
        """A ping gets its answer, whatever came before it: `ping` on a legacy connection,
        `server/discover` on a modern one (2026-07-28 has no ping; discover is its cheapest
        request, and a result proves more than an error would)."""
        request_id = f"ping-{n}"
        if self.revision == MODERN:
            message: dict[str, Any] = {"method": "server/discover",
                                       "params": {"_meta": self.wire.meta()}}
        else:
            message = {"method": "ping"}
        self.wire.send({"jsonrpc": "2.0", "id": request_id, **message})
        while True:
            reply = await self.wire.next(timeout=10)
            if reply.get("id") == request_id and "method" not in reply:
                assert "result" in reply, reply
                return

    async def initialize(self) -> None:
        self.revision = LEGACY
        self.wire.send({"jsonrpc": "2.0", "id": "init", "method": "initialize", "params": {
            "protocolVersion": LEGACY, "capabilities": {},
            "clientInfo": {"name": "fuzz", "version": "1"}}})
        reply = await self.wire.next(timeout=10)
        assert reply.get("id") == "init" and "result" in reply, reply
        self.wire.send({"jsonrpc": "2.0", "method": "notifications/initialized"})



@contextlib.asynccontextmanager
async def watching(server: Any = None) -> AsyncIterator[CheckedConnection]:
    """A checked connection to `server` (the sample server by default); on leaving, the test
    fails if the server answered -32603 or mcpkit logged a traceback meanwhile."""
    tracebacks = Tracebacks()
    logging.getLogger("mcpkit").addHandler(tracebacks)
    conn = CheckedConnection(server)
    try:
        yield conn
    finally:
        conn.wire.close()
        logging.getLogger("mcpkit").removeHandler(tracebacks)
    internal = [m for m in conn.sent if type(m.get("error")) is dict
                and m["error"].get("code") == -32603]
    assert not internal, internal
    assert not tracebacks.seen, tracebacks.seen
