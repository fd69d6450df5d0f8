"""`PostgresSessionStore`: legacy sessions in PostgreSQL, shared by every replica.

The same policy as `MemorySessionStore` (`mcpkit.store.sessions`): sessions idle for
`idle_s` end; an owner at `owner_limit` ends its own least recently used session; a full store
ends the least recently used anonymous session, or for an authenticated owner an
authenticated one when no anonymous one is left; otherwise the create is refused. A create
runs in one transaction under an advisory lock, so replicas creating at once cannot together
go past a limit; loads, saves and deletes are one statement each on one row (one round
trip, committed as it answers) and take no such lock.

Imports: the standard library, `mcpkit.store`.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any, Final

from mcpkit.store.postgres_store import PostgresEngine
from mcpkit.store.sessions import ANONYMOUS, SessionOwner

__all__ = ["PostgresSessionStore"]

_CREATE_LOCK: Final = 0x6D637373
"""The advisory lock one create holds ("mcss")."""
_TABLES: Final = (
    "CREATE TABLE IF NOT EXISTS mcpkit_sessions ("
    "id TEXT PRIMARY KEY, owner TEXT NOT NULL, authenticated BOOLEAN NOT NULL, "
    "seen DOUBLE PRECISION NOT NULL, state BYTEA NOT NULL)",
    "CREATE INDEX IF NOT EXISTS mcpkit_sessions_recent ON mcpkit_sessions (authenticated, seen)",
    "CREATE INDEX IF NOT EXISTS mcpkit_sessions_seen ON mcpkit_sessions (seen)",
    "CREATE INDEX IF NOT EXISTS mcpkit_sessions_owned ON mcpkit_sessions (owner, seen)",
)
_DROP_OLDEST_OWNED: Final = (
    "DELETE FROM mcpkit_sessions WHERE id IN (SELECT id FROM mcpkit_sessions WHERE owner = %s "
    "ORDER BY seen, id LIMIT %s)"
)
_LOAD: Final = (
    "WITH idle AS (DELETE FROM mcpkit_sessions WHERE id = %s AND seen <= %s) "
    "UPDATE mcpkit_sessions SET seen = %s WHERE id = %s AND seen > %s RETURNING state"
)
"""A session's state, its last use marked now; one idle too long ends instead (deleted, and
nothing returned). One statement, committed as it answers: both parts see the same snapshot."""
_VICTIM: Final = (
    "SELECT id FROM mcpkit_sessions WHERE authenticated = %s ORDER BY seen, id LIMIT 1"
)


class PostgresSessionStore:
    """Sessions as rows of `mcpkit_sessions`; `codec` turns a state into bytes and back."""

    def __init__(self, engine: PostgresEngine, codec: Any, *, max_sessions: int = 10_000,
                 idle_s: float = 3600.0, clock: Callable[[], float] = time.time) -> None:
        if max_sessions < 1 or not idle_s > 0:
            raise ValueError("PostgresSessionStore: max_sessions and idle_s must be positive")
        self._engine = engine
        self._codec = codec
        self.max_sessions = max_sessions
        self.idle_s = idle_s
        self._clock = clock

    async def _ready(self) -> None:
        await self._engine.ensure("sessions", _TABLES)

    async def create(self, session_id: str, state: Any, owner: SessionOwner = ANONYMOUS,
                     owner_limit: int | None = None) -> bool:
        await self._ready()
        now = self._clock()
        data = self._codec.dumps(state)
        async with self._engine.transaction("opening a session") as conn:
            await conn.execute("SELECT pg_advisory_xact_lock(%s)", (_CREATE_LOCK,))
            await conn.execute("DELETE FROM mcpkit_sessions WHERE seen <= %s",
                               (now - self.idle_s,))
            if owner_limit is not None:
                cur = await conn.execute(
                    "SELECT count(*) FROM mcpkit_sessions WHERE owner = %s", (owner.key,))
                row = await cur.fetchone()
                extra = int(row[0]) - owner_limit + 1 if row else 0
                if extra > 0:
                    await conn.execute(_DROP_OLDEST_OWNED, (owner.key, extra))
            cur = await conn.execute("SELECT count(*) FROM mcpkit_sessions")
            row = await cur.fetchone()
            if row is not None and int(row[0]) >= self.max_sessions:
                cur = await conn.execute(_VICTIM, (False,))
                victim = await cur.fetchone()
                if victim is None and owner.authenticated:
                    cur = await conn.execute(_VICTIM, (True,))
                    victim = await cur.fetchone()
                if victim is None:
                    return False
                await conn.execute("DELETE FROM mcpkit_sessions WHERE id = %s", (victim[0],))
            await conn.execute(
                "INSERT INTO mcpkit_sessions (id, owner, authenticated, seen, state) "
                "VALUES (%s, %s, %s, %s, %s) ON CONFLICT (id) DO UPDATE SET owner = "
                "excluded.owner, authenticated = excluded.authenticated, seen = excluded.seen, "
                "state = excluded.state",
                (session_id, owner.key, owner.authenticated, now, data))
        return True

    async def load(self, session_id: str) -> Any | None:
        await self._ready()
        now = self._clock()
        async with self._engine.statement("loading a session") as conn:
            cur = await conn.execute(_LOAD, (session_id, now - self.idle_s, now, session_id,
                                             now - self.idle_s))
            row = await cur.fetchone()
        return None if row is None else self._codec.loads(bytes(row[0]))

    async def save(self, session_id: str, state: Any) -> None:
        await self._ready()
        data = self._codec.dumps(state)
        async with self._engine.statement("saving a session") as conn:
            await conn.execute("UPDATE mcpkit_sessions SET state = %s, seen = %s WHERE id = %s",
                               (data, self._clock(), session_id))

    async def delete(self, session_id: str) -> bool:
        await self._ready()
        async with self._engine.statement("ending a session") as conn:
            cur = await conn.execute("DELETE FROM mcpkit_sessions WHERE id = %s", (session_id,))
            return bool(cur.rowcount)

    async def owned(self, owner: SessionOwner) -> int:
        """How many sessions `owner` has (expired ones included until they are swept)."""
        await self._ready()
        async with self._engine.statement("counting sessions") as conn:
            cur = await conn.execute("SELECT count(*) FROM mcpkit_sessions WHERE owner = %s",
                                     (owner.key,))
            row = await cur.fetchone()
        return int(row[0]) if row else 0

    async def count(self) -> int:
        """Sessions kept (expired ones included until they are swept)."""
        await self._ready()
        async with self._engine.statement("counting sessions") as conn:
            cur = await conn.execute("SELECT count(*) FROM mcpkit_sessions")
            row = await cur.fetchone()
        return int(row[0]) if row else 0

    async def close(self) -> None:
        await self._engine.close()
