"""A real mcpkit server running the Tasks runtime, for the client's and the CLI's tests: a
short synchronous budget and poll interval, a memory store (`mcpkit run task_server.py`
serves it over stdio or HTTP; `make()` builds one for an in-memory connection)."""

from __future__ import annotations

import asyncio

from mcpkit import Server
from mcpkit.errors import InternalError
from mcpkit.ext.tasks import TaskOptions
from mcpkit.server.context import Context
from mcpkit.server.options import ServerOptions


def make() -> Server:
    srv = Server("task-server", options=ServerOptions(extensions={"tasks": TaskOptions(
        store="memory:", sync_budget_s=0.05, poll_interval_ms=20)}))

    @srv.tool(task="optional")
    async def slow(seconds: float, ctx: Context) -> str:
        """Sleeps, reporting progress on the way."""
        for step in range(4):
            await ctx.report_progress(step, 4, "sleeping")
            await asyncio.sleep(seconds / 4)
        return f"slept {seconds}"

    @srv.tool(task="required")
    async def confirm(ctx: Context) -> str:
        """Asks for a confirmation once the task runs."""
        await asyncio.sleep(0.1)
        answer = await ctx.elicit("confirm", "Go on?", {"ok": bool})
        return f"confirmed={answer.content['ok']}"

    @srv.tool(task="required")
    async def pair(ctx: Context) -> str:
        """Asks two questions at once."""
        await asyncio.sleep(0.1)
        a, b = await asyncio.gather(ctx.elicit("a", "A?", {"name": str}),
                                    ctx.elicit("b", "B?", {"name": str}))
        return f"{a.content['name']}+{b.content['name']}"

    @srv.tool(task="required")
    async def broken() -> str:
        await asyncio.sleep(0.1)
        raise InternalError("the job broke")

    return srv


server = make()
