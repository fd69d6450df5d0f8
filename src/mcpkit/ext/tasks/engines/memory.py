"""`MemoryTaskStore`: tasks in this process's memory, for tests and single-process servers that
need no restart survival. Records are copied in and out, so a caller never shares one; the
contract is `mcpkit.ext.tasks.records`'s, as every engine keeps it."""

from __future__ import annotations

import copy
import time
from collections.abc import Callable
from typing import Any

from mcpkit.ext.tasks.records import (
    OUTSIDE_FIELDS,
    TaskQuota,
    TaskRecord,
    TaskStore,
    TaskUsage,
    record_size,
    record_to_json,
    stored_json,
)

__all__ = ["MemoryTaskStore"]


class MemoryTaskStore(TaskStore):
    """Tasks in a dict; the runner's event loop is the only one touching it."""

    def __init__(self, *, clock: Callable[[], float] = time.time) -> None:
        self._clock = clock
        """Unix seconds: a task past its TTL is unknown to `get` (TASK-12), as in every engine."""
        self._tasks: dict[str, TaskRecord] = {}
        self._sizes: dict[str, int] = {}
        """Each task's record size (its JSON, without the answers), counted when written."""

    def __len__(self) -> int:
        return len(self._tasks)

    def _live(self, task_id: str) -> TaskRecord | None:
        found = self._tasks.get(task_id)
        return None if found is None or found.expired(self._clock()) else found

    async def create(self, record: TaskRecord, quota: TaskQuota | None = None
                     ) -> TaskUsage | None:
        if record.task_id in self._tasks:
            raise ValueError(f"task {record.task_id!r} already exists")
        size = len(record_to_json(record))
        if quota is not None:
            used = await self.usage(record.owner, self._clock())
            if used.full(quota, size):
                return used
        stored = copy.deepcopy(record)
        if stored.terminal:  # as every engine stores a finished task: nothing to run again
            stored.arguments, stored.answers = None, {}
        self._tasks[record.task_id] = stored
        self._sizes[record.task_id] = size
        return None

    async def get(self, task_id: str) -> TaskRecord | None:
        found = self._live(task_id)
        return None if found is None else copy.deepcopy(found)

    def _held(self, task_id: str, owner: str) -> TaskRecord | None:
        stored = self._tasks.get(task_id)
        if stored is None or stored.terminal or stored.lease_owner != owner:
            return None
        return stored

    def _write(self, stored: TaskRecord, record: TaskRecord) -> TaskRecord:
        fresh = copy.deepcopy(record)
        for name in OUTSIDE_FIELDS:
            setattr(fresh, name, getattr(stored, name))
        if fresh.terminal:
            fresh.lease_owner = fresh.lease_until = None
            fresh.arguments, fresh.answers = None, {}
        self._tasks[record.task_id] = fresh
        self._sizes[record.task_id] = len(stored_json(fresh))
        return fresh

    async def save(self, record: TaskRecord, owner: str) -> bool:
        stored = self._held(record.task_id, owner)
        if stored is None:
            return False
        self._write(stored, record)
        return True

    async def put_answers(self, task_id: str, answers: dict[str, Any]) -> None:
        stored = self._tasks.get(task_id)
        if stored is not None and not stored.terminal:
            for key, value in answers.items():
                stored.answers.setdefault(key, copy.deepcopy(value))

    async def request_cancel(self, task_id: str) -> None:
        stored = self._tasks.get(task_id)
        if stored is not None:
            stored.cancel_requested = True

    async def renew(self, task_ids: list[str], owner: str, until: float) -> set[str]:
        held = set()
        for task_id in task_ids:
            stored = self._held(task_id, owner)
            if stored is not None:
                stored.lease_until = until
                held.add(task_id)
        return held

    async def claim(self, task_id: str, owner: str, now: float, until: float
                    ) -> TaskRecord | None:
        stored = self._tasks.get(task_id)
        if stored is None or stored.terminal or stored.expired(now) or \
                stored.lease_until is None or stored.lease_until >= now:
            return None
        stored.lease_owner, stored.lease_until = owner, until
        return copy.deepcopy(stored)

    async def release(self, record: TaskRecord, owner: str) -> bool:
        stored = self._held(record.task_id, owner)
        if stored is None:
            return False
        fresh = self._write(stored, record)
        if not fresh.terminal:
            fresh.lease_until = 0.0
        return True

    async def stale(self, now: float) -> list[TaskRecord]:
        return [copy.deepcopy(r) for r in self._tasks.values()
                if r.lease_until is not None and r.lease_until < now and not r.expired(now)
                and not r.terminal]

    async def purge(self, now: float) -> int:
        gone = [k for k, r in self._tasks.items() if r.expired(now)]
        for task_id in gone:
            del self._tasks[task_id]
            self._sizes.pop(task_id, None)
        return len(gone)

    async def usage(self, owner: str | None, now: float) -> TaskUsage:
        active = stored = size = 0
        expiries = []
        for record in self._tasks.values():
            if record.owner != owner or record.expired(now):
                continue
            stored += 1
            active += not record.terminal
            size += record_size(b"", record.answers) + self._sizes.get(record.task_id, 0)
            if record.expires_at is not None:
                expiries.append(record.expires_at)
        return TaskUsage(active, stored, size, min(expiries, default=None))
