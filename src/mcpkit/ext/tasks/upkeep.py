"""The heartbeat and the sweeper: no task is left `working` after its process is gone, and no
task is run by two processes at once.

Every `TaskOptions.heartbeat_s` this process renews the leases of the tasks it runs (a
handler whose lease another process holds now is stopped at once), picks up what other
processes left in the store for them (a `tasks/cancel`, the answers of a `tasks/update`: with
a shared broker they arrive at once, and the heartbeat is what catches one whose control was
lost), ends the tasks past their TTL and those that waited for input longer than
`TaskOptions.input_wait_s` (their places free again), recovers the tasks whose lease lapsed,
and deletes those past their TTL.

Recovering a task means claiming its lapsed lease (one process wins, and never while the lease
is live) and then either running its tool again from the start with every answer given so far
(a `resumable=True` tool, up to `TaskOptions.max_attempts` starts after crashes) or ending it
`failed` with a statusMessage saying its process stopped. `tasks/get` recovers a lapsed task it
reads at once, so a client never waits for the next sweep to learn of it.
"""

from __future__ import annotations

import asyncio
import logging
from typing import TYPE_CHECKING

from mcpkit.errors import InternalError
from mcpkit.ext.tasks.jobs import Job
from mcpkit.ext.tasks.options import task_mode
from mcpkit.ext.tasks.records import TaskRecord
from mcpkit.ext.tasks.task_round import TaskRound
from mcpkit.ext.tasks.wire import iso_timestamp
from mcpkit.server.extending import run_handler

if TYPE_CHECKING:
    from mcpkit.ext.tasks.keeper import TaskKeeper

__all__ = [
    "pick_up",
    "recover",
    "run_upkeep",
    "upkeep_once",
]

log = logging.getLogger("mcpkit.tasks")


async def run_upkeep(runtime: TaskKeeper) -> None:
    """Run `upkeep_once` every heartbeat until cancelled; a failing round is logged, not fatal."""
    while True:
        try:
            await upkeep_once(runtime)
        except asyncio.CancelledError:
            raise
        except Exception:
            log.exception("task upkeep failed; retrying at the next heartbeat")
        await asyncio.sleep(runtime.options.heartbeat_s)


async def upkeep_once(runtime: TaskKeeper) -> None:
    store, opts, now = runtime.store, runtime.options, runtime.clock()
    running = list(runtime.jobs.values())
    loop = asyncio.get_running_loop()
    sent = loop.time()
    held = await store.renew([j.record.task_id for j in running], runtime.owner,
                             now + opts.lease_s)
    left = opts.lease_s - (loop.time() - sent)
    for job in running:
        if job.record.task_id not in held:
            if job.task is not None and not job.task.done():
                log.warning("task %s: another process holds it now; its run here stops",
                            job.record.task_id)
            job.stop("lost")
        elif job.stopped is None:
            runtime.fence(job, left)
    for job in running:
        if job.stopped is None:
            await pick_up(runtime, job)
        _time_limits(runtime, job, now)
    if not runtime.draining:
        for record in await store.stale(now):
            if record.task_id not in runtime.jobs:
                await recover(runtime, record)
    gone = await store.purge(now)
    if gone:
        log.debug("deleted %d expired tasks", gone)


def _time_limits(runtime: TaskKeeper, job: Job, now: float) -> None:
    """End a running task past its TTL (deleted: nothing is stored), or one that waited for
    input longer than `TaskOptions.input_wait_s` (cancelled, saying so)."""
    if job.stopped is not None:
        return
    if job.record.expired(now):
        log.info("task %s: past its TTL; its run stops", job.record.task_id)
        job.stop("expired")
        return
    wait = runtime.options.input_wait_s
    if wait is not None and job.parked_at is not None and now - job.parked_at >= wait:
        keys = ", ".join(repr(k) for k in job.record.input_requests)
        job.stop("timeout", f"cancelled: no answer to {keys} within {wait:g} s "
                            "(TaskOptions.input_wait_s)")


async def pick_up(runtime: TaskKeeper, job: Job) -> None:
    """What other processes stored for a task running here: a cancel, answers. Each
    heartbeat does this for every running task; a control heard from the broker
    (`mcpkit.ext.tasks.controls`) and a `tasks/update` served here do it at once."""
    stored = await runtime.store.get(job.record.task_id)
    if stored is None:
        job.stop("expired")
        return
    if stored.lease_owner != runtime.owner:
        job.stop("lost")
        return
    if stored.cancel_requested:
        job.stop("cancel")
        return
    answers = {k: v for k, v in stored.answers.items() if k in job.record.input_requests}
    if answers:
        await job.deliver(answers)


async def recover(runtime: TaskKeeper, record: TaskRecord) -> TaskRecord:
    """A task whose process stopped (or handed it back): run it again (resumable) or end it
    `failed`. Only the caller whose claim of the lapsed lease wins does either."""
    opts, now = runtime.options, runtime.clock()
    claimed = await runtime.store.claim(record.task_id, runtime.owner, now, now + opts.lease_s)
    if claimed is None:  # still live, finished, gone, or another process took it
        fresh = await runtime.store.get(record.task_id)
        return fresh if fresh is not None else record
    record = claimed
    tool = runtime.server.tools.get(record.tool)
    crashes = record.attempts - record.handoffs
    if (record.resumable and tool is not None and task_mode(tool) is not None
            and (record.handed_back or crashes < opts.max_attempts)
            and not record.cancel_requested):
        handed = record.handed_back
        record.attempts += 1
        record.handed_back = False
        record.status, record.input_requests = "working", {}
        record.status_message = (
            "resumed after the server process running it stopped" if handed else
            f"restarted (attempt {crashes + 1} of {opts.max_attempts})")
        job = _rerun(runtime, record)
        if await job.save():
            log.info("task %s: running %r again here", record.task_id, record.tool)
        return job.shown
    stopped = iso_timestamp(record.lease_until or now)
    if record.cancel_requested:
        record.status, record.status_message = "cancelled", "cancelled by tasks/cancel"
    else:
        message = (f"the server process running this task stopped before it finished (no "
                   f"heartbeat since {stopped}); its tool {record.tool!r} was not resumed")
        record.status, record.status_message = "failed", message
        record.error = InternalError(message).to_error()
    record.input_requests = {}
    record.updated_at = runtime.clock()
    if await runtime.save(record):
        log.warning("task %s: %s", record.task_id, record.status_message)
    return record


def _rerun(runtime: TaskKeeper, record: TaskRecord) -> Job:
    """Start a resumable task's tool again in this process, as a task from the first line,
    with every answer given so far (so no key is asked again)."""
    tool = runtime.server.tools[record.tool]
    ctx = runtime.resumed_context(record)
    params = {"name": record.tool, "arguments": record.arguments or {}}
    rnd = TaskRound(runtime.server.sealer, ctx.method, tool.name, params["arguments"], params,
                    ctx.principal)
    job = runtime.job(record, rnd)
    rnd.detach(job.park)
    rnd.remember(record.answers)
    rnd.created()
    if tool.signature.injected:
        ctx.ask_through(rnd)
    ctx.route_notifications(job.notify)
    job.task = asyncio.ensure_future(run_handler(tool, params, ctx))
    runtime.jobs[record.task_id] = job
    runtime.started(job)
    return job
