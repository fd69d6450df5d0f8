"""`SQLiteStore`: records in an SQLite file, shared by every process on the host that opens it:
the default single-use store (`DEFAULT_FILE` in the user's data folder).

`add` is one upsert that only overwrites an expired record, so SQLite's write lock makes it
atomic across processes. Calls run in a worker thread (`asyncio.to_thread`): a write waits for
the disk and must not stall the event loop.
"""

from __future__ import annotations

import asyncio
import sqlite3
import threading
import time
from collections.abc import Callable
from pathlib import Path

from mcpkit.store import Store

__all__ = [
    "DEFAULT_FILE",
    "SQLiteStore",
]

DEFAULT_FILE = "single-use.sqlite3"
"""The file a server given no store keeps its single-use records in, in the user's data
folder beside the key ring (`mcpkit.server.sealing.Sealer.store`)."""

_SCHEMA = (
    "CREATE TABLE IF NOT EXISTS mcpkit_records ("
    "key TEXT PRIMARY KEY, value BLOB NOT NULL, expires_at REAL NOT NULL)"
)
_COUNTERS = (
    "CREATE TABLE IF NOT EXISTS mcpkit_counters ("
    "key TEXT PRIMARY KEY, count INTEGER NOT NULL, expires_at REAL NOT NULL)"
)
_INCR = (
    "INSERT INTO mcpkit_counters (key, count, expires_at) VALUES (?, 1, ?) "
    "ON CONFLICT (key) DO UPDATE SET "
    "count = CASE WHEN mcpkit_counters.expires_at <= ? THEN 1 ELSE mcpkit_counters.count + 1 END, "
    "expires_at = CASE WHEN mcpkit_counters.expires_at <= ? THEN excluded.expires_at "
    "ELSE mcpkit_counters.expires_at END "
    "RETURNING count"
)
"""One more for the key, in one statement (SET reads the row as it was): SQLite's write lock
makes it atomic across processes."""
_ADD = (
    "INSERT INTO mcpkit_records (key, value, expires_at) VALUES (?, ?, ?) "
    "ON CONFLICT (key) DO UPDATE SET value = excluded.value, expires_at = excluded.expires_at "
    "WHERE mcpkit_records.expires_at <= ?"
)


class SQLiteStore(Store):
    """Expiring records in one SQLite table (`mcpkit_records`)."""

    def __init__(
        self, path: str | Path, *, clock: Callable[[], float] = time.time, timeout: float = 10.0
    ) -> None:
        self.path = Path(path)
        self._clock = clock
        self._timeout = timeout
        self._lock = threading.Lock()
        self._db: sqlite3.Connection | None = None
        self._adds = 0

    def _connect(self) -> sqlite3.Connection:
        if self._db is None:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            db = sqlite3.connect(
                self.path, timeout=self._timeout, check_same_thread=False, isolation_level=None
            )
            self._set_up(db)
            self._db = db
        return self._db

    def _set_up(self, db: sqlite3.Connection) -> None:
        # Switching a new file to WAL can answer "database is locked" at once, without waiting
        # for the busy timeout, while another process does the same: retry until the timeout.
        deadline = time.monotonic() + self._timeout
        while True:
            try:
                db.execute("PRAGMA journal_mode=WAL")
                db.execute("PRAGMA synchronous=NORMAL")
                db.execute(_SCHEMA)
                db.execute(_COUNTERS)
                return
            except sqlite3.OperationalError as exc:
                if "locked" not in str(exc) or time.monotonic() >= deadline:
                    raise
                time.sleep(0.01)

    def _add(self, key: str, value: bytes, expires_at: float) -> bool:
        now = self._clock()
        with self._lock:
            db = self._connect()
            added = db.execute(_ADD, (key, value, expires_at, now)).rowcount == 1
            self._adds += 1
            if added and self._adds % 1024 == 0:
                db.execute("DELETE FROM mcpkit_records WHERE expires_at <= ?", (now,))
            return added

    def _incr(self, key: str, expires_at: float) -> int:
        now = self._clock()
        with self._lock:
            db = self._connect()
            count = int(db.execute(_INCR, (key, expires_at, now, now)).fetchone()[0])
            self._adds += 1
            if count == 1 and self._adds % 1024 == 0:
                db.execute("DELETE FROM mcpkit_counters WHERE expires_at <= ?", (now,))
            return count

    def _get(self, key: str) -> bytes | None:
        with self._lock:
            row = self._connect().execute(
                "SELECT value FROM mcpkit_records WHERE key = ? AND expires_at > ?",
                (key, self._clock()),
            ).fetchone()
        return None if row is None else bytes(row[0])

    def _delete(self, key: str) -> None:
        with self._lock:
            self._connect().execute("DELETE FROM mcpkit_records WHERE key = ?", (key,))

    async def add(self, key: str, value: bytes, expires_at: float) -> bool:
        return await asyncio.to_thread(self._add, key, value, expires_at)

    async def get(self, key: str) -> bytes | None:
        return await asyncio.to_thread(self._get, key)

    async def incr(self, key: str, expires_at: float) -> int:
        return await asyncio.to_thread(self._incr, key, expires_at)

    async def delete(self, key: str) -> None:
        await asyncio.to_thread(self._delete, key)

    async def close(self) -> None:
        with self._lock:
            if self._db is not None:
                self._db.close()
                self._db = None
