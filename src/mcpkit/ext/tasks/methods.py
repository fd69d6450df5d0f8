"""`tasks/get`, `tasks/update`, `tasks/cancel`, and the `taskIds` of `subscriptions/listen`.

Each is added with `Server.add_method(..., extension=TASKS)`, so a request that did not
declare the extension gets -32021 before reaching them (TASK-14). Every one finds the task
through `TaskRuntime.find`: an unknown id, an expired one and another principal's are the same
-32602. `tasks/result` and `tasks/list` are never added, so they answer -32601. An update or
a cancel is stored before it is acknowledged, then acted on here or announced to the replica
running the task (`mcpkit.ext.tasks.controls`).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from mcpkit.errors import InvalidParamsError, MissingRequiredClientCapabilityError
from mcpkit.ext.tasks.bus import announce
from mcpkit.ext.tasks.upkeep import pick_up
from mcpkit.ext.tasks.wire import (
    TERMINAL,
    TaskMethod,
    acknowledgement,
    get_task_result,
    input_responses_param,
    listen_task_ids,
    task_notification_params,
)
from mcpkit.protocol.codec import RequestId, notification_message
from mcpkit.protocol.extensions import TASKS, declared, requirement
from mcpkit.server.extending import Change, Context, principal_key
from mcpkit.types.constants import SUBSCRIPTION_ID_KEY

if TYPE_CHECKING:
    from mcpkit.ext.tasks.runtime import TaskRuntime

__all__ = [
    "TaskMethods",
    "TaskStream",
]


class TaskMethods:
    """The three methods and the listen part, over one runtime."""

    def __init__(self, runtime: TaskRuntime) -> None:
        self.runtime = runtime

    async def get(self, params: dict[str, Any], ctx: Context) -> dict[str, Any]:
        record = await self.runtime.find(params, ctx)
        return get_task_result(self.runtime.detailed(record))

    async def update(self, params: dict[str, Any], ctx: Context) -> dict[str, Any]:
        try:
            responses = input_responses_param(params)
        except ValueError as exc:
            raise InvalidParamsError(f"tasks/update: {exc}") from None
        runtime = self.runtime
        record = await runtime.find(params, ctx)
        if record.status in TERMINAL:
            return acknowledgement()
        # Outstanding: what the task asks now, and what it asked and was not answered before
        # its process stopped (its run again asks the same keys); answers to any other key are
        # ignored (TASK-10). They are stored before the acknowledgement, so none is lost.
        asked = record.input_requests.keys() | set(record.asked)
        pending = asked - record.answers.keys()
        outstanding = {k: v for k, v in responses.items() if k in pending}
        if outstanding:
            await runtime.store.put_answers(record.task_id, outstanding)
        job = runtime.jobs.get(record.task_id)
        if job is not None:
            # Here, the runner takes what is stored now; that includes a key another replica
            # stored first, whose announcement this one may not have acted on yet.
            if outstanding or responses.keys() & asked:
                await pick_up(runtime, job)
        elif outstanding:  # running in another process: announced to it
            await announce(runtime.server, record.task_id, "update")
        return acknowledgement()

    async def cancel(self, params: dict[str, Any], ctx: Context) -> dict[str, Any]:
        runtime = self.runtime
        record = await runtime.find(params, ctx)
        if record.status in TERMINAL:
            return acknowledgement()  # idempotent on a finished task (TASK-11)
        await runtime.store.request_cancel(record.task_id)
        job = runtime.jobs.get(record.task_id)
        if job is not None:
            job.stop("cancel")
        else:  # running in another process: announced once the request is stored
            await announce(runtime.server, record.task_id, "cancel")
        return acknowledgement()

    async def listen(self, notifications: dict[str, Any], ctx: Context) -> TaskStream | None:
        """The `notifications.taskIds` part of a listen request (TASK-13)."""
        try:
            wanted = listen_task_ids(notifications)
        except ValueError as exc:
            raise InvalidParamsError(f"subscriptions/listen: {exc}") from None
        if wanted is None:
            return None
        if declared(ctx.meta.client_capabilities, TASKS) is None:
            raise MissingRequiredClientCapabilityError(
                requirement(TASKS), f"subscriptions/listen: notifications.taskIds belongs to "
                f"the extension {TASKS}, which this request did not declare")
        owner = principal_key(ctx.principal)
        accepted = []
        for task_id in wanted:
            record = await self.runtime.current(task_id)
            if record is not None and record.owner == owner:
                accepted.append(task_id)  # another principal's id is left out, unnamed
        return TaskStream(self.runtime, frozenset(accepted), owner)


class TaskStream:
    """One listen stream's task notifications: the full DetailedTask on each change."""

    def __init__(self, runtime: TaskRuntime, task_ids: frozenset[str], owner: str | None) -> None:
        self.runtime = runtime
        self.task_ids = task_ids
        self.owner = owner
        self._last: dict[str, dict[str, Any]] = {}

    def acknowledged(self) -> dict[str, Any]:
        return {"taskIds": sorted(self.task_ids)}

    async def opening(self, subscription: RequestId) -> list[dict[str, Any]]:
        """Each followed task as it is now: a change made before the stream opened counts."""
        found = [await self._message(task_id, subscription) for task_id in sorted(self.task_ids)]
        return [m for m in found if m is not None]

    async def message_for(self, change: Change, subscription: RequestId) -> dict[str, Any] | None:
        if change.kind != "task" or change.uri not in self.task_ids:
            return None
        return await self._message(change.uri, subscription)

    async def _message(self, task_id: str, subscription: RequestId) -> dict[str, Any] | None:
        record = await self.runtime.current(task_id)
        if record is None or record.owner != self.owner:
            return None
        detailed = self.runtime.detailed(record)
        if self._last.get(task_id) == detailed:
            return None  # the same state announced twice (a save that changed nothing seen)
        self._last[task_id] = detailed
        params = task_notification_params(detailed)
        params["_meta"] = {SUBSCRIPTION_ID_KEY: subscription}
        return notification_message(TaskMethod.NOTIFICATION, params)
