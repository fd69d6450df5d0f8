"""A server with one task tool of each kind, for the Tasks tests (memory store, short budget)."""

from __future__ import annotations

import asyncio
from typing import Any

from mcpkit import Server
from mcpkit.errors import InternalError, ToolError
from mcpkit.ext.tasks import TaskOptions
from mcpkit.protocol.extensions import TASKS
from mcpkit.server.context import Context
from mcpkit.server.server import ServerOptions
from mcpkit.types.constants import CLIENT_CAPABILITIES_KEY

DECLARING = {CLIENT_CAPABILITIES_KEY: {"elicitation": {}, "extensions": {TASKS: {}}}}
"""The `_meta` entry of a request that declares the extension (and can answer forms)."""


def tasks_server(**task_options: Any) -> Server:
    settings: dict[str, Any] = {"store": "memory:", "sync_budget_s": 0.05, **task_options}
    server = Server("tasks-test",
                    options=ServerOptions(extensions={"tasks": TaskOptions(**settings)}))
    gate: dict[str, asyncio.Event] = {}
    server.gate = gate  # type: ignore[attr-defined]

    @server.tool()
    def plain(name: str) -> str:
        return f"Hello, {name}!"

    @server.tool(task="optional")
    async def slow(seconds: float, ctx: Context) -> str:
        """Sleeps, reporting progress twice."""
        await ctx.report_progress(1, 2, "half way")
        await asyncio.sleep(seconds)
        await ctx.report_progress(2, 2, "done")
        return f"slept {seconds}"

    @server.tool(task="required")
    async def job(kind: str = "ok") -> str:
        await asyncio.sleep(0.1)
        if kind == "tool-error":
            raise ToolError("the job failed")
        if kind == "protocol-error":
            raise InternalError("the job broke")
        if kind == "huge":
            return "x" * 5000
        return "job done"

    @server.tool(task="required")
    async def confirm(ctx: Context) -> str:
        await asyncio.sleep(0.1)
        answer = await ctx.elicit("confirm", "Go on?", {"confirm": bool})
        return f"confirmed={answer.content}"

    @server.tool(task="required")
    async def two(ctx: Context) -> str:
        await asyncio.sleep(0.1)
        a, b = await asyncio.gather(ctx.elicit("a", "A?", {"name": str}),
                                    ctx.elicit("b", "B?", {"name": str}))
        return f"{a.content['name']}+{b.content['name']}"

    @server.tool(task="required")
    async def named(ctx: Context) -> str:
        answer = await ctx.elicit("user_name", "Your name?", {"name": str})
        await asyncio.sleep(0.1)
        return f"Hello {answer.content['name']}"

    return server
