"""PostgreSQL behind the store seams: the connection pool every seam of one backend shares,
and `PostgresStore`, the single-use records.

psycopg 3's async connections come from one `psycopg_pool.AsyncConnectionPool`, opened on
first use (so building a server connects to nothing) and checked before each use, so a server
restarted under us costs the one request that finds its connection dead nothing: the pool
replaces it. While the server is down a request waits at most `timeout` seconds for a
connection and then fails with `StoreUnavailableError` (-32603, HTTP 503); the process stays
up and the pool reconnects in the background. The check costs no round trip for a connection
with nothing waiting on its socket: a server that stopped or restarted has closed the socket
(or sent its termination notice), which makes it readable, and only then is it pinged (and
dropped when the ping fails). A server that hangs instead (its processes
stopped, packets dropped) accepts connections and never answers: every operation, from
lending a connection through its last statement and the commit, ends within `deadline`
seconds (the URL's `timeout=`, 5 by default) with the same error, and the connection that
hung is closed rather than lent again. Every write commits before the call returns,
so what a caller was told is recorded is on the server: an operation of one statement runs
it on an autocommit connection (`statement`: one round trip, committed when it answers), one
of several in a transaction (`transaction`).

Tables are created on first use, under a transaction-level advisory lock, so replicas starting
at once never race on `CREATE TABLE IF NOT EXISTS` (which is not safe concurrently on its own).
Times are Unix seconds from the caller's clock, as in every other backend.

Imports: the standard library, `mcpkit.errors`, `mcpkit.protocol.extras`; psycopg when used.
"""

from __future__ import annotations

import asyncio
import select
import time
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from typing import Any, Final

from mcpkit.protocol.extras import missing_extra, require
from mcpkit.store import Store
from mcpkit.store.outage import DEFAULT_DEADLINE_S, deadline, unavailable

__all__ = [
    "PostgresEngine",
    "PostgresStore",
    "redact",
]

_LOCK_KEY: Final = 0x6D63706B
"""The advisory lock taken while tables are created ("mcpk")."""

_RECORDS: Final = (
    "CREATE TABLE IF NOT EXISTS mcpkit_records ("
    "key TEXT PRIMARY KEY, value BYTEA NOT NULL, expires_at DOUBLE PRECISION NOT NULL)",
    "CREATE INDEX IF NOT EXISTS mcpkit_records_expiry ON mcpkit_records (expires_at)",
)
_COUNTERS: Final = (
    "CREATE TABLE IF NOT EXISTS mcpkit_counters ("
    "key TEXT PRIMARY KEY, count BIGINT NOT NULL, expires_at DOUBLE PRECISION NOT NULL)",
)
_INCR: Final = (
    "INSERT INTO mcpkit_counters (key, count, expires_at) VALUES (%s, 1, %s) "
    "ON CONFLICT (key) DO UPDATE SET "
    "count = CASE WHEN mcpkit_counters.expires_at <= %s THEN 1 "
    "ELSE mcpkit_counters.count + 1 END, "
    "expires_at = CASE WHEN mcpkit_counters.expires_at <= %s THEN excluded.expires_at "
    "ELSE mcpkit_counters.expires_at END "
    "RETURNING count"
)
"""One more for the key, atomic under the row lock whichever replica runs it."""
_ADD: Final = (
    "INSERT INTO mcpkit_records (key, value, expires_at) VALUES (%s, %s, %s) "
    "ON CONFLICT (key) DO UPDATE SET value = excluded.value, expires_at = excluded.expires_at "
    "WHERE mcpkit_records.expires_at <= %s"
)


def _drivers(feature: str) -> tuple[Any, Any]:
    psycopg = require("psycopg", feature)
    try:
        import psycopg_pool
    except ImportError as exc:
        raise missing_extra(exc, feature, "postgres") from None
    return psycopg, psycopg_pool


class PostgresEngine:
    """One pool to one database, shared by the seams of a backend, and the one place where
    the driver's failures become `StoreUnavailableError`."""

    name: Final = "postgresql"

    def __init__(self, url: str, *, timeout: float = 2.0, max_size: int = 10,
                 deadline: float = DEFAULT_DEADLINE_S) -> None:
        self._psycopg, self._pool_module = _drivers(f"the store {redact(url)}")
        self.url = url
        self.deadline = deadline
        self.timeout = min(timeout, deadline)
        self.max_size = max_size
        self._pool: Any = None
        self._ready: set[str] = set()
        self._lock: asyncio.Lock | None = None

    async def _get_pool(self) -> Any:
        if self._pool is None:
            if self._lock is None:
                self._lock = asyncio.Lock()
            async with self._lock:
                if self._pool is None:
                    pool = self._pool_module.AsyncConnectionPool(
                        self.url, min_size=1, max_size=self.max_size, open=False,
                        timeout=self.timeout, reconnect_timeout=float("inf"),
                        kwargs={"connect_timeout": max(1, int(self.timeout)),
                                "autocommit": True},
                        check=_check,
                    )
                    await pool.open(wait=False)
                    self._pool = pool
        return self._pool

    @asynccontextmanager
    async def transaction(self, what: str) -> AsyncIterator[Any]:
        """A connection in a transaction that commits when the block ends without error;
        an unreachable server is `StoreUnavailableError` naming `what`."""
        pool = await self._get_pool()
        try:
            async with deadline(self.deadline), pool.connection() as conn, conn.transaction():
                yield conn
        except (self._psycopg.OperationalError, self._pool_module.PoolTimeout,
                TimeoutError) as exc:
            raise unavailable("PostgreSQL", self.name, what, exc) from None

    @asynccontextmanager
    async def statement(self, what: str) -> AsyncIterator[Any]:
        """A connection for one statement, which commits when it answers (autocommit): no
        BEGIN and COMMIT round trips around it. Several statements each commit on their own,
        so only an operation whose statements are independent may run more than one here."""
        pool = await self._get_pool()
        try:
            async with deadline(self.deadline), pool.connection() as conn:
                yield conn
        except (self._psycopg.OperationalError, self._pool_module.PoolTimeout,
                TimeoutError) as exc:
            raise unavailable("PostgreSQL", self.name, what, exc) from None

    async def ensure(self, seam: str, statements: tuple[str, ...]) -> None:
        """Create a seam's tables once per process, serialised across replicas."""
        if seam in self._ready:
            return
        async with self.transaction(f"creating the {seam} tables") as conn:
            await conn.execute("SELECT pg_advisory_xact_lock(%s)", (_LOCK_KEY,))
            for statement in statements:
                await conn.execute(statement)
        self._ready.add(seam)

    async def close(self) -> None:
        pool, self._pool = self._pool, None
        if pool is not None:
            await pool.close()


async def _check(conn: Any) -> None:
    """The pool's check of a connection it lends: a ping only when something waits on the
    socket of an idle connection (a closed socket reads as end of file; a server shutting
    down sends its notice first). Nothing to read means the server has not hung up on it: a
    server that hangs with the socket open is caught by `deadline`, as a ping would be."""
    if conn.closed or conn.broken or _readable(conn.pgconn.socket):
        await conn.execute("")  # raises for a connection that is closed or dead


def _readable(fd: int) -> bool:
    """Whether `fd` has something to read (or its end) now; poll, not select, which refuses
    descriptors past 1023 in a busy process."""
    waiting = select.poll()
    waiting.register(fd, select.POLLIN)
    return bool(waiting.poll(0))


class PostgresStore(Store):
    """Expiring records in one table (`mcpkit_records`); `add` is one upsert that overwrites
    only an expired record, atomic under the row lock whichever replica runs it."""

    def __init__(self, engine: PostgresEngine, *, clock: Callable[[], float] = time.time) -> None:
        self._engine = engine
        self._clock = clock
        self._adds = 0

    async def add(self, key: str, value: bytes, expires_at: float) -> bool:
        await self._engine.ensure("records", _RECORDS)
        now = self._clock()
        async with self._engine.statement("recording a single-use key") as conn:
            cur = await conn.execute(_ADD, (key, value, expires_at, now))
            added = bool(cur.rowcount == 1)
            self._adds += 1
            if added and self._adds % 1024 == 0:
                await conn.execute("DELETE FROM mcpkit_records WHERE expires_at <= %s", (now,))
        return added

    async def incr(self, key: str, expires_at: float) -> int:
        await self._engine.ensure("counters", _COUNTERS)
        now = self._clock()
        async with self._engine.statement("counting for a rate limit") as conn:
            cur = await conn.execute(_INCR, (key, expires_at, now, now))
            row = await cur.fetchone()
            count = int(row[0])
            self._adds += 1
            if count == 1 and self._adds % 1024 == 0:
                await conn.execute("DELETE FROM mcpkit_counters WHERE expires_at <= %s", (now,))
        return count

    async def get(self, key: str) -> bytes | None:
        await self._engine.ensure("records", _RECORDS)
        async with self._engine.statement("reading a record") as conn:
            cur = await conn.execute(
                "SELECT value FROM mcpkit_records WHERE key = %s AND expires_at > %s",
                (key, self._clock()))
            row = await cur.fetchone()
        return None if row is None else bytes(row[0])

    async def delete(self, key: str) -> None:
        await self._engine.ensure("records", _RECORDS)
        async with self._engine.statement("deleting a record") as conn:
            await conn.execute("DELETE FROM mcpkit_records WHERE key = %s", (key,))

    async def close(self) -> None:
        await self._engine.close()


def redact(url: str) -> str:
    """The URL without its password, for messages."""
    scheme, sep, rest = url.partition("://")
    creds, at, host = rest.rpartition("@")
    if not at:
        return url
    user = creds.partition(":")[0]
    return f"{scheme}{sep}{user}@{host}"
