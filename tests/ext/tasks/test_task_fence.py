"""A handler is stopped before the lease its process wrote ends, however long that write took:
another replica reads the stored lease, so the time a create or a claim spent reaching the
store counts against the runner too, and its fence must be due before the lease runs out.

The store here is the memory engine on the server's own clock, moved by hand: its create and
its claim each take most of a lease (the clock moves while they run), as a store under load
may. The fence is a timer of the event loop, set as the write returns (no await between): from
then, it must be due within what is left of the lease by the clock (less a margin), whatever
the write cost.
"""

from __future__ import annotations

import asyncio
from typing import Any

from helpers.store_urls import Clock
from test_task_shares import Caller

from mcpkit import Server
from mcpkit.ext.tasks import TaskOptions, runtime_of
from mcpkit.ext.tasks.engines.memory import MemoryTaskStore
from mcpkit.ext.tasks.records import TaskQuota, TaskRecord, TaskUsage
from mcpkit.ext.tasks.upkeep import recover
from mcpkit.server.options import ServerOptions

LEASE_S, WRITE_S = 20.0, 15.0


class SlowWrites(MemoryTaskStore):
    """Creates and claims that take `WRITE_S` of the clock."""

    def __init__(self, clock: Clock) -> None:
        super().__init__(clock=clock)
        self.clock = clock
        self.returned_at = 0.0
        """The event loop's time when the last create or claim returned."""

    async def create(self, record: TaskRecord, quota: TaskQuota | None = None
                     ) -> TaskUsage | None:
        self.clock.advance(WRITE_S)
        try:
            return await super().create(record, quota)
        finally:
            self.returned_at = asyncio.get_running_loop().time()

    async def claim(self, task_id: str, owner: str, now: float, until: float
                    ) -> TaskRecord | None:
        self.clock.advance(WRITE_S)
        try:
            return await super().claim(task_id, owner, now, until)
        finally:
            self.returned_at = asyncio.get_running_loop().time()


def runner(store: SlowWrites, clock: Clock) -> Server:
    server = Server("fence", options=ServerOptions(clock=clock, extensions={"tasks": TaskOptions(
        store=store, sync_budget_s=0.01, heartbeat_s=LEASE_S / 2, lease_s=LEASE_S)}))

    @server.tool(task="required", resumable=True)
    async def endless() -> str:
        await asyncio.Event().wait()
        return "never"

    # No heartbeat comes round in the test: the fence alone bounds the run.
    runtime_of(server).upkeep = asyncio.get_running_loop().create_future()  # type: ignore[union-attr]
    return server


def due_after_write(job: Any, store: SlowWrites) -> float:
    """How long after the store's write returned the job's fence is due."""
    assert job.fence is not None, (job.stopped, job.task)
    return float(job.fence.when() - store.returned_at)


async def test_a_created_task_is_fenced_by_the_lease_it_was_stored_with() -> None:
    clock = Clock()
    store = SlowWrites(clock)
    server = runner(store, clock)
    caller = Caller(server, None)
    try:
        task_id = (await caller.call("endless"))["result"]["taskId"]
        job = runtime_of(server).jobs[task_id]
        stored = await store.get(task_id)
        assert stored is not None and stored.lease_until is not None
        left = stored.lease_until - clock()
        assert left == LEASE_S - WRITE_S
        assert due_after_write(job, store) < left, \
            "the fence would stop the handler after its lease ended"
    finally:
        caller.wire.close()
        for job in list(runtime_of(server).jobs.values()):
            if job.task is not None:
                job.task.cancel()
        await asyncio.sleep(0)


async def test_a_claimed_task_is_fenced_by_the_lease_its_claim_wrote() -> None:
    clock = Clock()
    store = SlowWrites(clock)
    first, second = runner(store, clock), runner(store, clock)
    caller = Caller(first, None)
    try:
        task_id = (await caller.call("endless"))["result"]["taskId"]
        first_job = runtime_of(first).jobs.pop(task_id)  # the first process is gone
        assert first_job.task is not None
        first_job.task.cancel()
        clock.advance(LEASE_S)
        stored = await store.get(task_id)
        assert stored is not None
        await recover(runtime_of(second), stored)  # its claim takes WRITE_S
        job = runtime_of(second).jobs[task_id]
        claimed = await store.get(task_id)
        assert claimed is not None and claimed.lease_owner == runtime_of(second).owner
        assert claimed.lease_until is not None
        assert due_after_write(job, store) < claimed.lease_until - clock()
    finally:
        caller.wire.close()
        for server in (first, second):
            for job in list(runtime_of(server).jobs.values()):
                if job.task is not None:
                    job.task.cancel()
        await asyncio.sleep(0)
