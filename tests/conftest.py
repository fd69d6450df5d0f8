"""Shared fixtures: a server driven over a real stream connection, with every outgoing
message checked against the official schema of its revision."""

from __future__ import annotations

import asyncio
import sys
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import orjson
import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))

# With the schema checks' hooks (the pytest_* names): under CI a run without the schemas stops
# at start; elsewhere the header warns and the summary counts the checks made (0: they were off).
from wire import (  # noqa: F401
    LEGACY,
    MODERN,
    check_server_message,
    meta,
    pytest_configure,
    pytest_report_header,
    pytest_sessionfinish,
    pytest_terminal_summary,
    pytest_testnodedown,
)


class Wire:
    """A client's view of one stream connection to a server, messages checked as they go."""

    def __init__(self, server: Any) -> None:
        self.server = server
        self.inbox: asyncio.Queue[dict[str, Any]] = asyncio.Queue()
        from mcpkit.transports.stream import StreamConnection

        self.conn = StreamConnection(server, self._write)
        self.methods: dict[Any, str] = {}
        self.revision = MODERN
        self._ids = 0

    def _write(self, data: bytes) -> None:
        assert data.endswith(b"\n") and data.count(b"\n") == 1, "one message per line"
        message = orjson.loads(data)
        request_method = self.methods.get(message.get("id")) if "method" not in message else None
        check_server_message(self.revision, message, request_method)
        self.inbox.put_nowait(message)

    def send(self, message: dict[str, Any]) -> None:
        if "id" in message and "method" in message:
            self.methods[message["id"]] = message["method"]
            if message["method"] == "initialize":
                self.revision = LEGACY
        self.conn.receive(orjson.dumps(message))

    def send_raw(self, data: bytes) -> None:
        self.conn.receive(data)

    async def next(self, timeout: float = 5.0) -> dict[str, Any]:
        return await asyncio.wait_for(self.inbox.get(), timeout)

    async def request(
        self, method: str, params: dict[str, Any] | None = None, *, with_meta: bool = True,
        **meta_extra: Any,
    ) -> dict[str, Any]:
        """Send a request and return its response (notifications before it are kept)."""
        self._ids += 1
        request_id = self._ids
        if with_meta:
            params = dict(params or {})
            params["_meta"] = {**meta(**meta_extra), **params.get("_meta", {})}
        message: dict[str, Any] = {"jsonrpc": "2.0", "id": request_id, "method": method}
        if params is not None:
            message["params"] = params
        self.send(message)
        self.notifications: list[dict[str, Any]] = []
        while True:
            reply = await self.next()
            if reply.get("id") == request_id and "method" not in reply:
                return reply
            self.notifications.append(reply)


@pytest.fixture
async def wire_factory() -> AsyncIterator[Any]:
    wires: list[Wire] = []

    def make(server: Any) -> Wire:
        w = Wire(server)
        wires.append(w)
        return w

    yield make
    for w in wires:
        w.conn.cancel_all()
