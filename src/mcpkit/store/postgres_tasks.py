"""`PostgresTaskStore`: the Tasks extension's records in PostgreSQL, shared by every replica.

One row per task: the runner's record as JSON beside the columns that others change on their
own (the lease, the cancel request, the answers not yet taken) and those the sweeper reads
(status, expiry), so a heartbeat, a `tasks/cancel` or a `tasks/update` touches its column
and never overwrites what the runner wrote, as `mcpkit.store.tasks` requires. Every call is one
transaction that commits before it returns (a created task is found by any replica at once,
TASK-7); a claim is one conditional UPDATE, so of two sweepers only one takes over a task.

Imports: the standard library, `mcpkit.store`.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any, Final

import orjson

from mcpkit.store.postgres_store import PostgresEngine
from mcpkit.store.tasks import TaskRecord, TaskStore, record_from_json, record_to_json

__all__ = ["PostgresTaskStore"]

_TABLES: Final = (
    "CREATE TABLE IF NOT EXISTS mcpkit_tasks (task_id TEXT PRIMARY KEY, record BYTEA NOT NULL, "
    "status TEXT NOT NULL, lease_owner TEXT, lease_until DOUBLE PRECISION, "
    "expires_at DOUBLE PRECISION, cancel_requested BOOLEAN NOT NULL DEFAULT false, "
    "answers JSONB)",
    "CREATE INDEX IF NOT EXISTS mcpkit_tasks_lease ON mcpkit_tasks (lease_until) "
    "WHERE lease_until IS NOT NULL",
    "CREATE INDEX IF NOT EXISTS mcpkit_tasks_expiry ON mcpkit_tasks (expires_at) "
    "WHERE expires_at IS NOT NULL",
)
_TERMINAL: Final = ("completed", "failed", "cancelled")
_READ: Final = "SELECT record, lease_owner, lease_until, cancel_requested FROM mcpkit_tasks "


def _record(row: tuple[Any, ...]) -> TaskRecord:
    record = record_from_json(bytes(row[0]))
    record.lease_owner, record.lease_until, record.cancel_requested = row[1], row[2], bool(row[3])
    return record


class PostgresTaskStore(TaskStore):
    """Tasks in one table (`mcpkit_tasks`) of the database behind `engine`."""

    def __init__(self, engine: PostgresEngine, *, clock: Callable[[], float] = time.time) -> None:
        self._engine = engine
        self._clock = clock

    async def _ready(self) -> None:
        await self._engine.ensure("tasks", _TABLES)

    async def create(self, record: TaskRecord) -> None:
        await self._ready()
        async with self._engine.transaction("creating a task") as conn:
            cur = await conn.execute(
                "INSERT INTO mcpkit_tasks (task_id, record, status, lease_owner, lease_until, "
                "expires_at) VALUES (%s, %s, %s, %s, %s, %s) ON CONFLICT DO NOTHING",
                (record.task_id, record_to_json(record), record.status, record.lease_owner,
                 record.lease_until, record.expires_at))
            if cur.rowcount != 1:
                raise ValueError(f"task {record.task_id!r} already exists")

    async def get(self, task_id: str) -> TaskRecord | None:
        await self._ready()
        async with self._engine.transaction("reading a task") as conn:
            cur = await conn.execute(
                _READ + "WHERE task_id = %s AND (expires_at IS NULL OR expires_at > %s)",
                (task_id, self._clock()))
            row = await cur.fetchone()
        return None if row is None else _record(row)

    async def save(self, record: TaskRecord) -> None:
        await self._ready()
        async with self._engine.transaction("saving a task") as conn:
            await conn.execute(
                "UPDATE mcpkit_tasks SET record = %s, status = %s, lease_owner = %s, "
                "lease_until = %s, expires_at = %s WHERE task_id = %s",
                (record_to_json(record), record.status, record.lease_owner, record.lease_until,
                 record.expires_at, record.task_id))

    async def put_answers(self, task_id: str, answers: dict[str, Any]) -> None:
        await self._ready()
        async with self._engine.transaction("keeping a task's answers") as conn:
            await conn.execute(
                "UPDATE mcpkit_tasks SET answers = coalesce(answers, '{}'::jsonb) || %s::jsonb "
                "WHERE task_id = %s", (orjson.dumps(answers).decode(), task_id))

    async def take_answers(self, task_id: str) -> dict[str, Any]:
        await self._ready()
        async with self._engine.transaction("taking a task's answers") as conn:
            cur = await conn.execute(
                "SELECT answers::text FROM mcpkit_tasks WHERE task_id = %s FOR UPDATE",
                (task_id,))
            row = await cur.fetchone()
            if row is None or row[0] is None:
                return {}
            await conn.execute("UPDATE mcpkit_tasks SET answers = NULL WHERE task_id = %s",
                               (task_id,))
        taken = orjson.loads(row[0])
        return taken if isinstance(taken, dict) else {}

    async def request_cancel(self, task_id: str) -> None:
        await self._ready()
        async with self._engine.transaction("cancelling a task") as conn:
            await conn.execute("UPDATE mcpkit_tasks SET cancel_requested = true "
                               "WHERE task_id = %s", (task_id,))

    async def renew(self, task_ids: list[str], owner: str, until: float) -> None:
        if not task_ids:
            return
        await self._ready()
        async with self._engine.transaction("renewing task leases") as conn:
            await conn.execute("UPDATE mcpkit_tasks SET lease_until = %s WHERE task_id = ANY(%s) "
                               "AND lease_owner = %s", (until, list(task_ids), owner))

    async def claim(self, task_id: str, old_owner: str | None, owner: str, until: float) -> bool:
        await self._ready()
        async with self._engine.transaction("claiming a task") as conn:
            cur = await conn.execute(
                "UPDATE mcpkit_tasks SET lease_owner = %s, lease_until = %s WHERE task_id = %s "
                "AND lease_owner IS NOT DISTINCT FROM %s", (owner, until, task_id, old_owner))
            return bool(cur.rowcount == 1)

    async def stale(self, now: float) -> list[TaskRecord]:
        await self._ready()
        async with self._engine.transaction("finding stale tasks") as conn:
            cur = await conn.execute(
                _READ + "WHERE lease_until < %s AND status <> ALL(%s) "
                "AND (expires_at IS NULL OR expires_at > %s)", (now, list(_TERMINAL), now))
            rows = await cur.fetchall()
        return [_record(row) for row in rows]

    async def purge(self, now: float) -> int:
        await self._ready()
        async with self._engine.transaction("purging expired tasks") as conn:
            cur = await conn.execute("DELETE FROM mcpkit_tasks WHERE expires_at <= %s", (now,))
            return int(cur.rowcount)

    async def close(self) -> None:
        await self._engine.close()
