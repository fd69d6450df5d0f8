"""`TaskStore`: where the Tasks extension keeps its tasks, so they outlive a request and a process.

A task is a record (`TaskRecord`): who created it, its status and the result, error or
outstanding input requests that go with it, its lifetime, and the lease of the process running
it. The runner (`mcpkit.ext.tasks`) writes it; `tasks/get` reads it, in any process sharing the
store. Some fields are never written by the runner's `save`, because others change them on
their own: the answers a `tasks/update` brings (`put_answers`), a `tasks/cancel`
(`request_cancel`), and the lease, which heartbeats renew (`renew`), a sweeper takes over when
it lapsed (`claim`), and a stopping process hands back (`release`).

The contract every engine (memory, SQLite, PostgreSQL, Redis) keeps:

- `create` is durable when it returns: a `get` from any process sharing the store finds it
  (TASK-7); a second `create` of one id raises `ValueError`; under a `TaskQuota` it creates
  nothing when the owner's share is full (checked and written in one step, across replicas).
- **One source of truth for a lease**: only `create`, `renew`, `claim` and `release` write
  it, and `save` writes only while the lease is the caller's (a compare-and-set on the lease
  owner), so a running task's lease never falls behind its heartbeats and a process that lost
  a task cannot write over the one that took it.
- **A terminal status is final**: no call moves a task out of `completed`, `failed` or
  `cancelled`; a finished task has no lease, and its arguments and answers are dropped (only a
  resumable task that may run again needs them).
- **Answers are kept**: `put_answers` stores each key's first answer durably before it
  returns, and every answer given stays readable (`TaskRecord.answers`) until the task ends,
  so a task run again after a crash sees all of them and asks no key twice.
- A claim succeeds only once the lease has lapsed, for one caller; `get` never returns a task
  past `expires_at` (TASK-12: expired is unknown).

Times are Unix seconds. Pure data, its JSON form and an abstract interface: the engines do the I/O.
"""

from __future__ import annotations

import abc
import copy
import hashlib
from dataclasses import dataclass, field, fields
from typing import Any, Final

import orjson

from mcpkit.protocol.principals import current_text

__all__ = [
    "OUTSIDE_FIELDS",
    "TERMINAL_STATUSES",
    "TaskQuota",
    "TaskRecord",
    "TaskStore",
    "TaskUsage",
    "owner_tag",
    "record_from_json",
    "record_size",
    "record_to_json",
    "stored_json",
]

TERMINAL_STATUSES: Final = ("completed", "failed", "cancelled")
"""The statuses a task never leaves (TASK-5), as every engine's conditions name them."""

OUTSIDE_FIELDS: Final = frozenset({"lease_owner", "lease_until", "cancel_requested", "answers"})
"""What `save` never writes: the engines keep these beside the runner's record."""


@dataclass(slots=True)
class TaskRecord:
    """One task as stored. The runner changes it and `save`s it; nothing else writes it whole."""

    task_id: str
    owner: str | None
    """The principal that created it (`mcpkit.server.sealing.principal_key`), None when anonymous:
    only the same principal may see or steer it."""
    tool: str
    arguments: dict[str, Any] | None
    """The call's arguments, kept only while a resumable task may be run again with them."""
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
    """Its tool may be run again from the start when the process running it stopped."""
    lease_owner: str | None = None
    lease_until: float | None = None
    """Until when the running process's last heartbeat vouches for it (None: not running)."""
    cancel_requested: bool = False
    answers: dict[str, Any] = field(default_factory=dict)
    """Every answer `tasks/update` brought, by key (the first for each key), kept until the
    task ends."""
    capabilities: dict[str, Any] = field(default_factory=dict)
    """The client capabilities the creating request declared (what a re-run may ask with)."""
    attempts: int = 1
    """How many times it was started (a resumable task re-run after a crash counts twice)."""
    handoffs: int = 0
    """How many of those starts a stopping process handed back on purpose (a drain): they do
    not count against `TaskOptions.max_attempts`, which bounds crashes."""
    handed_back: bool = False
    """The last process running it handed it back (until another takes it up)."""

    @property
    def expires_at(self) -> float | None:
        """When it is deleted (its TTL after creation), None when it lives until deleted."""
        return None if self.ttl_ms is None else self.created_at + self.ttl_ms / 1000

    def expired(self, now: float) -> bool:
        end = self.expires_at
        return end is not None and now >= end

    @property
    def terminal(self) -> bool:
        return self.status in TERMINAL_STATUSES


@dataclass(frozen=True, slots=True)
class TaskQuota:
    """One principal's share of a task store: its unfinished tasks, its stored tasks (finished
    ones count until their TTL) and the bytes its records take."""

    active: int
    stored: int
    bytes: int


@dataclass(frozen=True, slots=True)
class TaskUsage:
    """What one principal holds in a task store now, and when its first stored task expires
    (None: none will), which is when a full stored share frees a place."""

    active: int
    stored: int
    bytes: int
    next_expiry: float | None = None

    def full(self, quota: TaskQuota, adding: int) -> str | None:
        """Which share one more task of `adding` bytes would overflow: "active", "stored",
        "bytes", or None when it fits."""
        if self.active + 1 > quota.active:
            return "active"
        if self.stored + 1 > quota.stored:
            return "stored"
        if self.bytes + adding > quota.bytes:
            return "bytes"
        return None


_FIELDS = frozenset(f.name for f in fields(TaskRecord))


_RUNNER_FIELDS = tuple(f.name for f in fields(TaskRecord) if f.name not in OUTSIDE_FIELDS)


def record_to_json(record: TaskRecord) -> bytes:
    """The runner's part of the record as JSON (the fields outside writers own are left out:
    the engines keep them beside it). Read from the record as it is, with no copy first: a
    save writes one per progress report."""
    return orjson.dumps({name: getattr(record, name) for name in _RUNNER_FIELDS})


def record_from_json(data: bytes | str) -> TaskRecord:
    """A record back from `record_to_json` (fields a newer version added are ignored; the
    outside fields an older version wrote into the JSON are replaced by the engine's)."""
    raw = orjson.loads(data)
    if isinstance(raw.get("owner"), str):  # kept before principals were spelled for every engine
        raw["owner"] = current_text(raw["owner"])
    record = TaskRecord(**{k: v for k, v in raw.items() if k in _FIELDS})
    record.lease_owner = record.lease_until = None
    record.cancel_requested = False
    record.answers = {}
    return record


def stored_json(record: TaskRecord) -> bytes:
    """What an engine writes for the runner's record: `record_to_json`, without the arguments
    once the task has ended (nothing will run it again)."""
    if record.terminal and record.arguments is not None:
        record = copy.copy(record)
        record.arguments = None
    return record_to_json(record)


def owner_tag(owner: str | None) -> str:
    """The owner as every engine indexes it: a digest, so a principal key of any characters
    (NUL included) fits a column of any engine, and the index holds no identity in clear."""
    # Anonymous is a byte string no principal key encodes to (they are text, never a NUL
    # alone), so it has a tag of its own.
    data = b"\x00" if owner is None else owner.encode("utf-8", "surrogatepass")
    return hashlib.sha256(data).hexdigest()[:32]


class TaskStore(abc.ABC):
    """The tasks of every server sharing this store. Every method is safe from concurrent tasks."""

    @abc.abstractmethod
    async def create(self, record: TaskRecord, quota: TaskQuota | None = None
                     ) -> TaskUsage | None:
        """Record a new task durably before returning, and None; ValueError if the id exists.
        Under `quota`, when the owner's share cannot take it: nothing is written and the
        owner's usage is returned."""

    @abc.abstractmethod
    async def get(self, task_id: str) -> TaskRecord | None:
        """The task with its lease, cancel request and answers, or None when unknown or
        expired."""

    @abc.abstractmethod
    async def save(self, record: TaskRecord, owner: str) -> bool:
        """Write the runner's fields (status, message, result, error, input requests, asked
        keys, attempts, times) only if the stored task is unfinished and `owner` holds its
        lease. A terminal status ends the lease and drops the stored arguments and answers.
        True when written; False when the lease is another's, the task has ended, or it is
        gone (then the caller no longer runs it)."""

    @abc.abstractmethod
    async def put_answers(self, task_id: str, answers: dict[str, Any]) -> None:
        """Keep answers for the task's input requests, durably: a key already answered keeps
        its first answer; a finished or unknown task keeps nothing."""

    @abc.abstractmethod
    async def request_cancel(self, task_id: str) -> None:
        """Mark the task to be cancelled by whichever process runs it."""

    @abc.abstractmethod
    async def renew(self, task_ids: list[str], owner: str, until: float) -> set[str]:
        """Extend the lease of these unfinished tasks held by `owner` (a heartbeat); the ids
        whose lease `owner` still held, so its runner stops the others."""

    @abc.abstractmethod
    async def claim(self, task_id: str, owner: str, now: float, until: float
                    ) -> TaskRecord | None:
        """Take over the lease of an unfinished task whose lease lapsed before `now` (its
        process stopped, or handed it back); the task as claimed, or None: it is live, ended
        or gone, or another caller took it (two sweepers never both recover one task)."""

    @abc.abstractmethod
    async def release(self, record: TaskRecord, owner: str) -> bool:
        """`save` the record and end `owner`'s lease at once, so another process may claim
        it now (a stopping process handing back a task it cannot finish)."""

    @abc.abstractmethod
    async def stale(self, now: float) -> list[TaskRecord]:
        """The unfinished tasks whose lease lapsed before `now`: their process is gone."""

    @abc.abstractmethod
    async def purge(self, now: float) -> int:
        """Delete the tasks past their TTL; how many went."""

    @abc.abstractmethod
    async def usage(self, owner: str | None, now: float) -> TaskUsage:
        """What `owner` holds now (tasks past their TTL not counted)."""

    async def close(self) -> None:  # noqa: B027 -- optional for engines without resources
        """Release what the store holds open."""


def record_size(record_json: bytes, answers: dict[str, Any] | None = None) -> int:
    """The bytes a stored task counts against its owner's share: its record and answers."""
    return len(record_json) + (len(orjson.dumps(answers)) if answers else 0)
