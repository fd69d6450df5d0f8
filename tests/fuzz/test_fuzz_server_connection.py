"""A whole server connection fed anything: no message, whatever its shape, ends it.

Arbitrary JSON values and near-miss JSON-RPC messages go to a real server over the byte stream
stdio serves with (`mcpkit.testing.ServerWire`, a `StreamConnection`), in both eras (a legacy
connection begins with `initialize`). After each one a ping still gets its answer. Every
message the server sends back, error responses included, is checked against the official
schema of the connection's revision; none is -32603, and nothing inside mcpkit logs a
traceback: every field read from the client is type-checked where it is read, so a malformed
one is the client's error (-32600, -32601, -32602, ...), never an internal one.
"""

from __future__ import annotations

import asyncio
import logging
from typing import Any

import pytest
from hypothesis import example, given
from hypothesis import strategies as st
from peer_values import json_values, mostly_valid_requests, near_miss_messages
from sample_server import make_server
from wire import LEGACY, MODERN, check_server_message

from mcpkit.protocol.codec import encode
from mcpkit.testing import ServerWire

ERAS = ["modern", "legacy"]
CRASH = "secret internal detail"
"""What the sample server's `crash` tool raises: its traceback is logged on purpose."""


class _Tracebacks(logging.Handler):
    """Failures inside mcpkit that a guard caught and logged with their traceback."""

    def __init__(self) -> None:
        super().__init__(logging.DEBUG)
        self.seen: list[str] = []

    def emit(self, record: logging.LogRecord) -> None:
        if record.exc_info is not None and CRASH not in str(record.exc_info[1]):
            self.seen.append(f"{record.name}: {record.getMessage()}: {record.exc_info[1]!r}")


class _Checked:
    """The server's end of one connection, each message it sends schema-checked."""

    def __init__(self) -> None:
        self.revision = MODERN
        self.wire = ServerWire(make_server(), tap=self._check)
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


async def _scenario(era: str, values: list[Any]) -> None:
    tracebacks = _Tracebacks()
    logging.getLogger("mcpkit").addHandler(tracebacks)
    conn = _Checked()
    try:
        if era == "legacy":
            await conn.initialize()
        for n, value in enumerate(values):
            conn.send(value)
            await conn.ping(n)
        await conn.ping(len(values))
    finally:
        conn.wire.close()
        logging.getLogger("mcpkit").removeHandler(tracebacks)
    internal = [m for m in conn.sent if type(m.get("error")) is dict
                and m["error"].get("code") == -32603]
    assert not internal, internal
    assert not tracebacks.seen, tracebacks.seen


@pytest.mark.parametrize("era", ERAS)
@given(values=st.lists(near_miss_messages(), min_size=1, max_size=6))
@example(values=[{"jsonrpc": "2.0", "id": 1, "error": None}])
def test_near_miss_messages_never_end_the_connection(era: str, values: list[Any]) -> None:
    asyncio.run(_scenario(era, values))


@pytest.mark.parametrize("era", ERAS)
@given(values=st.lists(json_values(), min_size=1, max_size=4))
def test_any_json_values_never_end_the_connection(era: str, values: list[Any]) -> None:
    asyncio.run(_scenario(era, values))


@pytest.mark.parametrize("era", ERAS)
@given(data=st.data())
def test_requests_that_reach_the_methods_never_end_the_connection(era: str, data: Any) -> None:
    """Requests that pass the envelope, so each method reads params of any shape."""
    values = data.draw(st.lists(mostly_valid_requests(era == "modern"), min_size=1, max_size=6))
    asyncio.run(_scenario(era, values))
