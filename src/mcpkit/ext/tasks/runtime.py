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
way to declare it, a plain call of either. Each task is bound to its creator
(`owner`), has an id of 192 random bits, a lease its heartbeats renew, and a TTL after which it
is deleted; `mcpkit.ext.tasks.upkeep` does the heartbeats and the sweeping, and
`mcpkit.ext.tasks.controls` brings a cancel or an answer served by another replica here at once.
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
)
from mcpkit.ext.tasks.jobs import Job
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
from mcpkit.server.context import Context
from mcpkit.server.mrtr import InputRequired, principal_key
from mcpkit.server.subscriptions import Change
from mcpkit.server.task_runner import TaskOptions
from mcpkit.server.tools import Tool, run_handler, run_tool
from mcpkit.store.tasks import TaskRecord, TaskStore
from mcpkit.types.constants import MODERN_VERSION, Method

if TYPE_CHECKING:
    from mcpkit.server.server import Server

__all__ = ["TaskRuntime", "new_task_id"]

log = logging.getLogger("mcpkit.tasks")

TASK_CHANGE = "task"
"""The `Change.kind` announcing that a task changed (its id in `Change.uri`)."""


def new_task_id() -> str:
    """An unguessable task id: 192 random bits (TASK-17), in lowercase hex so that it never
    starts with `-` (a shell's `mcpkit task get URL ID` would read that as an option) and a
    terminal selects it as one word."""
    return secrets.token_hex(24)


class _ProgressWatch:
    """Keeps the last progress report a handler makes before its call becomes a task, so the
    task starts with it as its statusMessage; forwards the reports the request asked for."""

    def __init__(self, ctx: Context) -> None:
        from mcpkit.ext.tasks.jobs import progress_message

        self.last: str | None = None
        meta, forward = ctx.meta, ctx._notify
        asked = meta.progress_token is not None

        async def relay(message: dict[str, Any]) -> None:
            if message.get("method") == Method.PROGRESS:
                self.last = progress_message(message.get("params") or {}) or self.last
                if not asked:
                    return
            if forward is not None:
                await forward(message)

        ctx._notify = relay
        if not asked:  # progress is the task's to keep, asked for or not
            ctx.meta = RequestMeta(meta.protocol_version, meta.client_capabilities,
                                   meta.client_info, meta.log_level, "task-progress", meta.raw)


class TaskRuntime:
    """The Tasks extension's runtime for one server (`Server.task_runner`)."""

    def __init__(self, server: Server, options: TaskOptions | None = None) -> None:
        self.server = server
        self.options = options or server.options.tasks
        self.clock = server.options.clock
        self.jobs: dict[str, Job] = {}
        """The tasks this process runs, by id."""
        self.owner = secrets.token_hex(8)
        """This process's name on the leases it holds."""
        self._store: TaskStore | None = None
        self._starting = 0
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
        self.ensure_upkeep()
        limit = self.options.max_running
        if len(self.jobs) + self._starting >= limit:
            raise InternalError(
                f"tool {tool.name!r}: this server is already running its limit of {limit} tasks "
                "(TaskOptions.max_running); try again when one has finished",
                {"maxRunning": limit})
        rnd = TaskRound(self.server.sealer, ctx.method, tool.name, params.get("arguments"),
                        params, ctx.principal)
        if tool.signature.injected:
            ctx._round = rnd
        watch = _ProgressWatch(ctx)
        self._starting += 1
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
            self._starting -= 1

    async def _settled(self, tool: Tool, params: dict[str, Any], ctx: Context, rnd: TaskRound,
                       work: asyncio.Future[dict[str, Any]]) -> dict[str, Any]:
        """The handler ended within the budget: input before a task, or its answer."""
        exc = work.exception()
        if isinstance(exc, InputRequired):
            return rnd.input_required()
        if tool.task == "optional":
            return work.result()  # re-raises an RPCError as the call's error
        record = self._record(tool, params, ctx)
        self._conclude(record, work)
        await self.store.create(record)
        return create_task_result(self.task_of(record))

    async def _become_task(self, tool: Tool, params: dict[str, Any], ctx: Context,
                           rnd: TaskRound, work: asyncio.Future[dict[str, Any]],
                           watch: _ProgressWatch) -> dict[str, Any]:
        record = self._record(tool, params, ctx)
        record.status_message = watch.last
        job = Job(record, self.save, rnd)
        job.task = work
        rnd.detach(job.park)
        ctx._notify = job.notify
        self.jobs[record.task_id] = job
        try:
            await self.store.create(record)
        except BaseException:
            del self.jobs[record.task_id]
            work.cancel()
            raise
        rnd.created()
        job.supervisor = asyncio.ensure_future(self._supervise(job))
        return create_task_result(self.task_of(record))

    def _record(self, tool: Tool, params: dict[str, Any], ctx: Context) -> TaskRecord:
        now = self.clock()
        arguments = params.get("arguments")
        return TaskRecord(
            task_id=new_task_id(), owner=principal_key(ctx.principal), tool=tool.name,
            arguments=arguments if isinstance(arguments, dict) else None, status="working",
            created_at=now, updated_at=now, ttl_ms=self.options.ttl_ms,
            poll_interval_ms=self.options.poll_interval_ms, resumable=tool.resumable,
            lease_owner=self.owner, lease_until=now + self.options.lease_s,
            capabilities=dict(ctx.meta.client_capabilities))

    # -- running and ending ------------------------------------------------------------------

    async def _supervise(self, job: Job) -> None:
        """Wait for the handler, then store how it ended; the job leaves the running set."""
        work = job.task
        assert work is not None
        try:
            await asyncio.wait({work})
        except asyncio.CancelledError:
            work.cancel()  # this process is stopping: the lease lapses, the sweeper decides
            self.jobs.pop(job.record.task_id, None)
            raise
        record = job.record
        try:
            if work.cancelled() and not record.cancel_requested:
                return  # this process is stopping: the lease lapses and the sweeper decides
            self._conclude(record, work)
            await self.save(record)
        except Exception:
            log.exception("task %s: its end could not be stored", record.task_id)
        finally:
            self.jobs.pop(record.task_id, None)

    def _conclude(self, record: TaskRecord, work: asyncio.Future[dict[str, Any]]) -> None:
        """Set the record's terminal state from how the handler ended."""
        record.input_requests = {}
        record.lease_owner = record.lease_until = None
        if work.cancelled():
            self._end(record, "cancelled", "cancelled by tasks/cancel")
            return
        exc = work.exception()
        if isinstance(exc, RPCError):
            record.error = exc.to_error()
            self._end(record, "failed", exc.message)
            return
        if exc is not None:
            record.error = InternalError(f"tool {record.tool!r} stopped: "
                                         f"{type(exc).__name__}").to_error()
            self._end(record, "failed", record.error["message"])
            return
        result = dict(work.result())
        meta = result.get("_meta")
        if isinstance(meta, dict) and RELATED_TASK_KEY in meta:  # TASK-18: never inlined
            result["_meta"] = {k: v for k, v in meta.items() if k != RELATED_TASK_KEY}
        size = len(orjson.dumps(result))
        limit = self.options.max_result_bytes
        if size > limit:
            message = (f"tool {record.tool!r} returned a result of {size} bytes, over the "
                       f"limit of {limit} a task may store (TaskOptions.max_result_bytes)")
            record.error = InternalError(message, {"resultBytes": size,
                                                   "maxResultBytes": limit}).to_error()
            self._end(record, "failed", message)
            return
        record.result = result
        self._end(record, "completed", None)

    def _end(self, record: TaskRecord, status: TaskStatus, message: str | None) -> None:
        record.status = status
        record.status_message = message
        record.updated_at = self.clock()

    async def save(self, record: TaskRecord) -> None:
        """Write a change of a task and announce it to `notifications/tasks` listeners."""
        record.updated_at = self.clock()
        await self.store.save(record)
        self.server.broker.publish(Change(TASK_CHANGE, record.task_id))

    def ensure_upkeep(self) -> None:
        """Start the heartbeat and sweeper of this process, and its listener for other
        replicas' task controls, once, in the running loop."""
        if self.upkeep is None or self.upkeep.done():
            from mcpkit.ext.tasks.upkeep import run_upkeep

            self.upkeep = asyncio.ensure_future(run_upkeep(self))
        if self.controls is None:
            from mcpkit.ext.tasks.controls import follow_controls

            self.controls = asyncio.ensure_future(follow_controls(self))

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
        job = self.jobs.get(task_id)
        record = job.record if job is not None else await self.store.get(task_id)
        if record is None or record.owner != principal_key(ctx.principal) or record.expired(
                self.clock()):
            raise InvalidParamsError(f"{ctx.method}: no task {task_id!r}", {"taskId": task_id})
        if job is None and record.status not in TERMINAL and record.lease_until is not None \
                and record.lease_until < self.clock():
            from mcpkit.ext.tasks.upkeep import recover

            record = await recover(self, record)
        return record

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
