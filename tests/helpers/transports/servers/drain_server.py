"""A server for the drain tests (`mcpkit run drain_server.py --http ... --grace S`): a plain
tool that holds its request, and task tools of both kinds, each writing a line to the file
MARKS names when it starts (so a test knows it is running before it sends SIGTERM). Its
tasks are kept in the SQLite file TASKS_DB, shared with the process started after it."""

import asyncio
import os

from mcpkit import Context, Server
from mcpkit.ext.tasks import TaskOptions
from mcpkit.server.options import ServerOptions

server = Server("drain", options=ServerOptions(extensions={"tasks": TaskOptions(
    store=os.environ["TASKS_DB"], sync_budget_s=0.05, heartbeat_s=0.2, lease_s=2.0)}))


def mark(line: str) -> None:
    with open(os.environ["MARKS"], "a") as marks:
        marks.write(line + "\n")


@server.tool()
async def hold(seconds: float, tag: str, ctx: Context) -> str:
    """Holds its request `seconds`, reporting progress first when `tag` asks for a stream."""
    mark(f"hold {tag}")
    if tag.startswith("stream"):
        await ctx.report_progress(0, 1, "holding")
    await asyncio.sleep(seconds)
    return f"held {tag}"


@server.tool(task="required")
async def batch(seconds: float, tag: str) -> str:
    """A task that cannot be run again."""
    mark(f"batch {tag}")
    await asyncio.sleep(seconds)
    return f"batch {tag} done"


@server.tool(task="required", resumable=True)
async def relay(seconds: float, tag: str) -> str:
    """A task safe to run again from its start."""
    mark(f"relay {tag} {os.getpid()}")
    await asyncio.sleep(seconds)
    return f"relay {tag} done in {os.getpid()}"
