"""`TaskStore`: where the Tasks extension keeps its tasks, so they outlive a request and a process.

A task is a record (`TaskRecord`): who created it, its status and the result, error or
outstanding input requests that go with it, its lifetime, and the lease of the process running
it. The runner (`mcpkit.ext.tasks`) writes it; `tasks/get` reads it, in any process sharing the
store. Three things arrive from outside the running process and so have calls of their own,
never a whole-record overwrite that could lose them: the answers a `tasks/update` brings
(`put_answers`, taken once by the runner with `take_answers`), a `tasks/cancel`
(`request_cancel`, seen in `TaskRecord.cancel_requested`), and the heartbeats that renew a
running task's lease (`renew`), or take over one that lapsed (`claim`). A sweeper finds the tasks whose lease ran out (their process
died: `stale`) and deletes those past their TTL (`purge`).

The contract an engine (memory, SQLite, PostgreSQL, Redis) must keep:

- `create` is durable when it returns: a `get` from any process sharing the store finds it
  (TASK-7), and a second `create` of the same id raises `ValueError`;
- `save` writes the fields the runner owns and keeps the answers and the cancel request
  as they are in the store;
- `get` never returns a task past `expires_at` (TASK-12: expired is unknown).

Times are Unix seconds. Pure data, its JSON form and an abstract interface: the engines do the I/O.
"""

from __future__ import annotations

import abc
from dataclasses import asdict, dataclass, field, fields
from typing import Any

import orjson

from mcpkit.protocol.principals import current_text

__all__ = ["TaskRecord", "TaskStore", "record_from_json", "record_to_json"]


@dataclass(slots=True)
class TaskRecord:
    """One task as stored. The runner changes it and `save`s it; nothing else writes it whole."""

    task_id: str
    owner: str | None
    """The principal that created it (`mcpkit.server.mrtr.principal_key`), None when anonymous:
    only the same principal may see or steer it."""
    tool: str
    arguments: dict[str, Any] | None
    """The call's arguments, kept so a resumable task can be run again."""
    status: str
    created_at: float
    updated_at: float
    ttl_ms: int | None
    poll_interval_ms: int
    status_message: str | None = None
    result: dict[str, Any] | None = None
    error: dict[str, Any] | None = None
    input_requests: dict[str, Any] = field(default_factory=dict)
    """The outstanding input requests by key (only while `input_required`)."""
    asked: list[str] = field(default_factory=list)
    """Every input request key this task ever issued: keys are never reused (TASK-10)."""
    resumable: bool = False
    """Its tool may be run again from the start when the process running it died."""
    lease_owner: str | None = None
    lease_until: float | None = None
    """Until when the running process's last heartbeat vouches for it (None: not running)."""
    cancel_requested: bool = False
    capabilities: dict[str, Any] = field(default_factory=dict)
    """The client capabilities the creating request declared (what a re-run may ask with)."""
    attempts: int = 1
    """How many times it was started (a resumable task re-run after a crash counts twice)."""

    @property
    def expires_at(self) -> float | None:
        """When it is deleted (its TTL after creation), None when it lives until deleted."""
        return None if self.ttl_ms is None else self.created_at + self.ttl_ms / 1000

    def expired(self, now: float) -> bool:
        end = self.expires_at
        return end is not None and now >= end


_FIELDS = frozenset(f.name for f in fields(TaskRecord))


def record_to_json(record: TaskRecord) -> bytes:
    """The record as JSON, for an engine that keeps it as one value."""
    return orjson.dumps(asdict(record))


def record_from_json(data: bytes | str) -> TaskRecord:
    """A record back from `record_to_json` (fields a newer version added are ignored)."""
    raw = orjson.loads(data)
    if isinstance(raw.get("owner"), str):  # kept before principals were spelled for every engine
        raw["owner"] = current_text(raw["owner"])
    return TaskRecord(**{k: v for k, v in raw.items() if k in _FIELDS})


class TaskStore(abc.ABC):
    """The tasks of every server sharing this store. Every method is safe from concurrent tasks."""

    @abc.abstractmethod
    async def create(self, record: TaskRecord) -> None:
        """Record a new task, durably before returning; ValueError if the id exists."""

    @abc.abstractmethod
    async def get(self, task_id: str) -> TaskRecord | None:
        """The task, or None when unknown or expired."""

    @abc.abstractmethod
    async def save(self, record: TaskRecord) -> None:
        """Write the runner's fields (status, message, result, error, input requests, asked
        keys, lease, attempts, times); answers and the cancel request are left as stored. A task
        deleted meanwhile stays deleted."""

    @abc.abstractmethod
    async def put_answers(self, task_id: str, answers: dict[str, Any]) -> None:
        """Add answers for the task's input requests (merged with any not yet taken)."""

    @abc.abstractmethod
    async def take_answers(self, task_id: str) -> dict[str, Any]:
        """The answers added since the last call, removed as they are returned."""

    @abc.abstractmethod
    async def request_cancel(self, task_id: str) -> None:
        """Mark the task to be cancelled by whichever process runs it."""

    @abc.abstractmethod
    async def renew(self, task_ids: list[str], owner: str, until: float) -> None:
        """Extend the lease of these tasks held by `owner` (a heartbeat)."""

    @abc.abstractmethod
    async def claim(self, task_id: str, old_owner: str | None, owner: str, until: float) -> bool:
        """Take over the lease of a task whose lease `old_owner` held and let lapse; True only
        for the one caller that got it (two sweepers never both recover one task)."""

    @abc.abstractmethod
    async def stale(self, now: float) -> list[TaskRecord]:
        """The unfinished tasks whose lease ran out before `now`: their process is gone."""

    @abc.abstractmethod
    async def purge(self, now: float) -> int:
        """Delete the tasks past their TTL; how many went."""

    async def close(self) -> None:  # noqa: B027 -- optional for engines without resources
        """Release what the store holds open."""
