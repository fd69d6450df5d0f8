"""The Tasks extension's fixtures of the conformance server (the names and behaviour the suite's
`tasks-*` scenarios call for, REQUIREMENTS §28 CONF), added by `add_task_fixtures(server)`.

Tasks are kept in memory (the conformance server is started afresh for every run) and a call
becomes a task after 0.25 s, so `slow_compute` with `seconds: 0` answers in the call and with
one second or more becomes a task. The tools that must park in `input_required` as a task first
spend longer than that preparing, so their question comes after the task exists; only
`test_tool_with_task` asks at once, which makes its question a multi round-trip round before any
task (TASK-9).
"""

from __future__ import annotations

import asyncio
import os
from typing import Any

from mcpkit import Context, ToolError
from mcpkit.errors import InternalError
from mcpkit.ext.tasks import TaskOptions, enable_tasks

__all__ = ["add_task_fixtures"]

_PREPARE_S = 0.5
"""How long the asking fixtures work before asking: past the 0.25 s budget."""


def _form(**fields: dict[str, Any]) -> dict[str, Any]:
    return {"type": "object", "properties": fields, "required": list(fields)}


def add_task_fixtures(server: Any) -> None:
    # One server keeps its tasks in memory; replicas behind a balancer (CONFORMANCE_SHARED_TASKS
    # set) keep them in the store they share (`--store`), or a task created through one replica
    # would be unknown to the next.
    store = None if os.environ.get("CONFORMANCE_SHARED_TASKS") else "memory:"
    enable_tasks(server, TaskOptions(store=store, sync_budget_s=0.25, poll_interval_ms=500,
                                     heartbeat_s=1.0, lease_s=5.0))

    @server.tool()
    def greet(name: str) -> str:
        """Greets by name, always in the call (never a task)."""
        return f"Hello, {name}!"

    @server.tool(task="optional")
    async def slow_compute(seconds: float, ctx: Context, label: str = "") -> str:
        """Sleeps `seconds`, reporting progress each second, then answers."""
        steps = max(int(seconds), 1)
        for step in range(steps):
            await asyncio.sleep(seconds / steps)
            await ctx.report_progress(step + 1, steps, f"computing {label}".strip())
        return f"computed {label} after {seconds} s".replace("  ", " ")

    @server.tool(task="required")
    async def failing_job() -> str:
        """Runs for a second, then reports a tool error (the task completes with isError)."""
        await asyncio.sleep(1)
        raise ToolError("the job failed: the input could not be processed")

    @server.tool(task="required")
    async def protocol_error_job() -> str:
        """Breaks with a JSON-RPC error (the task ends failed, its error inlined)."""
        await asyncio.sleep(0.5)
        raise InternalError("the job broke: its worker stopped unexpectedly")

    @server.tool(task="required")
    async def confirm_delete(filename: str, ctx: Context) -> str:
        """Asks for a confirmation inside the task, then deletes (pretends to)."""
        await asyncio.sleep(_PREPARE_S)
        answer = await ctx.elicit("confirm", f"Delete {filename}?", _form(confirm={"type": "boolean"}))
        confirmed = answer.action == "accept" and bool((answer.content or {}).get("confirm"))
        return f"Deleted {filename}" if confirmed else f"Kept {filename}"

    @server.tool(task="required")
    async def multi_input(ctx: Context) -> str:
        """Asks two questions at once inside the task; answers once both are in."""
        await asyncio.sleep(_PREPARE_S)
        first, second = await asyncio.gather(
            ctx.elicit("first", "First name?", _form(name={"type": "string"})),
            ctx.elicit("second", "Second name?", _form(name={"type": "string"})))
        return f"Got {(first.content or {}).get('name')} and {(second.content or {}).get('name')}"

    @server.tool(task="required")
    async def test_tool_with_task(ctx: Context) -> str:
        """Asks the user's name before any task exists, then works on as a task."""
        answer = await ctx.elicit("user_name", "What is your name?", _form(name={"type": "string"}))
        await asyncio.sleep(_PREPARE_S)
        return f"Hello, {(answer.content or {}).get('name', 'stranger')}! The task is done."
