"""`MemoryTaskStore`: tasks in this process's memory, for tests and single-process servers that
need no restart survival. Records are copied in and out, so a caller never shares one."""

from __future__ import annotations

import copy
import time
from collections.abc import Callable
from typing import Any

from mcpkit.store.tasks import TaskRecord, TaskStore

__all__ = ["MemoryTaskStore"]

_OUTSIDE = ("cancel_requested",)
"""Fields only the outside calls write; `save` keeps the stored values."""


class MemoryTaskStore(TaskStore):
    """Tasks in a dict; the runner's event loop is the only one touching it."""

    def __init__(self, *, clock: Callable[[], float] = time.time) -> None:
        self._clock = clock
        """Unix seconds: a task past its TTL is unknown to `get` (TASK-12), as in every engine."""
        self._tasks: dict[str, TaskRecord] = {}
        self._answers: dict[str, dict[str, Any]] = {}

    def __len__(self) -> int:
        return len(self._tasks)

    async def create(self, record: TaskRecord) -> None:
        if record.task_id in self._tasks:
            raise ValueError(f"task {record.task_id!r} already exists")
        self._tasks[record.task_id] = copy.deepcopy(record)

    async def get(self, task_id: str) -> TaskRecord | None:
        found = self._tasks.get(task_id)
        if found is None or found.expired(self._clock()):
            return None
        return copy.deepcopy(found)

    async def save(self, record: TaskRecord) -> None:
        stored = self._tasks.get(record.task_id)
        if stored is None:
            return
        fresh = copy.deepcopy(record)
        for name in _OUTSIDE:
            setattr(fresh, name, getattr(stored, name))
        self._tasks[record.task_id] = fresh

    async def put_answers(self, task_id: str, answers: dict[str, Any]) -> None:
        if task_id in self._tasks:
            self._answers.setdefault(task_id, {}).update(copy.deepcopy(answers))

    async def take_answers(self, task_id: str) -> dict[str, Any]:
        return self._answers.pop(task_id, {})

    async def request_cancel(self, task_id: str) -> None:
        stored = self._tasks.get(task_id)
        if stored is not None:
            stored.cancel_requested = True

    async def renew(self, task_ids: list[str], owner: str, until: float) -> None:
        for task_id in task_ids:
            stored = self._tasks.get(task_id)
            if stored is not None and stored.lease_owner == owner:
                stored.lease_until = until

    async def claim(self, task_id: str, old_owner: str | None, owner: str, until: float) -> bool:
        stored = self._tasks.get(task_id)
        if stored is None or stored.lease_owner != old_owner:
            return False
        stored.lease_owner, stored.lease_until = owner, until
        return True

    async def stale(self, now: float) -> list[TaskRecord]:
        return [copy.deepcopy(r) for r in self._tasks.values()
                if r.lease_until is not None and r.lease_until < now and not r.expired(now)
                and r.status not in ("completed", "failed", "cancelled")]

    async def purge(self, now: float) -> int:
        gone = [k for k, r in self._tasks.items() if r.expired(now)]
        for task_id in gone:
            del self._tasks[task_id]
            self._answers.pop(task_id, None)
        return len(gone)
