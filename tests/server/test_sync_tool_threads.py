"""Sync tools run in worker threads: one blocked in its thread never holds up another, since a
thread is started whenever work waits and none is idle. Over a real stream connection."""

from __future__ import annotations

import asyncio
import threading
from typing import Any

from wire import meta

from mcpkit import Server

GATE = 30.0  # a bound on each wait, never reached when the behaviour holds


def call(request_id: str, name: str) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "id": request_id, "method": "tools/call",
            "params": {"name": name, "arguments": {}, "_meta": meta()}}


async def test_a_sync_tool_blocked_in_its_thread_does_not_hold_up_the_next_one(
    wire_factory: Any,
) -> None:
    server = Server("threads-test")
    started = threading.Event()
    released = threading.Event()

    @server.tool()
    def hold() -> str:
        """Blocks its thread until `release` runs."""
        started.set()
        return "released" if released.wait(GATE) else "never released"

    @server.tool()
    def release() -> str:
        """Lets `hold` finish; it can only run in a thread of its own."""
        released.set()
        return "done"

    wire = wire_factory(server)
    wire.send(call("h", "hold"))
    assert await asyncio.to_thread(started.wait, GATE)  # hold now occupies its thread
    wire.send(call("r", "release"))
    replies = {}
    for _ in range(2):
        reply = await wire.next(timeout=GATE)
        replies[reply["id"]] = reply["result"]["content"][0]["text"]
    assert replies == {"r": "done", "h": "released"}
