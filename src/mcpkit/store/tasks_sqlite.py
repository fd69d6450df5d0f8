"""`SQLiteTaskStore`: tasks in an SQLite file, the embedded default of the Tasks extension.

One row per task: the record as JSON beside the columns the sweeper and the outside calls need
(status, lease, expiry, cancel request, answers not yet taken), so a heartbeat or a
`tasks/update` touches one column and never overwrites what the runner wrote. The file is in
WAL mode: a commit survives the process being killed the moment after it returns (what TASK-7
and the restart behaviour need), and readers in other processes are never blocked by a writer.
Calls run in a worker thread, one at a time per store, so the event loop never waits on disk.
"""

from __future__ import annotations

import asyncio
import sqlite3
import threading
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import orjson

from mcpkit.store.tasks import TaskRecord, TaskStore, record_from_json, record_to_json

__all__ = ["SQLiteTaskStore"]

_SCHEMA = (
    "CREATE TABLE IF NOT EXISTS mcpkit_tasks ("
    " task_id TEXT PRIMARY KEY, record BLOB NOT NULL, status TEXT NOT NULL,"
    " lease_until REAL, expires_at REAL, cancel_requested INTEGER NOT NULL DEFAULT 0,"
    " answers BLOB)",
    "CREATE INDEX IF NOT EXISTS mcpkit_tasks_lease ON mcpkit_tasks (lease_until)"
    " WHERE lease_until IS NOT NULL",
    "CREATE INDEX IF NOT EXISTS mcpkit_tasks_expiry ON mcpkit_tasks (expires_at)"
    " WHERE expires_at IS NOT NULL",
)
_TERMINAL = ("completed", "failed", "cancelled")


class SQLiteTaskStore(TaskStore):
    """Tasks in one table (`mcpkit_tasks`) of the SQLite file at `path` (made when missing)."""

    def __init__(self, path: str | Path, *, clock: Callable[[], float] = time.time,
                 timeout: float = 10.0) -> None:
        self.path = Path(path)
        self._clock = clock
        self._timeout = timeout
        self._lock = threading.Lock()
        self._db: sqlite3.Connection | None = None

    def _connect(self) -> sqlite3.Connection:
        if self._db is None:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            db = sqlite3.connect(self.path, timeout=self._timeout, check_same_thread=False,
                                 isolation_level=None)
            deadline = time.monotonic() + self._timeout
            while True:
                try:
                    db.execute("PRAGMA journal_mode=WAL")
                    db.execute("PRAGMA synchronous=NORMAL")
                    for statement in _SCHEMA:
                        db.execute(statement)
                    break
                except sqlite3.OperationalError as exc:
                    # A new file switched to WAL by two processes at once answers "locked"
                    # without waiting for the busy timeout: retry until the timeout.
                    if "locked" not in str(exc) or time.monotonic() >= deadline:
                        db.close()
                        raise
                    time.sleep(0.01)
            self._db = db
        return self._db

    def _run(self, sql: str, args: Sequence[Any] = ()) -> sqlite3.Cursor:
        with self._lock:
            return self._connect().execute(sql, args)

    async def _call(self, fn: Callable[..., Any], *args: Any) -> Any:
        return await asyncio.to_thread(fn, *args)

    # -- the calls, each one statement (so one transaction) ----------------------------------

    def _create(self, record: TaskRecord) -> None:
        try:
            self._run(
                "INSERT INTO mcpkit_tasks (task_id, record, status, lease_until, expires_at)"
                " VALUES (?, ?, ?, ?, ?)",
                (record.task_id, record_to_json(record), record.status, record.lease_until,
                 record.expires_at))
        except sqlite3.IntegrityError:
            raise ValueError(f"task {record.task_id!r} already exists") from None

    def _get(self, task_id: str) -> TaskRecord | None:
        row = self._run(
            "SELECT record, cancel_requested FROM mcpkit_tasks WHERE task_id = ?"
            " AND (expires_at IS NULL OR expires_at > ?)", (task_id, self._clock())).fetchone()
        if row is None:
            return None
        record = record_from_json(row[0])
        record.cancel_requested = bool(row[1])
        return record

    def _save(self, record: TaskRecord) -> None:
        self._run(
            "UPDATE mcpkit_tasks SET record = ?, status = ?, lease_until = ?, expires_at = ?"
            " WHERE task_id = ?",
            (record_to_json(record), record.status, record.lease_until, record.expires_at,
             record.task_id))

    def _put_answers(self, task_id: str, answers: dict[str, Any]) -> None:
        # json_patch merges the new answers into those not yet taken, in one statement.
        self._run(
            "UPDATE mcpkit_tasks SET answers = json_patch(coalesce(answers, '{}'), ?)"
            " WHERE task_id = ?", (orjson.dumps(answers).decode(), task_id))

    def _take_answers(self, task_id: str) -> dict[str, Any]:
        with self._lock:
            db = self._connect()
            db.execute("BEGIN IMMEDIATE")
            try:
                row = db.execute("SELECT answers FROM mcpkit_tasks WHERE task_id = ?",
                                 (task_id,)).fetchone()
                if row is not None and row[0] is not None:
                    db.execute("UPDATE mcpkit_tasks SET answers = NULL WHERE task_id = ?",
                               (task_id,))
                db.execute("COMMIT")
            except BaseException:
                db.execute("ROLLBACK")
                raise
        if row is None or row[0] is None:
            return {}
        taken = orjson.loads(row[0])
        return taken if isinstance(taken, dict) else {}

    def _request_cancel(self, task_id: str) -> None:
        self._run("UPDATE mcpkit_tasks SET cancel_requested = 1 WHERE task_id = ?", (task_id,))

    def _renew(self, task_ids: list[str], owner: str, until: float) -> None:
        with self._lock:
            db = self._connect()
            db.executemany(
                "UPDATE mcpkit_tasks SET lease_until = ?,"
                " record = json_set(record, '$.lease_until', ?)"
                " WHERE task_id = ? AND json_extract(record, '$.lease_owner') = ?",
                [(until, until, task_id, owner) for task_id in task_ids])

    def _claim(self, task_id: str, old_owner: str | None, owner: str, until: float) -> bool:
        # One conditional UPDATE: SQLite's write lock lets only one claimant match the owner.
        return self._run(
            "UPDATE mcpkit_tasks SET lease_until = ?, record = json_set(record,"
            " '$.lease_owner', ?, '$.lease_until', ?) WHERE task_id = ?"
            " AND json_extract(record, '$.lease_owner') IS ?",
            (until, owner, until, task_id, old_owner)).rowcount == 1

    def _stale(self, now: float) -> list[TaskRecord]:
        rows = self._run(
            "SELECT record, cancel_requested FROM mcpkit_tasks WHERE lease_until < ?"
            " AND status NOT IN (?, ?, ?) AND (expires_at IS NULL OR expires_at > ?)",
            (now, *_TERMINAL, now)).fetchall()
        found = []
        for data, cancel in rows:
            record = record_from_json(data)
            record.cancel_requested = bool(cancel)
            found.append(record)
        return found

    def _purge(self, now: float) -> int:
        return self._run("DELETE FROM mcpkit_tasks WHERE expires_at <= ?", (now,)).rowcount

    async def create(self, record: TaskRecord) -> None:
        await self._call(self._create, record)

    async def get(self, task_id: str) -> TaskRecord | None:
        found: TaskRecord | None = await self._call(self._get, task_id)
        return found

    async def save(self, record: TaskRecord) -> None:
        await self._call(self._save, record)

    async def put_answers(self, task_id: str, answers: dict[str, Any]) -> None:
        await self._call(self._put_answers, task_id, answers)

    async def take_answers(self, task_id: str) -> dict[str, Any]:
        taken: dict[str, Any] = await self._call(self._take_answers, task_id)
        return taken

    async def request_cancel(self, task_id: str) -> None:
        await self._call(self._request_cancel, task_id)

    async def renew(self, task_ids: list[str], owner: str, until: float) -> None:
        if task_ids:
            await self._call(self._renew, task_ids, owner, until)

    async def claim(self, task_id: str, old_owner: str | None, owner: str, until: float) -> bool:
        claimed: bool = await self._call(self._claim, task_id, old_owner, owner, until)
        return claimed

    async def stale(self, now: float) -> list[TaskRecord]:
        found: list[TaskRecord] = await self._call(self._stale, now)
        return found

    async def purge(self, now: float) -> int:
        gone: int = await self._call(self._purge, now)
        return gone

    async def close(self) -> None:
        with self._lock:
            if self._db is not None:
                self._db.close()
                self._db = None
