"""The server the resumable-stream tests call, and the gates its tools take turns on: each tool
reports progress, waits for the test to open a gate, closes its stream early or asks the client,
so a test can drop, resume or cancel a stream at the moment it chooses."""

from __future__ import annotations

import asyncio
from typing import Any

from helpers.transports.resume_peer import TIMEOUT
from mcpkit import Context, Server
from mcpkit.transports.http_server.app import HTTPApp
from mcpkit.transports.http_server.options import HTTPOptions
from mcpkit.transports.legacy.resume import close_sse_stream

RETRY_MS = 30
"""The `retry` the tools close their streams early with."""


class Gates:
    """Named events a test and the tools it calls use to take turns."""

    def __init__(self) -> None:
        self._events: dict[str, asyncio.Event] = {}

    def _get(self, name: str) -> asyncio.Event:
        return self._events.setdefault(name, asyncio.Event())

    def open(self, name: str) -> None:
        self._get(name).set()

    def is_open(self, name: str) -> bool:
        return self._get(name).is_set()

    async def wait(self, name: str, timeout: float = TIMEOUT) -> None:
        await asyncio.wait_for(self._get(name).wait(), timeout)


def add_relay(server: Server, gates: Gates) -> None:
    """The `relay` tool: progress 1, wait for "go", progress 2 and 3, open "sent", wait for
    "finish", answer "relayed"; opens "cancelled" if it is cancelled on the way."""

    @server.tool()
    async def relay(ctx: Context) -> str:
        try:
            await ctx.report_progress(1, 3)
            await gates.wait("go")
            await ctx.report_progress(2, 3)
            await ctx.report_progress(3, 3)
            gates.open("sent")
            await gates.wait("finish")
        except asyncio.CancelledError:
            gates.open("cancelled")
            raise
        return "relayed"


def build(gates: Gates) -> Server:
    """The server of the resume tests: `relay` (`add_relay`) and the tools below, each taking
    turns with the test through `gates`."""
    server = Server("resume-tests", "1.0.0")

    add_relay(server, gates)

    @server.tool()
    async def steps(n: int, ctx: Context) -> str:
        """Report progress n times, then answer."""
        for i in range(n):
            await ctx.report_progress(i + 1, n)
        gates.open("stepped")
        await gates.wait("finish")
        return f"{n} steps"

    @server.tool()
    async def echo(text: str) -> str:
        """Answer at once."""
        return text

    @server.tool()
    async def poll_me(ctx: Context) -> str:
        """Progress 1, close the connection early, progress 2, then answer."""
        await ctx.report_progress(1, 2)
        closed = await close_sse_stream(retry_ms=RETRY_MS)
        gates.open("closed")
        await ctx.report_progress(2, 2)
        return f"closed={closed}"

    @server.tool()
    async def slow(ctx: Context) -> str:
        """Progress 1, wait for "go", progress 2, then answer."""
        await ctx.report_progress(1, 2)
        await gates.wait("go")
        await ctx.report_progress(2, 2)
        return "slow done"

    @server.tool()
    async def confirm(action: str, ctx: Context) -> str:
        """Close the connection, then ask the user (the question goes out while it is closed)."""
        await close_sse_stream(retry_ms=RETRY_MS)
        answer = await ctx.elicit("confirm", f"Really {action}?", {"sure": bool})
        return f"{action}: {'yes' if answer.accepted and answer['sure'] else 'no'}"

    @server.tool()
    async def late(ctx: Context) -> str:
        """Wait for "go" before saying anything, then progress 1, then answer."""
        try:
            gates.open("started")
            await gates.wait("go")
            await ctx.report_progress(1, 1)
        except asyncio.CancelledError:
            gates.open("cancelled")
            raise
        return "late"

    @server.tool()
    async def burst(n: int, ctx: Context) -> str:
        """Progress 1, wait for "go", then progress 2..n without pausing, then answer."""
        await ctx.report_progress(1, n)
        await gates.wait("go")
        for i in range(2, n + 1):
            await ctx.report_progress(i, n)
        return f"{n} sent"

    return server


def app(gates: Gates, **options: Any) -> HTTPApp:
    """`build(gates)` as an HTTP app with these `HTTPOptions`."""
    return HTTPApp(build(gates), HTTPOptions(**options))
