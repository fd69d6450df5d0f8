"""An mcpkit Server with a bit of everything, for the client tests that run it in memory."""

from __future__ import annotations

import asyncio
from typing import Any, TypedDict

from mcpkit import CacheHint, Context, Server, ServerOptions, ToolError


class Sum(TypedDict):
    sum: int


def make_server(page_size: int = 100) -> Server:
    server = Server("client-tests", "2.0.0", instructions="Test server.",
                    options=ServerOptions(page_size=page_size))
    server.started = asyncio.Event()  # type: ignore[attr-defined]
    server.cancelled = asyncio.Event()  # type: ignore[attr-defined]
    server.reads = 0  # type: ignore[attr-defined]

    @server.tool()
    def add(a: int, b: int) -> Sum:
        """Add two integers."""
        return {"sum": a + b}

    @server.tool()
    def fail(reason: str) -> str:
        """Always fails."""
        raise ToolError(f"failed: {reason}")

    @server.tool()
    async def work(ctx: Context, steps: int = 3) -> str:
        """Reports progress and logs."""
        await ctx.info(f"starting {steps} steps", logger="work")
        for i in range(1, steps + 1):
            await ctx.report_progress(i, steps, f"step {i}")
        await ctx.debug("done")
        return "worked"

    @server.tool()
    async def wait_forever() -> str:
        """Waits until cancelled."""
        server.started.set()  # type: ignore[attr-defined]
        try:
            await asyncio.Event().wait()
        except asyncio.CancelledError:
            server.cancelled.set()  # type: ignore[attr-defined]
            raise
        return "never"

    @server.tool()
    def whoami(ctx: Context) -> dict[str, Any]:
        """Reports the request's declared context."""
        return {"info": ctx.client_info, "caps": ctx.client_capabilities, "trace": ctx.trace}

    for i in range(5):
        server.add_tool(lambda: "x", name=f"extra_{i}", description=f"Extra tool {i}.")

    @server.resource("mem://counter", mime_type="text/plain", cache=CacheHint(60_000, "private"))
    def counter() -> str:
        """Counts its reads."""
        server.reads += 1  # type: ignore[attr-defined]
        return f"read {server.reads}"  # type: ignore[attr-defined]

    @server.resource("mem://uncached", mime_type="text/plain", cache=CacheHint(0, "private"))
    def uncached() -> str:
        """Never cached."""
        return "fresh"

    @server.resource_template("mem://items/{name}", mime_type="text/plain")
    def item(name: str) -> str:
        """One item."""
        return f"item {name}"

    @server.prompt()
    def greet(name: str) -> str:
        """Greets someone."""
        return f"Hello, {name}!"

    @server.completer()
    def complete(ref: dict[str, Any], argument: dict[str, Any], context: dict[str, Any]) -> list[str]:
        names = ["alice", "albert", "bob"]
        return [n for n in names if n.startswith(argument["value"])]

    return server
