"""`TaskRuntime`: how a `task=` tool's call becomes a task, runs, and ends (TASK-3..12).

A call from a request that declared the extension starts its handler in the request, as any
call does, under a `TaskRound`. Then the first of these decides:

- the handler asks for input the request lacks: the answer is the round's
  `InputRequiredResult`, with no task (MRTR before the task, TASK-9);
- it finishes within `TaskOptions.sync_budget_s`: an optional tool answers its result, a
  required one a task created already finished;
- the budget runs out: the task is written to the store (durably, before the answer: TASK-7)
  and the answer is its `CreateTaskResult`; the handler goes on in this process, its progress
  becoming the task's statusMessage and its asks parking the task in `input_required`.

The same handler serves every path; a modern caller that did not declare the extension gets a
plain call (an optional tool) or -32021 (a required one), and a 2025-11-25 client, which has no
way to declare it, a plain call of either. Each task is bound to its creator (`owner`), has an
id of 192 random bits, a lease its heartbeats renew, and a TTL after which it is deleted; a
caller's share of tasks is bounded (`mcpkit.ext.tasks.shares`). `mcpkit.ext.tasks.upkeep`
does the heartbeats and the sweeping, `mcpkit.ext.tasks.controls` brings a cancel or an answer
served by another replica here at once, and `mcpkit.ext.tasks.drain` hands the tasks back when
the server stops.

A handler runs only while this process holds its task's lease: when a save or a heartbeat
finds the lease gone (another process took the task for dead), or the lease runs out before
a heartbeat could renew it, the handler is cancelled rather than finished beside the other.
"""

from __future__ import annotations

import asyncio
import logging
import secrets
from typing import TYPE_CHECKING, Any

import orjson

from mcpkit.errors import (
    InternalError,
    InvalidParamsError,
    MissingRequiredClientCapabilityError,
    RPCError,
    ServiceUnavailableError,
)
from mcpkit.ext.tasks.jobs import Job, Stop, answered
from mcpkit.ext.tasks.progress import ProgressWatch
from mcpkit.ext.tasks.records import TaskRecord, TaskStore
from mcpkit.ext.tasks.shares import check_capacity, quota, refusal, result_over_share
from mcpkit.ext.tasks.stores import store_for
from mcpkit.ext.tasks.task_round import TaskRound
from mcpkit.protocol.envelope import RequestMeta
from mcpkit.protocol.extensions import TASKS, declared, requirement
from mcpkit.protocol.tasks import (
    RELATED_TASK_KEY,
    TERMINAL,
    Task,
    TaskStatus,
    create_task_result,
    detailed_task,
    iso_timestamp,
)
from mcpkit.server.extending import (
    Change,
    Context,
    InputRequired,
    Tool,
    principal_key,
    run_handler,
    run_tool,
)
from mcpkit.server.task_runner import TaskOptions
from mcpkit.types.constants import MODERN_VERSION

if TYPE_CHECKING:
    from mcpkit.server.server import Server

__all__ = ["TaskRuntime", "new_task_id"]

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


def new_task_id() -> str:
    """An unguessable task id: 192 random bits (TASK-17), in lowercase hex so that it never
    starts with `-` (a shell's `mcpkit task get URL ID` would read that as an option) and a
    terminal selects it as one word."""
    return secrets.token_hex(24)


class TaskRuntime:
    """The Tasks extension's runtime for one server: its tool-call interceptor (`call`) and a
    service its transports start and drain (`start`, `drain`)."""

    def __init__(self, server: Server, options: TaskOptions | None = None) -> None:
        self.server = server
        self.options = options or server.options.tasks
        self.clock = server.options.clock
        self.jobs: dict[str, Job] = {}
        """The tasks this process runs, by id."""
        self.owner = secrets.token_hex(8)
        """This process's name on the leases it holds."""
        self.draining = False
        """The server is stopping: no task starts, none is taken over (`drain`)."""
        self._store: TaskStore | None = None
        self.starting = 0
        """Calls running their tool within the synchronous budget (counted in `max_running`)."""
        self.upkeep: asyncio.Task[None] | None = None
        self.controls: asyncio.Task[None] | None = None
        """Acts on the cancel and update controls other replicas publish (a shared broker)."""

    @property
    def store(self) -> TaskStore:
        if self._store is None:
            self._store = store_for(self.options.store, self.clock,
                                    getattr(self.server.sealer, "backend", None))
        return self._store

    # -- tools/call --------------------------------------------------------------------------

    def call(self, tool: Tool, params: dict[str, Any], ctx: Context) -> Any:
        """The interceptor of `task=` tools' calls (`ToolInterceptor`): the tool's own result
        (synchronous), an `InputRequiredResult` (input needed before a task exists, TASK-9),
        or a `CreateTaskResult`."""
        if ctx.in_request_only:
            # A 2025-11-25 client cannot declare the extension, so even a required tool is
            # served to it as a plain call in the request: its progress goes on the request's
            # stream and its asks are the session's own elicitation/create requests.
            return run_tool(tool, params, ctx)
        if declared(ctx.meta.client_capabilities, TASKS) is None:
            if tool.task == "required":
                raise MissingRequiredClientCapabilityError(
                    requirement(TASKS),
                    f"tool {tool.name!r} runs only as a task: declare the extension {TASKS} "
                    "in _meta io.modelcontextprotocol/clientCapabilities.extensions")
            return run_tool(tool, params, ctx)
        return self._start(tool, params, ctx)

    async def _start(self, tool: Tool, params: dict[str, Any], ctx: Context) -> dict[str, Any]:
        if self.draining:
            raise ServiceUnavailableError(
                f"tool {tool.name!r}: this server is stopping and starts no task; try again "
                "(another replica, or this server once restarted, serves it)", "stopping", 1)
        self.ensure_upkeep()
        await check_capacity(self, tool.name, principal_key(ctx.principal))
        rnd = TaskRound(self.server.sealer, ctx.method, tool.name, params.get("arguments"),
                        params, ctx.principal)
        if tool.signature.injected:
            ctx.ask_through(rnd)
        watch = ProgressWatch(ctx)
        self.starting += 1
        try:
            work = asyncio.ensure_future(run_handler(tool, params, ctx))
            try:
                await asyncio.wait({work}, timeout=self.options.sync_budget_s)
            except asyncio.CancelledError:
                work.cancel()
                raise
            if work.done():
                return await self._settled(tool, params, ctx, rnd, work)
            return await self._become_task(tool, params, ctx, rnd, work, watch)
        finally:
            self.starting -= 1

    async def _settled(self, tool: Tool, params: dict[str, Any], ctx: Context, rnd: TaskRound,
                       work: asyncio.Future[dict[str, Any]]) -> dict[str, Any]:
        """The handler ended within the budget: input before a task, or its answer."""
        exc = work.exception()
        if isinstance(exc, InputRequired):
            return rnd.input_required()
        if tool.task == "optional":
            return work.result()  # re-raises an RPCError as the call's error
        record = self._record(tool, params, ctx)
        self._conclude(record, work, None)
        await self._within_share(record)
        full = await self.store.create(record, quota(self.options))
        if full is not None:
            raise refusal(self, tool.name, full)
        return create_task_result(self.task_of(record))

    async def _become_task(self, tool: Tool, params: dict[str, Any], ctx: Context,
                           rnd: TaskRound, work: asyncio.Future[dict[str, Any]],
                           watch: ProgressWatch) -> dict[str, Any]:
        record = self._record(tool, params, ctx)
        record.status_message = watch.last
        job = self.job(record, rnd)
        job.task = work
        rnd.detach(job.park)
        if tool.resumable:  # a run after a crash must not ask again what the round was told
            record.answers = dict(rnd.known)
            job.shown.answers = dict(rnd.known)
        ctx.route_notifications(job.notify)
        async with job.writing():  # the handler's first saves wait for the task to exist
            try:
                full = await self.store.create(record, quota(self.options))
            except BaseException:
                work.cancel()
                raise
            if full is not None:  # another replica took the share's last place meanwhile
                work.cancel()
                raise refusal(self, tool.name, full)
            self.jobs[record.task_id] = job
        rnd.created()
        self.started(job)
        return create_task_result(self.task_of(record))

    def _record(self, tool: Tool, params: dict[str, Any], ctx: Context) -> TaskRecord:
        now = self.clock()
        arguments = params.get("arguments")
        return TaskRecord(
            task_id=new_task_id(), owner=principal_key(ctx.principal), tool=tool.name,
            arguments=arguments if tool.resumable and isinstance(arguments, dict) else None,
            status="working", created_at=now, updated_at=now, ttl_ms=self.options.ttl_ms,
            poll_interval_ms=self.options.poll_interval_ms, resumable=tool.resumable,
            lease_owner=self.owner, lease_until=now + self.options.lease_s,
            capabilities=dict(ctx.meta.client_capabilities))

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
            from mcpkit.ext.tasks.drain import hand_back

            await hand_back(self, job)
            return
        self._conclude(record, work, why, job.stop_message)
        await self._within_share(record)
        if not await job.save():
            log.warning("task %s: its end (%s) was not stored: another process runs it now",
                        record.task_id, record.status)

    async def _within_share(self, record: TaskRecord) -> None:
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

    def _conclude(self, record: TaskRecord, work: asyncio.Future[dict[str, Any]],
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

    def ensure_upkeep(self) -> None:
        """Start the heartbeat and sweeper of this process, and its listener for other
        replicas' task controls, once, in the running loop."""
        if self.upkeep is None or self.upkeep.done():
            from mcpkit.ext.tasks.upkeep import run_upkeep

            self.upkeep = asyncio.ensure_future(run_upkeep(self))
        if self.controls is None:
            from mcpkit.ext.tasks.controls import follow_controls

            self.controls = asyncio.ensure_future(follow_controls(self))

    def start(self) -> None:
        """`Service.start`: the upkeep and the controls run from now on, so tasks another
        process left (handed back, or whose process died) are taken up even before a task
        request reaches this one."""
        self.ensure_upkeep()

    async def drain(self, grace_s: float) -> None:
        """`Service.drain`: start no task, hand back at once what another process can resume,
        give the rest `grace_s` seconds and end what is left with a status that says why
        (`mcpkit.ext.tasks.drain`)."""
        from mcpkit.ext.tasks.drain import drain

        await drain(self, grace_s)

    # -- what the task methods read ----------------------------------------------------------

    async def find(self, params: dict[str, Any], ctx: Context) -> TaskRecord:
        """The caller's task named by `params.taskId`; -32602 for an id that is unknown,
        expired or another principal's, in the same words for all three (TASK-17)."""
        from mcpkit.protocol.tasks import task_id_param

        try:
            task_id = task_id_param(params)
        except ValueError as exc:
            raise InvalidParamsError(f"{ctx.method}: {exc}") from None
        self.ensure_upkeep()
        record = await self.current(task_id)
        if record is None or record.owner != principal_key(ctx.principal) or record.expired(
                self.clock()):
            raise InvalidParamsError(f"{ctx.method}: no task {task_id!r}", {"taskId": task_id})
        if task_id not in self.jobs and record.status not in TERMINAL \
                and record.lease_until is not None and record.lease_until < self.clock() \
                and not self.draining:
            from mcpkit.ext.tasks.upkeep import recover

            record = await recover(self, record)
        return record

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
