"""The Tasks extension's wire shapes (`io.modelcontextprotocol/tasks`, TASK-5..13).

Both sides need the same facts about a task: which statuses exist and which of them end it,
what a `Task` carries, how a `CreateTaskResult` differs from the `GetTaskResult` of `tasks/get`,
what `notifications/tasks` holds, and which request params the three task methods take. They
are written once here, as builders the server calls and checks the client (and the tests) call
on what arrives, so a shape that drifts from the ext-tasks schema fails in one place.

The checks raise `ValueError` with a sentence naming the field at fault: the server turns it
into a -32602 for params, the client into a protocol error for a result.

Pure: no I/O, no clock (timestamps are formatted from a time the caller passes), no randomness
(the runtime mints task ids).
"""

from __future__ import annotations

import datetime
from collections.abc import Mapping
from dataclasses import dataclass, replace
from types import MappingProxyType
from typing import Any, Final, Literal, cast

from mcpkit.protocol.extensions import TASKS
from mcpkit.protocol.principals import storable
from mcpkit.types.methods import MODERN_ONLY, MethodInfo, add_rows

__all__ = [
    "CREATE_TASK_RESULT_TYPE",
    "DEFAULT_POLL_INTERVAL_MS",
    "MIN_TASK_ID_CHARS",
    "RELATED_TASK_KEY",
    "STATUSES",
    "TASKS",
    "TERMINAL",
    "V1_TASK_KEYS",
    "Task",
    "TaskMethod",
    "TaskStatus",
    "acknowledgement",
    "check_create_task_result",
    "check_detailed_task",
    "check_get_task_result",
    "check_task",
    "create_task_result",
    "detailed_task",
    "get_task_result",
    "input_responses_param",
    "is_create_task_result",
    "is_terminal",
    "iso_timestamp",
    "listen_task_ids",
    "parse_detailed_task",
    "parse_task",
    "task_id_param",
    "task_notification_params",
]

class TaskMethod:
    """The Tasks extension's method names (`tasks/result` and `tasks/list` were removed from
    it and are never served)."""

    GET: Final = "tasks/get"
    UPDATE: Final = "tasks/update"
    CANCEL: Final = "tasks/cancel"
    NOTIFICATION: Final = "notifications/tasks"


_NEEDS_TASKS: Final[Mapping[str, Any]] = MappingProxyType(
    {"extensions": MappingProxyType({TASKS: {}})})
"""What a request must declare to reach a Tasks method (TASK-14)."""

# The extension's rows of the method table: served only once `mcpkit.ext.tasks` adds them,
# their types the ext-tasks schema's; Mcp-Name mirrors the task id so a balancer can route by
# it (TASK-15). Added at import, so a client and a server that speak tasks both know them.
add_rows(
    MethodInfo(TaskMethod.GET, "GetTaskRequest", "GetTaskResult", MODERN_ONLY, "client",
               mcp_name="taskId", extension=TASKS, capability=_NEEDS_TASKS),
    MethodInfo(TaskMethod.UPDATE, "UpdateTaskRequest", "UpdateTaskResult", MODERN_ONLY,
               "client", mcp_name="taskId", extension=TASKS, capability=_NEEDS_TASKS),
    MethodInfo(TaskMethod.CANCEL, "CancelTaskRequest", "CancelTaskResult", MODERN_ONLY,
               "client", mcp_name="taskId", extension=TASKS, capability=_NEEDS_TASKS),
    MethodInfo(TaskMethod.NOTIFICATION, "TaskStatusNotification", None, MODERN_ONLY, "server",
               extension=TASKS),
)

TaskStatus = Literal["working", "input_required", "completed", "failed", "cancelled"]
STATUSES: Final[tuple[TaskStatus, ...]] = (
    "working", "input_required", "completed", "failed", "cancelled")
TERMINAL: Final[frozenset[str]] = frozenset({"completed", "failed", "cancelled"})
"""A task in one of these never changes status again (TASK-5)."""

CREATE_TASK_RESULT_TYPE: Final = "task"
"""The `resultType` of a `CreateTaskResult`, and of nothing else (TASK-6, TASK-16)."""

DEFAULT_POLL_INTERVAL_MS: Final = 1000
"""The `pollIntervalMs` a server suggests unless configured otherwise."""

MIN_TASK_ID_CHARS: Final = 22
"""128 random bits in base64url take 22 characters; shorter ids cannot carry them (TASK-17)."""

RELATED_TASK_KEY: Final = "io.modelcontextprotocol/related-task"
"""The v1 `_meta` key an inlined result must not carry (TASK-18)."""

V1_TASK_KEYS: Final = frozenset({"task", "ttl", "pollInterval"})
"""The v1 keys a `CreateTaskResult` must not carry (TASK-6)."""

_TASK_FIELDS: Final = frozenset({"taskId", "status", "statusMessage", "createdAt",
                                 "lastUpdatedAt", "ttlMs", "pollIntervalMs"})
_DETAIL_FIELD: Final[Mapping[str, str | None]] = {
    "working": None, "input_required": "inputRequests", "completed": "result",
    "failed": "error", "cancelled": None}
"""Which field each status adds to a DetailedTask (the one table of it)."""
_FORBIDDEN_IN_CREATE: Final = frozenset({"result", "error", "inputRequests", "requestState"}) \
    | V1_TASK_KEYS


def is_terminal(status: str) -> bool:
    """Whether a task in `status` is finished for good."""
    return status in TERMINAL


def iso_timestamp(epoch_seconds: float) -> str:
    """An ISO 8601 UTC timestamp with milliseconds ("2026-07-28T12:00:00.000Z")."""
    moment = datetime.datetime.fromtimestamp(epoch_seconds, tz=datetime.UTC)
    return moment.strftime("%Y-%m-%dT%H:%M:%S.") + f"{moment.microsecond // 1000:03d}Z"


@dataclass(frozen=True, slots=True)
class Task:
    """A task's public state: what `CreateTaskResult`, `tasks/get` and `notifications/tasks`
    all carry. The status-specific part of a DetailedTask (its result, error or outstanding
    input requests) is passed to `detailed_task` beside it."""

    task_id: str
    status: TaskStatus
    created_at: str
    last_updated_at: str
    ttl_ms: int | None
    poll_interval_ms: int | None = DEFAULT_POLL_INTERVAL_MS
    status_message: str | None = None

    @property
    def terminal(self) -> bool:
        return self.status in TERMINAL

    def with_status(self, status: TaskStatus, updated_at: str,
                    message: str | None = None) -> Task:
        """A copy in `status`, updated at `updated_at`, with `message` as its statusMessage."""
        return replace(self, status=status, last_updated_at=updated_at, status_message=message)

    def wire(self) -> dict[str, Any]:
        """The `Task` fields, in the schema's spelling (absent optional fields omitted)."""
        out: dict[str, Any] = {"taskId": self.task_id, "status": self.status}
        if self.status_message is not None:
            out["statusMessage"] = self.status_message
        out["createdAt"] = self.created_at
        out["lastUpdatedAt"] = self.last_updated_at
        out["ttlMs"] = self.ttl_ms
        if self.poll_interval_ms is not None:
            out["pollIntervalMs"] = self.poll_interval_ms
        return out


def create_task_result(task: Task) -> dict[str, Any]:
    """The flat `CreateTaskResult` answering the request that started `task` (TASK-6)."""
    return {"resultType": CREATE_TASK_RESULT_TYPE, **task.wire()}


def detailed_task(task: Task, *, result: Mapping[str, Any] | None = None,
                  error: Mapping[str, Any] | None = None,
                  input_requests: Mapping[str, Any] | None = None) -> dict[str, Any]:
    """The DetailedTask for `task`: its fields plus the one its status calls for (TASK-8).

    A status that calls for a field it was not given is a programming error (ValueError),
    because a `completed` without `result` would be a schema violation on the wire.
    """
    out = task.wire()
    given = {"result": result, "error": error, "inputRequests": input_requests}
    wanted = _DETAIL_FIELD[task.status]
    if wanted is not None:
        value = given[wanted]
        if value is None:
            raise ValueError(f"a {task.status} task needs its {wanted}")
        out[wanted] = dict(value)
    return out


def get_task_result(detailed: Mapping[str, Any]) -> dict[str, Any]:
    """The `tasks/get` answer: the DetailedTask with `resultType: "complete"`."""
    return {"resultType": "complete", **detailed}


def task_notification_params(detailed: Mapping[str, Any]) -> dict[str, Any]:
    """The params of a `notifications/tasks`: the full DetailedTask (TASK-13)."""
    return dict(detailed)


def acknowledgement() -> dict[str, Any]:
    """The empty answer of `tasks/update` and `tasks/cancel` (TASK-10, TASK-11)."""
    return {"resultType": "complete"}


def is_create_task_result(result: Mapping[str, Any]) -> bool:
    """Whether a result is a task handle rather than the request's own result."""
    return result.get("resultType") == CREATE_TASK_RESULT_TYPE


# -- checks ------------------------------------------------------------------------------------

def _integer(value: object) -> bool:
    """A JSON integer (a bool is not one, nor is 5.0: the schema says `@format int`)."""
    return isinstance(value, int) and not isinstance(value, bool)


def check_task(value: object) -> dict[str, Any]:
    """`value` if it carries valid `Task` fields; ValueError naming the first one at fault."""
    if not isinstance(value, dict):
        raise ValueError(f"a task is an object, not {type(value).__name__}")
    task_id = value.get("taskId")
    if not isinstance(task_id, str) or not task_id:
        raise ValueError("a task's taskId must be a non-empty string")
    if value.get("status") not in STATUSES:
        raise ValueError(f"a task's status must be one of {', '.join(STATUSES)}, "
                         f"not {value.get('status')!r}")
    for key in ("createdAt", "lastUpdatedAt"):
        stamp = value.get(key)
        if not isinstance(stamp, str):
            raise ValueError(f"a task's {key} must be an ISO 8601 string")
        try:
            datetime.datetime.fromisoformat(stamp.replace("Z", "+00:00"))
        except ValueError:
            raise ValueError(f"a task's {key} {stamp!r} is not an ISO 8601 timestamp") from None
    if "ttlMs" not in value:
        raise ValueError("a task must carry ttlMs (an integer, or null for unlimited)")
    ttl = value["ttlMs"]
    if ttl is not None and (not _integer(ttl) or ttl < 0):
        raise ValueError(f"a task's ttlMs must be a non-negative integer or null, not {ttl!r}")
    if "pollIntervalMs" in value:
        poll = value["pollIntervalMs"]
        if not _integer(poll) or poll < 0:
            raise ValueError(f"a task's pollIntervalMs must be a non-negative integer, "
                             f"not {poll!r}")
    if "statusMessage" in value and not isinstance(value["statusMessage"], str):
        raise ValueError("a task's statusMessage must be a string")
    return value


def check_create_task_result(value: object) -> dict[str, Any]:
    """`value` if it is a valid flat `CreateTaskResult` (TASK-6); ValueError otherwise."""
    task = check_task(value)
    if task.get("resultType") != CREATE_TASK_RESULT_TYPE:
        raise ValueError('a CreateTaskResult must carry resultType "task"')
    extra = sorted(_FORBIDDEN_IN_CREATE & task.keys())
    if extra:
        raise ValueError(f"a CreateTaskResult must not carry {', '.join(extra)}")
    return task


def check_detailed_task(value: object) -> dict[str, Any]:
    """`value` if it is a valid DetailedTask: Task fields plus exactly the field its status
    calls for, of the right shape (TASK-8)."""
    task = check_task(value)
    status = task["status"]
    wanted = _DETAIL_FIELD[status]
    for field in ("result", "error", "inputRequests"):
        if field != wanted and field in task:
            raise ValueError(f"a {status} task must not carry {field}")
    if wanted is None:
        return task
    detail = task.get(wanted)
    if not isinstance(detail, dict):
        raise ValueError(f"a {status} task must carry {wanted} as an object")
    if wanted == "error":
        if not _integer(detail.get("code")) or not isinstance(detail.get("message"), str):
            raise ValueError("a failed task's error needs an integer code and a string message")
    elif wanted == "inputRequests":
        for key, request in detail.items():
            if not isinstance(request, dict) or not isinstance(request.get("method"), str):
                raise ValueError(f"input request {key!r} must be an object with a method")
    return task


def check_get_task_result(value: object) -> dict[str, Any]:
    """`value` if it is a valid `tasks/get` answer (a DetailedTask, resultType "complete")."""
    task = check_detailed_task(value)
    if task.get("resultType") != "complete":
        raise ValueError('a GetTaskResult must carry resultType "complete"')
    if "requestState" in task:
        raise ValueError("a GetTaskResult must not carry requestState")
    return task


def parse_task(value: object) -> Task:
    """The `Task` a checked wire object describes (ValueError when it is not one)."""
    wire = check_task(value)
    ttl = wire["ttlMs"]
    poll = wire.get("pollIntervalMs")
    return Task(
        task_id=wire["taskId"], status=cast(TaskStatus, wire["status"]),
        created_at=wire["createdAt"], last_updated_at=wire["lastUpdatedAt"],
        ttl_ms=None if ttl is None else int(ttl),
        poll_interval_ms=None if poll is None else int(poll),
        status_message=wire.get("statusMessage"))


def parse_detailed_task(value: object) -> tuple[Task, dict[str, Any] | None]:
    """The `Task` and its status-specific field's value (None for working/cancelled)."""
    wire = check_detailed_task(value)
    wanted = _DETAIL_FIELD[wire["status"]]
    return parse_task(wire), (None if wanted is None else wire[wanted])


# -- request params ----------------------------------------------------------------------------

def _storable_id(value: object) -> bool:
    """A non-empty string every store holds: no id a server issued is otherwise, so another
    is refused before a store is asked about it (PostgreSQL fails a query holding a NUL)."""
    return isinstance(value, str) and bool(value) and storable(value)


def task_id_param(params: Mapping[str, Any] | None) -> str:
    """The `taskId` of a `tasks/get|update|cancel` request; ValueError when missing or bad."""
    task_id = (params or {}).get("taskId")
    if not _storable_id(task_id):
        raise ValueError("params.taskId must be a task id: a non-empty string without NUL "
                         "or lone surrogates")
    return task_id  # type: ignore[return-value]


def input_responses_param(params: Mapping[str, Any] | None) -> dict[str, Any]:
    """The `inputResponses` of a `tasks/update` (an object of objects, TASK-10)."""
    responses = (params or {}).get("inputResponses")
    if not isinstance(responses, dict):
        raise ValueError("params.inputResponses must be an object mapping input request keys "
                         "to their responses")
    for key, response in responses.items():
        if not isinstance(response, dict):
            raise ValueError(f"params.inputResponses[{key!r}] must be an object")
    return responses


def listen_task_ids(notifications: Mapping[str, Any] | None) -> list[str] | None:
    """The `taskIds` a `subscriptions/listen` asks notifications for, or None when it asks for
    none; ValueError when the field is not a list of strings."""
    if not notifications or "taskIds" not in notifications:
        return None
    ids = notifications["taskIds"]
    if not isinstance(ids, list) or not all(_storable_id(i) for i in ids):
        raise ValueError("notifications.taskIds must be a list of task ids (non-empty strings "
                         "without NUL or lone surrogates)")
    return list(dict.fromkeys(ids))
