"""A request id reused after its request was cancelled, over the stream connection stdio serves
with (the `wire_factory` connection): the cancelled request's task, still unwinding when the id
comes back, must free only its own entry, never the new request's."""

from __future__ import annotations

import asyncio
from typing import Any

from mcpkit import Server

TIMEOUT = 5.0


def call(request_id: Any, tool: str, wire: Any) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "id": request_id, "method": "tools/call",
            "params": {"name": tool, "arguments": {}, "_meta": wire.meta()}}


def cancel(request_id: Any) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "method": "notifications/cancelled",
            "params": {"requestId": request_id}}


class Steps:
    """What the tools below did, each an event a test can wait on."""

    def __init__(self) -> None:
        self.names = ("slow_started", "unwinding", "release", "held_started", "held_cancelled")
        for name in self.names:
            setattr(self, name, asyncio.Event())
        self.slow_task: asyncio.Task[Any] | None = None

    async def reached(self, name: str) -> None:
        await asyncio.wait_for(getattr(self, name).wait(), TIMEOUT)


def reuse_server(steps: Steps) -> Server:
    server = Server("reuse")

    @server.tool()
    async def slow_unwind() -> str:
        """Runs until cancelled, then takes its time to unwind (until `release`)."""
        steps.slow_task = asyncio.current_task()
        steps.slow_started.set()
        try:
            await asyncio.Event().wait()
        except asyncio.CancelledError:
            steps.unwinding.set()
            await steps.release.wait()
            raise
        return "never"

    @server.tool()
    async def held() -> str:
        """Runs until cancelled."""
        steps.held_started.set()
        try:
            await asyncio.Event().wait()
        except asyncio.CancelledError:
            steps.held_cancelled.set()
            raise
        return "never"

    @server.tool()
    def echo() -> str:
        return "echo"

    return server


async def test_a_cancelled_request_unwinding_late_leaves_its_reused_id_in_flight(
    wire_factory: Any,
) -> None:
    steps = Steps()
    wire = wire_factory(reuse_server(steps))
    wire.send(call(1, "slow_unwind", wire))
    await steps.reached("slow_started")
    wire.send(cancel(1))
    await steps.reached("unwinding")
    # Id 1 is free again at once; the client reuses it while the old task still unwinds.
    wire.send(call(1, "held", wire))
    await steps.reached("held_started")
    steps.release.set()
    assert steps.slow_task is not None
    done, _ = await asyncio.wait({steps.slow_task}, timeout=TIMEOUT)
    assert done, "the cancelled request's task did not finish unwinding"

    # The new request 1 is still in flight: another request 1 is a duplicate, refused.
    wire.send(call(1, "echo", wire))
    refused = await wire.next(TIMEOUT)
    assert refused["id"] == 1
    assert refused["error"] == {"code": -32600, "message": (
        "Invalid request: id 1 is already in use by a request in flight")}
    # And cancelling it still cancels it, with nothing ever sent for it.
    wire.send(cancel(1))
    await steps.reached("held_cancelled")
    wire.send(call(2, "echo", wire))
    reply = await wire.next(TIMEOUT)
    assert reply["id"] == 2  # the next message: nothing came for either request 1
    assert reply["result"]["content"] == [{"type": "text", "text": "echo"}]
    assert wire.inbox.empty()
