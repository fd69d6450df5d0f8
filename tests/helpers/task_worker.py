"""The server of the long-running task tests: two task tools that work in steps, report
progress at each, ask one question on the way, and write every step to an effects file, so a
test can tell afterwards which run of which task did what, and in what order.

- `relay(tag, steps, ask_at, step_s)`: resumable (run again from the start after a crash);
- `batch(tag, steps, ask_at, step_s)`: not resumable (a crash ends it `failed`).

Each effects line is `EVENT TAG RUN [DETAIL]`, RUN naming one run of the handler (its process
and a random part), written with one `write` to a file opened for appending, so lines of
concurrent runs never mix and a SIGKILL loses none that was written. Events: `start`, `ask`,
`answered NOTE`, `step I`, `done`.

`mcpkit run task_worker.py --http ...` serves `server`, set up from the environment (EFFECTS,
TASK_HEARTBEAT_S, TASK_LEASE_S, TASK_MAX_ATTEMPTS); `make_worker(options, effects)` builds one
in the test's own process.
"""

from __future__ import annotations

import asyncio
import os
import secrets
from pathlib import Path

from mcpkit import Context, Server
from mcpkit.ext.tasks import TaskOptions
from mcpkit.server.options import ServerOptions

__all__ = ["make_worker", "server", "task_options"]


def task_options(**changes: object) -> TaskOptions:
    """The short clocks of these tests: heartbeats and leases of a second or so."""
    settings: dict[str, object] = {
        "sync_budget_s": 0.05, "poll_interval_ms": 50,
        "heartbeat_s": float(os.environ.get("TASK_HEARTBEAT_S", "0.2")),
        "lease_s": float(os.environ.get("TASK_LEASE_S", "1.0")),
        "max_attempts": int(os.environ.get("TASK_MAX_ATTEMPTS", "20")), **changes}
    return TaskOptions(**settings)  # type: ignore[arg-type]


def make_worker(options: ServerOptions, effects: str | Path) -> Server:
    made = Server("task-worker", options=options)
    fd = os.open(effects, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)

    def log(*parts: object) -> None:
        os.write(fd, (" ".join(str(p) for p in parts) + "\n").encode())

    async def work(tag: str, steps: int, ask_at: int, step_s: float, ctx: Context) -> str:
        run = f"{os.getpid()}.{secrets.token_hex(3)}"
        log("start", tag, run)
        note = None
        for i in range(steps):
            if i == ask_at:
                log("ask", tag, run)
                answer = await ctx.elicit("go", f"Go on with {tag}?", {"note": str})
                note = answer.get("note")
                log("answered", tag, run, note)
            await ctx.report_progress(i + 1, steps, f"step {i + 1}")
            log("step", tag, run, i)
            await asyncio.sleep(step_s)
        log("done", tag, run)
        return f"{tag} done by {run} with {note}"

    @made.tool(task="required", resumable=True)
    async def relay(tag: str, steps: int, ask_at: int, step_s: float, ctx: Context) -> str:
        """Resumable: run again from its start after its process stopped."""
        return await work(tag, steps, ask_at, step_s, ctx)

    @made.tool(task="required")
    async def batch(tag: str, steps: int, ask_at: int, step_s: float, ctx: Context) -> str:
        """Not resumable: ends failed when its process stops."""
        return await work(tag, steps, ask_at, step_s, ctx)

    return made


if "EFFECTS" in os.environ:
    server = make_worker(ServerOptions(extensions={"tasks": task_options()}),
                         os.environ["EFFECTS"])
