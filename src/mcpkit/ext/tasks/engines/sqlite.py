"""`SQLiteTaskStore`: tasks in an SQLite file, the embedded default of the Tasks extension.

One row per task: the runner's record as JSON beside the columns others change on their own
(the lease, the cancel request, the answers) and those the sweeper and the shares read
(status, expiry, the owner's tag, the size), so a heartbeat or a `tasks/update` touches its
columns and never the runner's record, and a save writes the record only while its caller
holds the lease (`mcpkit.ext.tasks.records`). The file is in WAL mode: a commit survives the process
being killed the moment after it returns (what TASK-7 and the restart behaviour need), and
readers in other processes are never blocked by a writer. A step that reads and then writes
(a create under a quota, keeping answers) is one `BEGIN IMMEDIATE` transaction, so two
processes on one file never interleave inside it. Calls run in a worker thread, one at a time
per store, so the event loop never waits on disk.

A file an older release made (no lease owner, owner tag or size columns) gains them when it is
opened; its rows keep working, and count toward no share.
"""

from __future__ import annotations

import asyncio
import sqlite3
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any, Final

import orjson

from mcpkit.ext.tasks.records import (
    TaskQuota,
    TaskRecord,
    TaskStore,
    TaskUsage,
    owner_tag,
    record_from_json,
    stored_json,
)

__all__ = ["SQLiteTaskStore"]

_SCHEMA: Final = (
    "CREATE TABLE IF NOT EXISTS mcpkit_tasks ("
    " task_id TEXT PRIMARY KEY, record BLOB NOT NULL, status TEXT NOT NULL,"
    " lease_until REAL, expires_at REAL, cancel_requested INTEGER NOT NULL DEFAULT 0,"
    " answers BLOB, lease_owner TEXT, owner_tag TEXT, size INTEGER NOT NULL DEFAULT 0)",
)
_ADDED: Final = (("lease_owner", "TEXT"), ("owner_tag", "TEXT"),
                 ("size", "INTEGER NOT NULL DEFAULT 0"))
"""Columns a file made by an older release lacks."""
_INDEXES: Final = (
    "CREATE INDEX IF NOT EXISTS mcpkit_tasks_lease ON mcpkit_tasks (lease_until)"
    " WHERE lease_until IS NOT NULL",
    "CREATE INDEX IF NOT EXISTS mcpkit_tasks_expiry ON mcpkit_tasks (expires_at)"
    " WHERE expires_at IS NOT NULL",
    "CREATE INDEX IF NOT EXISTS mcpkit_tasks_owner ON mcpkit_tasks (owner_tag)",
)
_UNFINISHED: Final = "status NOT IN ('completed', 'failed', 'cancelled')"
_READ: Final = ("SELECT record, lease_owner, lease_until, cancel_requested, answers "
                "FROM mcpkit_tasks ")
_SAVE: Final = (
    "UPDATE mcpkit_tasks SET record = ?1, status = ?2,"
    " lease_owner = CASE WHEN ?3 THEN NULL ELSE lease_owner END,"
    " lease_until = CASE WHEN ?3 THEN NULL WHEN ?4 THEN 0.0 ELSE lease_until END,"
    " answers = CASE WHEN ?3 THEN NULL ELSE answers END,"
    " size = length(?1) + CASE WHEN ?3 THEN 0 ELSE coalesce(length(answers), 0) END"
    " WHERE task_id = ?5 AND lease_owner = ?6 AND " + _UNFINISHED
)
"""?1 record, ?2 status, ?3 it is terminal, ?4 the lease ends now (a release), ?5 id, ?6 owner."""
_USAGE: Final = (
    "SELECT count(*), coalesce(sum(" + _UNFINISHED + "), 0), coalesce(sum(size), 0),"
    " min(expires_at) FROM mcpkit_tasks WHERE owner_tag = ? AND"
    " (expires_at IS NULL OR expires_at > ?)"
)


def _record(row: Sequence[Any]) -> TaskRecord:
    record = record_from_json(row[0])
    record.lease_owner, record.lease_until = row[1], row[2]
    record.cancel_requested = bool(row[3])
    if row[4] is not None:
        answers = orjson.loads(row[4])
        record.answers = answers if isinstance(answers, dict) else {}
    return record


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
                    self._set_up(db)
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

    @staticmethod
    def _set_up(db: sqlite3.Connection) -> None:
        for statement in _SCHEMA:
            db.execute(statement)
        have = {row[1] for row in db.execute("PRAGMA table_info(mcpkit_tasks)")}
        for name, kind in _ADDED:
            if name not in have:
                try:
                    db.execute(f"ALTER TABLE mcpkit_tasks ADD COLUMN {name} {kind}")
                except sqlite3.OperationalError as exc:  # another process added it first
                    if "duplicate column" not in str(exc):
                        raise
                if name == "lease_owner":  # an older file kept the owner in the record only
                    db.execute("UPDATE mcpkit_tasks SET lease_owner ="
                               " json_extract(record, '$.lease_owner') WHERE lease_owner IS NULL")
        for statement in _INDEXES:
            db.execute(statement)

    def _run(self, sql: str, args: Sequence[Any] = ()) -> sqlite3.Cursor:
        with self._lock:
            return self._connect().execute(sql, args)

    @contextmanager
    def _immediate(self) -> Iterator[sqlite3.Connection]:
        """One write transaction, taken before its first read (other processes wait)."""
        with self._lock:
            db = self._connect()
            db.execute("BEGIN IMMEDIATE")
            try:
                yield db
            except BaseException:
                db.execute("ROLLBACK")
                raise
            db.execute("COMMIT")

    async def _call(self, fn: Callable[..., Any], *args: Any) -> Any:
        return await asyncio.to_thread(fn, *args)

    # -- the calls ------------------------------------------------------------------------------

    @staticmethod
    def _usage_in(db: sqlite3.Connection, owner: str | None, now: float) -> TaskUsage:
        stored, active, size, first = db.execute(_USAGE, (owner_tag(owner), now)).fetchone()
        return TaskUsage(int(active), int(stored), int(size), first)

    def _create(self, record: TaskRecord, quota: TaskQuota | None) -> TaskUsage | None:
        data = stored_json(record)
        answers = orjson.dumps(record.answers) if record.answers else None
        size = len(data) + len(answers or b"")
        with self._immediate() as db:
            if quota is not None:
                used = self._usage_in(db, record.owner, self._clock())
                if used.full(quota, size):
                    return used
            try:
                db.execute(
                    "INSERT INTO mcpkit_tasks (task_id, record, status, lease_owner,"
                    " lease_until, expires_at, owner_tag, size, answers)"
                    " VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
                    (record.task_id, data, record.status, record.lease_owner, record.lease_until,
                     record.expires_at, owner_tag(record.owner), size, answers))
            except sqlite3.IntegrityError:
                raise ValueError(f"task {record.task_id!r} already exists") from None
        return None

    def _get(self, task_id: str) -> TaskRecord | None:
        row = self._run(_READ + "WHERE task_id = ? AND (expires_at IS NULL OR expires_at > ?)",
                        (task_id, self._clock())).fetchone()
        return None if row is None else _record(row)

    def _save(self, record: TaskRecord, owner: str, release: bool) -> bool:
        return self._run(_SAVE, (stored_json(record), record.status, record.terminal, release,
                                 record.task_id, owner)).rowcount == 1

    def _put_answers(self, task_id: str, answers: dict[str, Any]) -> None:
        with self._immediate() as db:
            row = db.execute("SELECT answers FROM mcpkit_tasks WHERE task_id = ? AND "
                             + _UNFINISHED, (task_id,)).fetchone()
            if row is None:
                return
            kept = orjson.loads(row[0]) if row[0] is not None else {}
            fresh = {k: v for k, v in answers.items() if k not in kept}
            if fresh:
                merged = orjson.dumps({**kept, **fresh})
                db.execute("UPDATE mcpkit_tasks SET answers = ?, size = length(record) + ?"
                           " WHERE task_id = ?", (merged, len(merged), task_id))

    def _request_cancel(self, task_id: str) -> None:
        self._run("UPDATE mcpkit_tasks SET cancel_requested = 1 WHERE task_id = ?", (task_id,))

    def _renew(self, task_ids: list[str], owner: str, until: float) -> set[str]:
        held = set()
        with self._immediate() as db:
            for task_id in task_ids:
                if db.execute("UPDATE mcpkit_tasks SET lease_until = ? WHERE task_id = ? AND"
                              " lease_owner = ? AND " + _UNFINISHED,
                              (until, task_id, owner)).rowcount == 1:
                    held.add(task_id)
        return held

    def _claim(self, task_id: str, owner: str, now: float, until: float) -> TaskRecord | None:
        # One conditional UPDATE: SQLite's write lock lets one claimant see the lapsed lease.
        with self._immediate() as db:
            if db.execute(
                    "UPDATE mcpkit_tasks SET lease_owner = ?, lease_until = ? WHERE task_id = ?"
                    " AND lease_until < ? AND (expires_at IS NULL OR expires_at > ?) AND "
                    + _UNFINISHED, (owner, until, task_id, now, now)).rowcount != 1:
                return None
            row = db.execute(_READ + "WHERE task_id = ?", (task_id,)).fetchone()
        return _record(row)

    def _stale(self, now: float) -> list[TaskRecord]:
        rows = self._run(
            _READ + "WHERE lease_until < ? AND " + _UNFINISHED +
            " AND (expires_at IS NULL OR expires_at > ?)", (now, now)).fetchall()
        return [_record(row) for row in rows]

    def _purge(self, now: float) -> int:
        return self._run("DELETE FROM mcpkit_tasks WHERE expires_at <= ?", (now,)).rowcount

    def _usage(self, owner: str | None, now: float) -> TaskUsage:
        with self._lock:
            return self._usage_in(self._connect(), owner, now)

    async def create(self, record: TaskRecord, quota: TaskQuota | None = None
                     ) -> TaskUsage | None:
        used: TaskUsage | None = await self._call(self._create, record, quota)
        return used

    async def get(self, task_id: str) -> TaskRecord | None:
        found: TaskRecord | None = await self._call(self._get, task_id)
        return found

    async def save(self, record: TaskRecord, owner: str) -> bool:
        saved: bool = await self._call(self._save, record, owner, False)
        return saved

    async def put_answers(self, task_id: str, answers: dict[str, Any]) -> None:
        if answers:
            await self._call(self._put_answers, task_id, answers)

    async def request_cancel(self, task_id: str) -> None:
        await self._call(self._request_cancel, task_id)

    async def renew(self, task_ids: list[str], owner: str, until: float) -> set[str]:
        if not task_ids:
            return set()
        held: set[str] = await self._call(self._renew, task_ids, owner, until)
        return held

    async def claim(self, task_id: str, owner: str, now: float, until: float
                    ) -> TaskRecord | None:
        claimed: TaskRecord | None = await self._call(self._claim, task_id, owner, now, until)
        return claimed

    async def release(self, record: TaskRecord, owner: str) -> bool:
        released: bool = await self._call(self._save, record, owner, True)
        return released

    async def stale(self, now: float) -> list[TaskRecord]:
        found: list[TaskRecord] = await self._call(self._stale, now)
        return found

    async def purge(self, now: float) -> int:
        gone: int = await self._call(self._purge, now)
        return gone

    async def usage(self, owner: str | None, now: float) -> TaskUsage:
        used: TaskUsage = await self._call(self._usage, owner, now)
        return used

    async def close(self) -> None:
        with self._lock:
            if self._db is not None:
                self._db.close()
                self._db = None
