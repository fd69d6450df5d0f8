"""`TaskKeeper`: the tasks one process keeps, whatever started them.

It holds the state the other modules of the extension share: the store, the jobs this process
runs and its name on their leases, and what runs a job to its end (its supervision and lease
fence, the terminal state stored from how its handler ended, its hand-back by a stopping
server). It reads the running jobs and the store for the task methods too (`current`,
`detailed`). The runtime (`mcpkit.ext.tasks.runtime`) adds how a call becomes a task; the
upkeep, the controls and the drain act on a keeper. So every module of the extension imports
this one and none of them the runtime: the extension's imports run one way.
"""

from __future__ import annotations

import asyncio
import logging
import secrets
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

import orjson

from mcpkit.errors import InternalError, RPCError
from mcpkit.ext.tasks.bus import announce
from mcpkit.ext.tasks.jobs import Job, Stop, answered
from mcpkit.ext.tasks.options import TaskOptions, options_in
from mcpkit.ext.tasks.records import TaskRecord, TaskStore
from mcpkit.ext.tasks.shares import Room, result_over_share
from mcpkit.ext.tasks.stores import store_for
from mcpkit.ext.tasks.wire import RELATED_TASK_KEY, Task, TaskStatus, detailed_task, iso_timestamp
from mcpkit.protocol.envelope import RequestMeta
from mcpkit.server.extending import Change, Context
from mcpkit.types.constants import MODERN_VERSION

if TYPE_CHECKING:
    from mcpkit.ext.tasks.task_round import TaskRound
    from mcpkit.server.server import Server

__all__ = [
    "TASK_CHANGE",
    "TaskKeeper",
]

log = logging.getLogger("mcpkit.tasks")

TASK_CHANGE = "task"
"""The `Change.kind` announcing that a task changed (its id in `Change.uri`)."""

_ENDINGS: dict[Stop, tuple[TaskStatus, str]] = {
    "cancel": ("cancelled", "cancelled by tasks/cancel"),
    "timeout": ("cancelled", "cancelled: no answer came in time"),
    "shutdown": ("failed", "the server process running this task was shut down before it "
                           "finished"),
}
"""How a stop that the task outlives ends it (the others leave no ending of this process's)."""



class TaskKeeper:
    """The tasks of one server in this process: the store, the running jobs, their ends."""

    def __init__(self, server: Server, options: TaskOptions | None = None) -> None:
        self.server = server
        self._options = options
        self.jobs: dict[str, Job] = {}
        """The tasks this process runs, by id."""
        self.owner = secrets.token_hex(8)
        """This process's name on the leases it holds."""
        self.draining = False
        """The server is stopping: no task starts, none is taken over (`drain`)."""
        self._store: TaskStore | None = None
        self.room = Room()
        """Places in the callers' shares a recent read found free (`shares.Room`)."""
        self.starting = 0
        """Calls running their tool within the synchronous budget (counted in `max_running`)."""
        self.upkeep: asyncio.Task[None] | None = None
        self.controls: asyncio.Task[None] | None = None
        """Acts on the cancel and update controls other replicas publish (a shared broker)."""

    @property
    def options(self) -> TaskOptions:
        """The options given, else the server's (`ServerOptions.extensions`) as they are now: read on
        each use, since `mcpkit run`'s settings replace the server's options after its first
        task tool installed this."""
        return self._options if self._options is not None else options_in(self.server.options)

    @property
    def clock(self) -> Callable[[], float]:
        return self.server.options.clock

    @property
    def store(self) -> TaskStore:
        if self._store is None:
            self._store = store_for(self.options.store, self.clock,
                                    getattr(self.server.sealer, "backend", None))
        return self._store

    # -- running and ending ------------------------------------------------------------------

    def job(self, record: TaskRecord, rnd: TaskRound | None) -> Job:
        """A job for a task this process is about to run (its lease held)."""

        async def stored() -> dict[str, Any]:
            found = await self.store.get(record.task_id)
            return {} if found is None else found.answers

        return Job(record, self.save, stored, rnd, self.clock)

    def started(self, job: Job) -> None:
        """Supervise a job whose handler runs, and fence it with its lease: the one written
        before the store took the task (created or claimed), so the time that write took
        counts against it as it does for every other replica reading the lease."""
        until = job.record.lease_until
        self.fence(job, self.options.lease_s if until is None else until - self.clock())
        job.supervisor = asyncio.ensure_future(self._supervise(job))

    def fence(self, job: Job, left_s: float) -> None:
        """Stop `job`'s handler a little before its lease, `left_s` from now, ends, unless a
        heartbeat renews it first: when the store cannot be reached, no other process may
        take the task over while this one still runs it."""
        if job.fence is not None:
            job.fence.cancel()
        margin = min(1.0, 0.1 * self.options.lease_s)
        job.fence = asyncio.get_running_loop().call_later(
            max(0.0, left_s - margin), job.stop, "lost")

    async def _supervise(self, job: Job) -> None:
        """Wait for the handler, then store how it ended; the job leaves the running set."""
        work = job.task
        assert work is not None
        try:
            await asyncio.wait({work})
        except asyncio.CancelledError:
            work.cancel()  # this process is stopping: the lease lapses, the sweeper decides
            self._forget(job)
            raise
        try:
            await self._end_job(job, work)
        except Exception:
            log.exception("task %s: its end could not be stored", job.record.task_id)
        finally:
            self._forget(job)

    async def _end_job(self, job: Job, work: asyncio.Future[dict[str, Any]]) -> None:
        record, why = job.record, job.stopped
        if why in ("lost", "expired") or (work.cancelled() and why is None):
            return  # another process holds it, or it is gone: nothing of this run is stored
        if why == "handback":
            await self.hand_back(job)
            return
        self.conclude(record, work, why, job.stop_message)
        await self.within_share(record)
        if not await job.save():
            log.warning("task %s: its end (%s) was not stored: another process runs it now",
                        record.task_id, record.status)

    async def hand_back(self, job: Job) -> None:
        """Store a stopped resumable task with its lease ended, and say so to the replicas
        (`mcpkit.ext.tasks.drain`)."""
        record = job.record
        record.handoffs += 1
        record.handed_back = True
        record.status_message = "handed back by a stopping server process; resuming elsewhere"
        record.updated_at = self.clock()
        async with job.writing():
            released = await self.store.release(record, self.owner)
        if not released:
            log.warning("task %s: not handed back: another process holds it now",
                        record.task_id)
            return
        self.server.broker.publish(Change(TASK_CHANGE, record.task_id))
        await announce(self.server, record.task_id, "release")
        log.info("task %s: handed back for another server process to resume", record.task_id)

    async def within_share(self, record: TaskRecord) -> None:
        """A result that would take its caller's stored tasks over their bytes is stored as
        the failure that says so instead."""
        if record.status == "completed" and record.result is not None:
            problem = await result_over_share(self, record.owner,
                                              len(orjson.dumps(record.result)))
            if problem is not None:
                self._fail(record, f"tool {record.tool!r}: {problem}", None)

    def _forget(self, job: Job) -> None:
        if job.fence is not None:
            job.fence.cancel()
            job.fence = None
        if self.jobs.get(job.record.task_id) is job:
            del self.jobs[job.record.task_id]

    def conclude(self, record: TaskRecord, work: asyncio.Future[dict[str, Any]],
                  why: Stop | None, message: str | None = None) -> None:
        """Set the record's terminal state from how the handler ended (nothing will run it
        again: its arguments and answers go)."""
        record.input_requests, record.arguments, record.answers = {}, None, {}
        record.lease_owner = record.lease_until = None
        if why is not None and why in _ENDINGS and work.cancelled():
            status, default = _ENDINGS[why]
            if status == "failed":
                self._fail(record, message or default, {"stopped": why})
            else:
                self._end(record, status, message or default)
            return
        exc = work.exception()
        if isinstance(exc, RPCError):
            record.error = exc.to_error()
            self._end(record, "failed", exc.message)
            return
        if exc is not None:
            self._fail(record, f"tool {record.tool!r} stopped: {type(exc).__name__}", None)
            return
        result = dict(work.result())
        meta = result.get("_meta")
        if isinstance(meta, dict) and RELATED_TASK_KEY in meta:  # TASK-18: never inlined
            result["_meta"] = {k: v for k, v in meta.items() if k != RELATED_TASK_KEY}
        size = len(orjson.dumps(result))
        limit = self.options.max_result_bytes
        if size > limit:
            self._fail(record, f"tool {record.tool!r} returned a result of {size} bytes, over "
                       f"the limit of {limit} a task may store (TaskOptions.max_result_bytes)",
                       {"resultBytes": size, "maxResultBytes": limit})
            return
        record.result = result
        self._end(record, "completed", None)

    def _fail(self, record: TaskRecord, message: str, data: dict[str, Any] | None) -> None:
        record.result = None
        record.error = InternalError(message, data or None).to_error()
        self._end(record, "failed", message)

    def _end(self, record: TaskRecord, status: TaskStatus, message: str | None) -> None:
        record.status = status
        record.status_message = message
        record.updated_at = self.clock()

    async def save(self, record: TaskRecord) -> bool:
        """Write a change of a task this process holds and announce it to
        `notifications/tasks` listeners; False when the store refused it (the lease is
        another's, or the task ended or went)."""
        if not await self.store.save(record, self.owner):
            return False
        self.server.broker.publish(Change(TASK_CHANGE, record.task_id))
        return True

    # -- what the task methods read ----------------------------------------------------------

    async def current(self, task_id: str) -> TaskRecord | None:
        """The task as its client is to see it now (None: unknown or expired): the state the
        running job last stored, or the store's, with the answers stored for it taken as given
        (`jobs.answered`), so a `tasks/update` acknowledged by any replica shows at once."""
        job = self.jobs.get(task_id)
        if job is None:
            record = await self.store.get(task_id)
            return None if record is None else answered(record, record.answers)
        if job.shown.status != "input_required":
            return job.shown
        stored = await self.store.get(task_id)  # what another replica stored meanwhile
        return job.shown if stored is None else answered(job.shown, stored.answers)

    def task_of(self, record: TaskRecord) -> Task:
        return Task(
            task_id=record.task_id, status=record.status,  # type: ignore[arg-type]
            created_at=iso_timestamp(record.created_at),
            last_updated_at=iso_timestamp(record.updated_at), ttl_ms=record.ttl_ms,
            poll_interval_ms=record.poll_interval_ms, status_message=record.status_message)

    def detailed(self, record: TaskRecord) -> dict[str, Any]:
        """The DetailedTask of a record (TASK-8)."""
        return detailed_task(self.task_of(record), result=record.result, error=record.error,
                             input_requests=record.input_requests)

    def resumed_context(self, record: TaskRecord) -> Context:
        """The Context a resumable task runs again under: its creator and capabilities."""
        meta = RequestMeta(MODERN_VERSION, record.capabilities, None, None, record.task_id)
        return Context(self.server, "tools/call", None, meta, None, record.owner)
