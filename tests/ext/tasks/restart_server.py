"""A task server for the restart tests: `python restart_server.py PORT DB_PATH` serves Streamable
HTTP on 127.0.0.1:PORT with its tasks in the SQLite file DB_PATH, short heartbeats and leases."""

from __future__ import annotations

import asyncio
import sys

from mcpkit import Server
from mcpkit.ext.tasks import TaskOptions
from mcpkit.server.server import ServerOptions

port, db = int(sys.argv[1]), sys.argv[2]
server = Server("restart-test", options=ServerOptions(extensions={"tasks": TaskOptions(
    store=db, sync_budget_s=0.05, heartbeat_s=0.2, lease_s=1.0)}))


@server.tool(task="optional")
async def sleepy(seconds: float) -> str:
    await asyncio.sleep(seconds)
    return f"slept {seconds}"


@server.tool(task="required")
async def quick(word: str) -> str:
    return f"done: {word}"


if __name__ == "__main__":
    server.run(http=f"127.0.0.1:{port}/mcp")
