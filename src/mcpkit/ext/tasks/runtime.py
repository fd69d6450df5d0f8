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

from mcpkit.errors import (
    InvalidParamsError,
    MissingRequiredClientCapabilityError,
    ServiceUnavailableError,
)
from mcpkit.ext.tasks.controls import follow_controls
from mcpkit.ext.tasks.drain import drain
from mcpkit.ext.tasks.keeper import TaskKeeper
from mcpkit.ext.tasks.options import is_resumable, task_mode
from mcpkit.ext.tasks.progress import ProgressWatch
from mcpkit.ext.tasks.records import TaskRecord
from mcpkit.ext.tasks.shares import check_capacity, quota, refusal
from mcpkit.ext.tasks.task_round import TaskRound
from mcpkit.ext.tasks.upkeep import recover, run_upkeep
from mcpkit.ext.tasks.wire import (
    TERMINAL,
    create_task_result,
    task_id_param,
)
from mcpkit.protocol.extensions import TASKS, declared, requirement
from mcpkit.server.extending import (
    Context,
    InputRequired,
    Tool,
    principal_key,
    run_handler,
    run_tool,
)

if TYPE_CHECKING:
    pass

__all__ = [
    "TaskRuntime",
    "new_task_id",
]

log = logging.getLogger("mcpkit.tasks")

def new_task_id() -> str:
    """An unguessable task id: 192 random bits (TASK-17), in lowercase hex so that it never
    starts with `-` (a shell's `mcpkit task get URL ID` would read that as an option) and a
    terminal selects it as one word."""
    return secrets.token_hex(24)


class TaskRuntime(TaskKeeper):
    """The Tasks extension's runtime for one server: its tool-call interceptor (`call`) and a
    service its transports start and drain (`start`, `drain`)."""

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
            if task_mode(tool) == "required":
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
        if task_mode(tool) == "optional":
            return work.result()  # re-raises an RPCError as the call's error
        record = self._record(tool, params, ctx)
        self.conclude(record, work, None)
        await self.within_share(record)
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
        if is_resumable(tool):  # a run after a crash must not ask again what the round was told
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
            arguments=arguments if is_resumable(tool) and isinstance(arguments, dict) else None,
            status="working", created_at=now, updated_at=now, ttl_ms=self.options.ttl_ms,
            poll_interval_ms=self.options.poll_interval_ms, resumable=is_resumable(tool),
            lease_owner=self.owner, lease_until=now + self.options.lease_s,
            capabilities=dict(ctx.meta.client_capabilities))

    def ensure_upkeep(self) -> None:
        """Start the heartbeat and sweeper of this process, and its listener for other
        replicas' task controls, once, in the running loop."""
        if self.upkeep is None or self.upkeep.done():
            self.upkeep = asyncio.ensure_future(run_upkeep(self))
        if self.controls is None:
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
        await drain(self, grace_s)

    # -- what the task methods read ----------------------------------------------------------

    async def find(self, params: dict[str, Any], ctx: Context) -> TaskRecord:
        """The caller's task named by `params.taskId`; -32602 for an id that is unknown,
        expired or another principal's, in the same words for all three (TASK-17)."""
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
            record = await recover(self, record)
        return record
