"""What a recovered task tells its client, and what it keeps for the next recovery.

A task whose process stopped is taken up by another (`mcpkit.ext.tasks.upkeep.recover`): a
non-resumable one ends `failed`, its statusMessage and its error both saying that its process
stopped; a resumable one runs again, its statusMessage saying whether it was handed back by a
stopping process or restarted after a crash (which attempt, of how many), and a hand-back is
forgotten once taken up, so a crash after it counts against `TaskOptions.max_attempts`.

The store is the memory engine on a clock moved by hand; each record is stored as the process
that stopped left it (its lease lapsed, or ended by a hand-back).
"""

from __future__ import annotations

import asyncio
from typing import Any

from helpers.store_urls import Clock

from mcpkit import Server
from mcpkit.ext.tasks import TaskOptions, runtime_of
from mcpkit.ext.tasks.engines.memory import MemoryTaskStore
from mcpkit.ext.tasks.jobs import progress_message
from mcpkit.ext.tasks.records import TaskRecord
from mcpkit.ext.tasks.runtime import TaskRuntime
from mcpkit.ext.tasks.upkeep import recover
from mcpkit.server.options import ServerOptions

LEASE_S, MAX_ATTEMPTS = 10.0, 3


def replica(store: MemoryTaskStore, clock: Clock) -> Server:
    server = Server("recovery", options=ServerOptions(
        clock=clock, extensions={"tasks": TaskOptions(
            store=store, lease_s=LEASE_S, heartbeat_s=LEASE_S / 2,
            max_attempts=MAX_ATTEMPTS)}))

    @server.tool(task="required", resumable=True)
    async def relay() -> str:
        await asyncio.Event().wait()
        return "never"

    @server.tool(task="required")
    async def batch() -> str:
        await asyncio.Event().wait()
        return "never"

    # No heartbeat comes round: each test calls `recover` itself.
    runtime(server).upkeep = asyncio.get_running_loop().create_future()
    return server


def runtime(server: Server) -> TaskRuntime:
    found = runtime_of(server)
    assert found is not None
    return found


async def left_behind(store: MemoryTaskStore, clock: Clock, tool: str,
                      **fields: Any) -> TaskRecord:
    """A task of `tool` stored as a process that is gone left it: its lease lapsed."""
    now = clock()
    record = TaskRecord(
        task_id=f"t-{tool}-{len(fields)}", owner=None, tool=tool, arguments={}, status="working",
        created_at=now, updated_at=now, ttl_ms=None, poll_interval_ms=500,
        resumable=tool == "relay", lease_owner="gone", lease_until=now + LEASE_S, **fields)
    assert await store.create(record) is None
    clock.advance(LEASE_S + 1)
    found = await store.get(record.task_id)
    assert found is not None
    return found


async def stop_jobs(server: Server) -> None:
    for job in list(runtime(server).jobs.values()):
        if job.task is not None:
            job.task.cancel()
    await asyncio.sleep(0)


async def test_a_task_whose_process_stopped_fails_with_an_error_saying_so() -> None:
    clock, store = Clock(), MemoryTaskStore()
    server = replica(store, clock)
    record = await left_behind(store, clock, "batch")
    await recover(runtime(server), record)
    stored = await store.get(record.task_id)
    assert stored is not None and stored.status == "failed"
    message = stored.status_message or ""
    assert "stopped before it finished" in message and "'batch' was not resumed" in message
    assert stored.error is not None and stored.error["message"] == message
    assert stored.error["code"] == -32603


async def test_a_handed_back_task_resumes_saying_so_and_a_later_crash_counts() -> None:
    clock, store = Clock(), MemoryTaskStore()
    server = replica(store, clock)
    try:
        record = await left_behind(store, clock, "relay", handed_back=True, handoffs=1)
        await recover(runtime(server), record)
        stored = await store.get(record.task_id)
        assert stored is not None and stored.status == "working"
        assert stored.status_message == "resumed after the server process running it stopped"
        assert stored.attempts == 2 and stored.handoffs == 1
        assert not stored.handed_back, "a hand-back taken up must not excuse the next crash"
    finally:
        await stop_jobs(server)


async def test_a_task_restarted_after_a_crash_says_which_attempt_it_is() -> None:
    clock, store = Clock(), MemoryTaskStore()
    server = replica(store, clock)
    try:
        record = await left_behind(store, clock, "relay")
        await recover(runtime(server), record)
        stored = await store.get(record.task_id)
        assert stored is not None and stored.status == "working" and stored.attempts == 2
        assert stored.status_message == f"restarted (attempt 2 of {MAX_ATTEMPTS})"
    finally:
        await stop_jobs(server)


def test_a_progress_report_becomes_its_message_its_count_or_both() -> None:
    assert progress_message({"progress": 3, "total": 10, "message": "copying"}) == \
        "copying (3/10)"
    assert progress_message({"message": "copying"}) == "copying"
    assert progress_message({"progress": 2.5}) == "2.5"
    assert progress_message({"progress": 3, "total": 10}) == "3/10"
    assert progress_message({}) is None
