#!/usr/bin/env python3
"""What a task costs next to a plain call, on the embedded SQLite store.

    python bench/tasks.py [--n 2000] [--kept 10000]

Requests go straight to `Server.handle` (no transport), so each figure is the server's own
work: a plain `tools/call` of an async tool; the same call made a task at once (a zero
synchronous budget: the record written to SQLite before the answer, the handler run, its end
written); `tasks/get` of a finished task read back from the file; task creations per second
done one after another; and the memory 10,000 finished tasks take until their TTL, in the
SQLite store (the process keeps none of them) and in the in-memory store (for comparison).
"""

from __future__ import annotations

import argparse
import asyncio
import gc
import tempfile
import time
import tracemalloc
from pathlib import Path
from typing import Any

from mcpkit import Server
from mcpkit.ext.tasks import TaskOptions, runtime_of
from mcpkit.protocol.codec import Request
from mcpkit.protocol.extensions import TASKS
from mcpkit.server.server import ServerOptions
from mcpkit.types.constants import CLIENT_CAPABILITIES_KEY, PROTOCOL_VERSION_KEY

PLAIN_META = {PROTOCOL_VERSION_KEY: "2026-07-28", CLIENT_CAPABILITIES_KEY: {}}
TASK_META = {PROTOCOL_VERSION_KEY: "2026-07-28",
             CLIENT_CAPABILITIES_KEY: {"extensions": {TASKS: {}}}}


def make_server(store: Any) -> Server:
    server = Server("bench-tasks", options=ServerOptions(extensions={"tasks": TaskOptions(
        store=store, sync_budget_s=0, max_running=100_000, heartbeat_s=3600, lease_s=7200)}))

    @server.tool()
    async def echo(text: str) -> str:
        return text

    @server.tool(task="optional")
    async def echo_task(text: str) -> str:
        await asyncio.sleep(0.001)  # past the zero budget: every call becomes a task
        return text

    return server


CALLERS = 100
"""Principals the calls come from in turn, so none is past its share of stored tasks
(`TaskOptions.max_stored_per_principal`, 200) however many tasks a run keeps."""


async def call(server: Server, i: int, method: str, params: dict[str, Any],
               caller: int | None = None) -> dict[str, Any]:
    reply = await server.handle(Request(i, method, params),
                                principal=f"caller-{i % CALLERS if caller is None else caller}")
    assert "result" in reply, reply
    return reply["result"]  # type: ignore[no-any-return]


async def settle(server: Server) -> None:
    runtime = runtime_of(server)
    assert runtime is not None
    for _ in range(100_000):
        if not runtime.jobs:  # type: ignore[attr-defined]
            return
        await asyncio.sleep(0.001)


async def run(n: int, kept: int) -> None:
    folder = Path(tempfile.mkdtemp(prefix="mcpkit-bench-tasks-"))
    server = make_server(folder / "tasks.sqlite3")
    plain = {"name": "echo", "arguments": {"text": "hi"}, "_meta": PLAIN_META}
    for i in range(200):
        await call(server, i, "tools/call", plain)
    start = time.perf_counter()
    for i in range(n):
        await call(server, i, "tools/call", plain)
    plain_us = (time.perf_counter() - start) / n * 1e6

    task = {"name": "echo_task", "arguments": {"text": "hi"}, "_meta": TASK_META}
    start = time.perf_counter()
    ids = [(await call(server, i, "tools/call", task))["taskId"] for i in range(n)]
    create_us = (time.perf_counter() - start) / n * 1e6
    await settle(server)
    whole = time.perf_counter() - start

    start = time.perf_counter()
    for i, task_id in enumerate(ids):
        got = await call(server, i, "tasks/get", {"taskId": task_id, "_meta": TASK_META})
        assert got["status"] == "completed"
    get_us = (time.perf_counter() - start) / n * 1e6

    print(f"plain tools/call (async echo)            {plain_us:8.1f} µs")
    print(f"tools/call answered CreateTaskResult      {create_us:8.1f} µs  "
          f"(+{create_us - plain_us:.1f} µs: the durable create)")
    print(f"task creations per second, one by one     {n / whole:8.0f} /s  "
          "(create, run, store the end)")
    print(f"tasks/get of a finished task (SQLite)     {get_us:8.1f} µs")

    for label, store in (("SQLite", folder / "kept.sqlite3"), ("memory", "memory:")):
        server = make_server(store)
        await call(server, 0, "tools/call", task)  # open the store before measuring
        await settle(server)
        gc.collect()
        tracemalloc.start()
        before = tracemalloc.get_traced_memory()[0]
        for i in range(kept):
            await call(server, i, "tools/call", task)
        await settle(server)
        gc.collect()
        after = tracemalloc.get_traced_memory()[0]
        tracemalloc.stop()
        size = ""
        if label == "SQLite":
            size = f", file {(folder / 'kept.sqlite3').stat().st_size / 1e6:.1f} MB"
        print(f"{kept} finished tasks kept ({label:6})      {(after - before) / 1e6:8.2f} MB "
              f"of Python memory{size}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--n", type=int, default=2000)
    parser.add_argument("--kept", type=int, default=10_000)
    args = parser.parse_args()
    asyncio.run(run(args.n, args.kept))


if __name__ == "__main__":
    main()
