"""What a client knows of one task while it waits on it, with no I/O: `TaskWatch`.

Waiting on a task is a loop of observations (a `tasks/get` answer, a `notifications/tasks`),
answers to the input it asks for, and pauses. The decisions in that loop are kept here, apart
from the loop (`mcpkit.ext.tasks.handles`), so each can be tested without an event loop:

- what arrived is a task at all, and the one waited on (`check_create_task_result`,
  `check_detailed_task` of `mcpkit.ext.tasks.wire`; anything else is a `ProtocolViolation`);
- a terminal status is final: a later observation never brings a finished task back;
- which input requests are new: a key answered once is never answered again, however many
  polls repeat it (TASK-10), and a task asking past `max_rounds` rounds is given up on, as an
  MRTR call is;
- how long to pause: the server's `pollIntervalMs`, clamped to `MIN_POLL_S`..`MAX_POLL_S` so
  neither a zero nor a day-long interval is taken at its word, and never past the deadline;
- what the end means: a `completed` task's `result`, a `failed` task's JSON-RPC error raised as
  its `RPCError` class, a `cancelled` task as `TaskCancelledError`.

May import `mcpkit.types`, `mcpkit.errors`, `mcpkit.protocol` and the client's own pure modules.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Final

from mcpkit.client.inputs import MAX_INPUT_REQUESTS
from mcpkit.client.options import InputRoundsExceededError
from mcpkit.errors import ProtocolViolation, RPCError, TaskCancelledError
from mcpkit.ext.tasks.wire import (
    check_create_task_result,
    check_detailed_task,
    is_terminal,
)

__all__ = [
    "DEFAULT_POLL_S",
    "MAX_POLL_S",
    "MIN_POLL_S",
    "TaskWatch",
    "poll_delay",
]

MIN_POLL_S: Final = 0.05
"""The shortest pause between two `tasks/get`: a server asking for 0 ms gets 50."""
MAX_POLL_S: Final = 30.0
"""The longest pause: a task whose server suggests an hour is still looked at twice a minute,
so a finished result is not left waiting on an absurd interval."""
DEFAULT_POLL_S: Final = 1.0
"""The pause when the task carries no `pollIntervalMs`."""


def poll_delay(poll_interval_ms: object, remaining: float | None) -> float:
    """Seconds to pause before the next look: the server's interval, clamped, and never past
    the `remaining` time of the wait (None: no deadline)."""
    if isinstance(poll_interval_ms, int) and not isinstance(poll_interval_ms, bool):
        delay = min(MAX_POLL_S, max(MIN_POLL_S, poll_interval_ms / 1000))
    else:
        delay = DEFAULT_POLL_S
    if remaining is not None:
        delay = max(0.0, min(delay, remaining))
    return delay


@dataclass(slots=True)
class TaskWatch:
    """One task as the client last saw it, and the input keys it has answered."""

    task_id: str
    what: str
    """The request that started it, for messages: `tools/call 'report'`."""
    latest: dict[str, Any]
    """The last Task or DetailedTask seen (without `resultType` and `_meta`)."""
    max_rounds: int = 10
    answered: set[str] = field(default_factory=set)
    rounds: int = 0

    @classmethod
    def created(cls, result: Mapping[str, Any], what: str, max_rounds: int = 10) -> TaskWatch:
        """The watch of the task a `CreateTaskResult` announced; a malformed one is a
        `ProtocolViolation` naming the field at fault."""
        try:
            task = check_create_task_result(dict(result))
        except ValueError as exc:
            raise ProtocolViolation(f"{what}: the server's CreateTaskResult is invalid: {exc}"
                                    ) from None
        return cls(task["taskId"], what, _bare(task), max_rounds)

    @classmethod
    def reattached(cls, task_id: str, what: str, max_rounds: int = 10) -> TaskWatch:
        """The watch of a task known only by id (after a restart): nothing seen yet."""
        return cls(task_id, what, {"taskId": task_id, "status": "working"}, max_rounds)

    @property
    def status(self) -> str:
        return str(self.latest["status"])

    @property
    def terminal(self) -> bool:
        return is_terminal(self.status)

    @property
    def final(self) -> bool:
        """Finished, and what it ended with is known: a CreateTaskResult may already say
        `completed` but never carries the result, which only `tasks/get` gives."""
        return self.terminal and (self.status == "cancelled" or "result" in self.latest
                                  or "error" in self.latest)

    def see(self, detailed: Mapping[str, Any]) -> bool:
        """Take one observation (a `tasks/get` result or a `notifications/tasks`' params);
        whether it changed what is known. A finished task stays finished."""
        try:
            task = check_detailed_task(dict(detailed))
        except ValueError as exc:
            raise ProtocolViolation(
                f"{self.what}: the server's state of task {self.task_id!r} is invalid: {exc}"
            ) from None
        if task["taskId"] != self.task_id:
            raise ProtocolViolation(
                f"{self.what}: asked about task {self.task_id!r}, the server answered about "
                f"{task['taskId']!r}"
            )
        if self.final:
            return False  # already final; a late or repeated observation changes nothing
        bare = _bare(task)
        changed = bare != self.latest
        self.latest = bare
        return changed

    def pending(self) -> dict[str, dict[str, Any]]:
        """The outstanding input requests not answered yet, by key (empty unless the task is
        `input_required`); a task asking for too much is refused as an MRTR round would be."""
        if self.status != "input_required":
            return {}
        requests = self.latest.get("inputRequests") or {}
        if len(requests) > MAX_INPUT_REQUESTS:
            raise ProtocolViolation(
                f"{self.what}: task {self.task_id!r} asks for {len(requests)} inputs at once; "
                f"at most {MAX_INPUT_REQUESTS} are answered"
            )
        return {k: v for k, v in requests.items() if k not in self.answered}

    def answering(self, keys: list[str]) -> None:
        """Record that `keys` are being answered (before the answers are sent, so an error
        while sending them can never lead to a second answer to the same question)."""
        self.rounds += 1
        if self.rounds > self.max_rounds:
            raise InputRoundsExceededError(
                f"{self.what}: task {self.task_id!r} still asks for input after "
                f"{self.max_rounds} rounds; giving up (raise ClientOptions.max_rounds if it "
                "legitimately needs more)"
            )
        self.answered.update(keys)

    def outcome(self) -> dict[str, Any]:
        """The final result of a finished task, or what its end raises."""
        status = self.status
        if status == "completed":
            result = self.latest.get("result")
            if type(result) is not dict:  # reattached and never seen finished
                raise ProtocolViolation(f"{self.what}: task {self.task_id!r} has no result")
            return result
        if status == "failed":
            error = self.latest.get("error")
            exc = RPCError.from_wire(error if isinstance(error, dict) else {})
            why = self.latest.get("statusMessage")
            exc.add_note(f"task {self.task_id!r} of {self.what} failed"
                         + (f": {why}" if isinstance(why, str) and why else ""))
            raise exc
        if status == "cancelled":
            why = self.latest.get("statusMessage")
            raise TaskCancelledError(
                f"{self.what}: task {self.task_id!r} was cancelled"
                + (f" ({why})" if isinstance(why, str) and why else "")
                + ", so there is no result", self.task_id)
        raise ProtocolViolation(f"{self.what}: task {self.task_id!r} is still {status}")


def _bare(task: Mapping[str, Any]) -> dict[str, Any]:
    """A task's state without the envelope keys (`resultType`, `_meta`)."""
    return {k: v for k, v in task.items() if k not in ("resultType", "_meta")}
