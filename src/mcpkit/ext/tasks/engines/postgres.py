"""`PostgresTaskStore`: the Tasks extension's records in PostgreSQL, shared by every replica.

One row per task: the runner's record as JSON beside the columns that others change on their
own (the lease, the cancel request, the answers) and those the sweeper and the shares read
(status, expiry, the owner's tag, the size), so a heartbeat, a `tasks/cancel` or a
`tasks/update` touches its columns and never the runner's record, and a save writes only while
its caller holds the lease, as `mcpkit.ext.tasks.records` requires. Every call is one transaction
that commits before it returns (a created task is found by any replica at once, TASK-7); a
claim is one conditional UPDATE, so of two sweepers only one takes over a task, and a create
under a quota holds a transaction-level advisory lock on its owner, so two replicas never both
take the last place of one share. The record and the answers are kept as JSON bytes (`record`,
`given`), never in a JSON column: PostgreSQL's JSON types refuse the NUL character (`\u0000`)
that a client's arguments or answers, and so a result or a status message, may hold.

A table an older release made gains the columns it lacks when first used (its `answers` JSON
column, which nothing reads any more, stays empty).

Imports: the standard library, `mcpkit.store`.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any, Final

import orjson

from mcpkit.ext.tasks.records import (
    TERMINAL_STATUSES,
    TaskQuota,
    TaskRecord,
    TaskStore,
    TaskUsage,
    owner_tag,
    record_from_json,
    stored_json,
)
from mcpkit.store.postgres_store import PostgresEngine

__all__ = ["PostgresTaskStore"]

_TABLES: Final = (
    "CREATE TABLE IF NOT EXISTS mcpkit_tasks (task_id TEXT PRIMARY KEY, record BYTEA NOT NULL, "
    "status TEXT NOT NULL, lease_owner TEXT, lease_until DOUBLE PRECISION, "
    "expires_at DOUBLE PRECISION, cancel_requested BOOLEAN NOT NULL DEFAULT false)",
    "ALTER TABLE mcpkit_tasks ADD COLUMN IF NOT EXISTS owner_tag TEXT, "
    "ADD COLUMN IF NOT EXISTS size BIGINT NOT NULL DEFAULT 0, "
    "ADD COLUMN IF NOT EXISTS given BYTEA",
    "CREATE INDEX IF NOT EXISTS mcpkit_tasks_lease ON mcpkit_tasks (lease_until) "
    "WHERE lease_until IS NOT NULL",
    "CREATE INDEX IF NOT EXISTS mcpkit_tasks_expiry ON mcpkit_tasks (expires_at) "
    "WHERE expires_at IS NOT NULL",
    "CREATE INDEX IF NOT EXISTS mcpkit_tasks_owner ON mcpkit_tasks (owner_tag)",
)
_TERMINAL: Final = list(TERMINAL_STATUSES)
_COLUMNS: Final = "record, lease_owner, lease_until, cancel_requested, given"
_READ: Final = f"SELECT {_COLUMNS} FROM mcpkit_tasks "
_SAVE: Final = (
    "UPDATE mcpkit_tasks SET record = %(record)s, status = %(status)s, "
    "lease_owner = CASE WHEN %(ended)s THEN NULL ELSE lease_owner END, "
    "lease_until = CASE WHEN %(ended)s THEN NULL WHEN %(release)s THEN 0 ELSE lease_until END, "
    "given = CASE WHEN %(ended)s THEN NULL ELSE given END, "
    "size = octet_length(%(record)s) + "
    "CASE WHEN %(ended)s THEN 0 ELSE coalesce(octet_length(given), 0) END "
    "WHERE task_id = %(id)s AND lease_owner = %(owner)s AND status <> ALL(%(terminal)s)"
)
_USAGE: Final = (
    "SELECT count(*), count(*) FILTER (WHERE status <> ALL(%s)), coalesce(sum(size), 0), "
    "min(expires_at) FROM mcpkit_tasks WHERE owner_tag = %s AND "
    "(expires_at IS NULL OR expires_at > %s)"
)


def _record(row: tuple[Any, ...]) -> TaskRecord:
    record = record_from_json(bytes(row[0]))
    record.lease_owner, record.lease_until, record.cancel_requested = row[1], row[2], bool(row[3])
    if row[4] is not None:
        answers = orjson.loads(bytes(row[4]))
        record.answers = answers if isinstance(answers, dict) else {}
    return record


def _lock_key(tag: str) -> int:
    """The advisory lock of one owner's share: 60 bits of its tag (a bigint, never negative)."""
    return int(tag[:15], 16)


class PostgresTaskStore(TaskStore):
    """Tasks in one table (`mcpkit_tasks`) of the database behind `engine`."""

    def __init__(self, engine: PostgresEngine, *, clock: Callable[[], float] = time.time) -> None:
        self._engine = engine
        self._clock = clock

    async def _ready(self) -> None:
        await self._engine.ensure("tasks", _TABLES)

    @staticmethod
    async def _usage_in(conn: Any, tag: str, now: float) -> TaskUsage:
        cur = await conn.execute(_USAGE, (_TERMINAL, tag, now))
        stored, active, size, first = await cur.fetchone()
        return TaskUsage(int(active), int(stored), int(size), first)

    async def create(self, record: TaskRecord, quota: TaskQuota | None = None
                     ) -> TaskUsage | None:
        await self._ready()
        data, tag = stored_json(record), owner_tag(record.owner)
        answers = orjson.dumps(record.answers) if record.answers else None
        size = len(data) + len(answers or b"")
        async with self._engine.transaction("creating a task") as conn:
            if quota is not None:
                await conn.execute("SELECT pg_advisory_xact_lock(%s)", (_lock_key(tag),))
                used = await self._usage_in(conn, tag, self._clock())
                if used.full(quota, size):
                    return used
            cur = await conn.execute(
                "INSERT INTO mcpkit_tasks (task_id, record, status, lease_owner, lease_until, "
                "expires_at, owner_tag, size, given) "
                "VALUES (%s, %s, %s, %s, %s, %s, %s, %s, %s) ON CONFLICT DO NOTHING",
                (record.task_id, data, record.status, record.lease_owner,
                 record.lease_until, record.expires_at, tag, size, answers))
            if cur.rowcount != 1:
                raise ValueError(f"task {record.task_id!r} already exists")
        return None

    async def get(self, task_id: str) -> TaskRecord | None:
        await self._ready()
        async with self._engine.transaction("reading a task") as conn:
            cur = await conn.execute(
                _READ + "WHERE task_id = %s AND (expires_at IS NULL OR expires_at > %s)",
                (task_id, self._clock()))
            row = await cur.fetchone()
        return None if row is None else _record(row)

    async def _save(self, record: TaskRecord, owner: str, release: bool, what: str) -> bool:
        await self._ready()
        async with self._engine.transaction(what) as conn:
            cur = await conn.execute(_SAVE, {
                "record": stored_json(record), "status": record.status,
                "ended": record.terminal, "release": release, "id": record.task_id,
                "owner": owner, "terminal": _TERMINAL})
            return bool(cur.rowcount == 1)

    async def save(self, record: TaskRecord, owner: str) -> bool:
        return await self._save(record, owner, False, "saving a task")

    async def release(self, record: TaskRecord, owner: str) -> bool:
        return await self._save(record, owner, True, "handing a task back")

    async def put_answers(self, task_id: str, answers: dict[str, Any]) -> None:
        if not answers:
            return
        await self._ready()
        async with self._engine.transaction("keeping a task's answers") as conn:
            cur = await conn.execute(
                "SELECT given FROM mcpkit_tasks WHERE task_id = %s AND status <> ALL(%s) "
                "FOR UPDATE", (task_id, _TERMINAL))
            row = await cur.fetchone()
            if row is None:
                return
            kept = orjson.loads(bytes(row[0])) if row[0] is not None else {}
            fresh = {k: v for k, v in answers.items() if k not in kept}
            if fresh:
                merged = orjson.dumps({**kept, **fresh})
                await conn.execute(
                    "UPDATE mcpkit_tasks SET given = %s, size = octet_length(record) + %s "
                    "WHERE task_id = %s", (merged, len(merged), task_id))

    async def request_cancel(self, task_id: str) -> None:
        await self._ready()
        async with self._engine.transaction("cancelling a task") as conn:
            await conn.execute("UPDATE mcpkit_tasks SET cancel_requested = true "
                               "WHERE task_id = %s", (task_id,))

    async def renew(self, task_ids: list[str], owner: str, until: float) -> set[str]:
        if not task_ids:
            return set()
        await self._ready()
        async with self._engine.transaction("renewing task leases") as conn:
            cur = await conn.execute(
                "UPDATE mcpkit_tasks SET lease_until = %s WHERE task_id = ANY(%s) "
                "AND lease_owner = %s AND status <> ALL(%s) RETURNING task_id",
                (until, list(task_ids), owner, _TERMINAL))
            return {row[0] for row in await cur.fetchall()}

    async def claim(self, task_id: str, owner: str, now: float, until: float
                    ) -> TaskRecord | None:
        await self._ready()
        async with self._engine.transaction("claiming a task") as conn:
            cur = await conn.execute(
                "UPDATE mcpkit_tasks SET lease_owner = %s, lease_until = %s WHERE task_id = %s "
                "AND lease_until < %s AND (expires_at IS NULL OR expires_at > %s) "
                f"AND status <> ALL(%s) RETURNING {_COLUMNS}",
                (owner, until, task_id, now, now, _TERMINAL))
            row = await cur.fetchone()
        return None if row is None else _record(row)

    async def stale(self, now: float) -> list[TaskRecord]:
        await self._ready()
        async with self._engine.transaction("finding stale tasks") as conn:
            cur = await conn.execute(
                _READ + "WHERE lease_until < %s AND status <> ALL(%s) "
                "AND (expires_at IS NULL OR expires_at > %s)", (now, _TERMINAL, now))
            rows = await cur.fetchall()
        return [_record(row) for row in rows]

    async def purge(self, now: float) -> int:
        await self._ready()
        async with self._engine.transaction("purging expired tasks") as conn:
            cur = await conn.execute("DELETE FROM mcpkit_tasks WHERE expires_at <= %s", (now,))
            return int(cur.rowcount)

    async def usage(self, owner: str | None, now: float) -> TaskUsage:
        await self._ready()
        async with self._engine.transaction("counting a principal's tasks") as conn:
            return await self._usage_in(conn, owner_tag(owner), now)

    async def close(self) -> None:
        await self._engine.close()
