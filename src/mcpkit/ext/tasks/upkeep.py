"""The heartbeat and the sweeper: no task is left `working` after its process is gone.

Every `TaskOptions.heartbeat_s` this process renews the leases of the tasks it runs, picks up
what other processes left in the store for them (a `tasks/cancel`, the answers of a
`tasks/update`: with a shared broker they arrive at once, and the heartbeat is what catches one
whose control was lost), recovers the tasks whose lease lapsed, and deletes those past their TTL.
Recovering a task means claiming its lease (so one process does it) and then either running its
tool again from the start (a `resumable=True` tool, up to `TaskOptions.max_attempts` starts) or
ending it `failed` with a statusMessage saying its process stopped. `tasks/get` recovers a
lapsed task it reads at once, so a client never waits for the next sweep to learn of it.
"""

from __future__ import annotations

import asyncio
import logging
from functools import partial
from typing import TYPE_CHECKING

from mcpkit.errors import InternalError
from mcpkit.ext.tasks.jobs import Job
from mcpkit.ext.tasks.task_round import TaskRound
from mcpkit.protocol.tasks import TERMINAL, iso_timestamp
from mcpkit.server.tools import run_handler
from mcpkit.store.tasks import TaskRecord

if TYPE_CHECKING:
    from mcpkit.ext.tasks.runtime import TaskRuntime

__all__ = ["pick_up", "recover", "run_upkeep", "upkeep_once"]

log = logging.getLogger("mcpkit.tasks")


async def run_upkeep(runtime: TaskRuntime) -> None:
    """Run `upkeep_once` every heartbeat until cancelled; a failing round is logged, not fatal."""
    while True:
        try:
            await upkeep_once(runtime)
        except asyncio.CancelledError:
            raise
        except Exception:
            log.exception("task upkeep failed; retrying at the next heartbeat")
        await asyncio.sleep(runtime.options.heartbeat_s)


async def upkeep_once(runtime: TaskRuntime) -> None:
    store, now = runtime.store, runtime.clock()
    running = list(runtime.jobs.values())
    await store.renew([j.record.task_id for j in running], runtime.owner,
                      now + runtime.options.lease_s)
    for job in running:
        await pick_up(runtime, job)
    for record in await store.stale(now):
        if record.task_id not in runtime.jobs:
            await recover(runtime, record)
    gone = await store.purge(now)
    if gone:
        log.debug("deleted %d expired tasks", gone)


async def pick_up(runtime: TaskRuntime, job: Job) -> None:
    """What other processes stored for a task running here: a cancel, answers. Each
    heartbeat does this for every running task; a control heard from the broker
    (`mcpkit.ext.tasks.controls`) does it at once for the task it names."""
    stored = await runtime.store.get(job.record.task_id)
    if stored is None:
        return
    if stored.cancel_requested and not job.record.cancel_requested:
        job.record.cancel_requested = True
        job.cancel()
    if job.record.input_requests:
        answers = await runtime.store.take_answers(job.record.task_id)
        if answers:
            await job.deliver(answers)


async def recover(runtime: TaskRuntime, record: TaskRecord) -> TaskRecord:
    """A task whose process stopped: run it again (resumable) or end it `failed`."""
    opts, now = runtime.options, runtime.clock()
    if not await runtime.store.claim(record.task_id, record.lease_owner, runtime.owner,
                                     now + opts.lease_s):
        fresh = await runtime.store.get(record.task_id)
        return fresh if fresh is not None else record
    record.lease_owner, record.lease_until = runtime.owner, now + opts.lease_s
    tool = runtime.server.tools.get(record.tool)
    if (record.resumable and tool is not None and tool.task is not None
            and record.attempts < opts.max_attempts and not record.cancel_requested):
        record.attempts += 1
        record.status, record.input_requests = "working", {}
        record.status_message = f"restarted (attempt {record.attempts} of {opts.max_attempts})"
        _rerun(runtime, record)
        await runtime.save(record)
        log.info("task %s: its process stopped; running %r again", record.task_id, record.tool)
        return record
    stopped = iso_timestamp(record.lease_until or now)
    if record.cancel_requested:
        record.status, record.status_message = "cancelled", "cancelled by tasks/cancel"
    else:
        message = (f"the server process running this task stopped before it finished (no "
                   f"heartbeat since {stopped}); its tool {record.tool!r} was not resumed")
        record.status, record.status_message = "failed", message
        record.error = InternalError(message).to_error()
    record.input_requests = {}
    record.lease_owner = record.lease_until = None
    await runtime.save(record)
    log.warning("task %s: %s", record.task_id, record.status_message)
    return record


def _rerun(runtime: TaskRuntime, record: TaskRecord) -> None:
    """Start a resumable task's tool again in this process, as a task from the first line."""
    tool = runtime.server.tools[record.tool]
    ctx = runtime.resumed_context(record)
    params = {"name": record.tool, "arguments": record.arguments or {}}
    rnd = TaskRound(runtime.server.sealer, ctx.method, tool.name, params["arguments"], params,
                    ctx.principal)
    job = Job(record, runtime.save, rnd)
    rnd.detach(job.park)
    rnd.created()
    if tool.signature.injected:
        ctx._round = rnd
    ctx._notify = job.notify
    job.task = asyncio.ensure_future(run_handler(tool, params, ctx))
    runtime.jobs[record.task_id] = job
    job.supervisor = asyncio.ensure_future(partial(runtime._supervise, job)())
    assert record.status not in TERMINAL
