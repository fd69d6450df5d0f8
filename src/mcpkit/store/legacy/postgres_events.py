"""`PostgresEventStore`: the SSE events of legacy sessions in PostgreSQL, so a client whose
stream broke resumes it with `Last-Event-ID` through any replica.

The same contract as `MemoryEventStore` (`mcpkit.store.legacy.events`): ids are `<stream>.<n>`,
unique within the session and increasing (`n` comes from one database sequence, so no id is
ever issued twice, even to a session kept anew); a stream id belongs to one session; each
session keeps at most `max_events` events and `max_bytes` bytes, the oldest going first, and
the event just appended is always kept; resuming from before an evicted event, or from a
stream no longer kept, is "gone", and from an id this session never had "invalid"
(`EventReplayError`). The whole store's `max_total_bytes` is checked every 64 appends of a
process and evicts the oldest events of all (those of the sessions quiet longest).

An append is one transaction holding its session's row lock, so two replicas appending to one
session take turns; it commits before the id is returned, so an event whose id reached the
client is there for any replica to replay.

Imports: the standard library, `mcpkit.store`.
"""

from __future__ import annotations

from typing import Any, Final

from mcpkit.store.legacy.events import (
    _EVENT_OVERHEAD,
    _MAX_STREAM_CHARS,
    _STREAM_OVERHEAD,
    BoundedEvents,
    Replay,
    _is_stream_id,
)
from mcpkit.store.postgres_store import PostgresEngine

__all__ = ["PostgresEventStore"]

_TABLES: Final = (
    "CREATE SEQUENCE IF NOT EXISTS mcpkit_event_numbers",
    "CREATE TABLE IF NOT EXISTS mcpkit_event_sessions (session_id TEXT PRIMARY KEY, "
    "seq BIGINT NOT NULL, floor BIGINT NOT NULL, size BIGINT NOT NULL, "
    "events INTEGER NOT NULL)",
    "CREATE TABLE IF NOT EXISTS mcpkit_event_streams (stream_id TEXT PRIMARY KEY, "
    "session_id TEXT NOT NULL, floor BIGINT NOT NULL, events INTEGER NOT NULL, "
    "ended BOOLEAN NOT NULL)",
    "CREATE TABLE IF NOT EXISTS mcpkit_events (seq BIGINT PRIMARY KEY, session_id TEXT NOT "
    "NULL, stream_id TEXT NOT NULL, data BYTEA NOT NULL)",
    "CREATE INDEX IF NOT EXISTS mcpkit_events_session ON mcpkit_events (session_id, seq)",
    "CREATE INDEX IF NOT EXISTS mcpkit_events_stream ON mcpkit_events (stream_id, seq)",
)
_CHECK_TOTAL_EVERY: Final = 64


class PostgresEventStore(BoundedEvents):
    """Events in three tables: sessions, streams and the events themselves."""

    def __init__(self, engine: PostgresEngine, max_events: int = 1000,
                 max_bytes: int = 8 * 1024 * 1024,
                 max_total_bytes: int = 128 * 1024 * 1024) -> None:
        super().__init__(max_events, max_bytes, max_total_bytes)
        self._engine = engine
        self._appends = 0

    async def append(self, session_id: str, stream_id: str, data: bytes, *,
                     final: bool = False) -> str:
        await self._engine.ensure("events", _TABLES)
        async with self._engine.transaction("keeping an SSE event") as conn:
            await conn.execute(
                "INSERT INTO mcpkit_event_sessions VALUES (%s, 0, 0, 0, 0) "
                "ON CONFLICT DO NOTHING", (session_id,))
            cur = await conn.execute(
                "SELECT floor FROM mcpkit_event_sessions WHERE session_id = %s FOR UPDATE",
                (session_id,))
            row = await cur.fetchone()
            floor = int(row[0]) if row else 0
            cur = await conn.execute(
                "SELECT session_id FROM mcpkit_event_streams WHERE stream_id = %s",
                (stream_id,))
            held = await cur.fetchone()
            added = 0
            if held is None:
                if not _is_stream_id(stream_id) or len(stream_id) > _MAX_STREAM_CHARS:
                    raise ValueError(f"PostgresEventStore.append: stream id {stream_id[:80]!r} "
                                     f"must be 1 to {_MAX_STREAM_CHARS} letters, digits, '-' "
                                     "or '_'")
                await conn.execute("INSERT INTO mcpkit_event_streams VALUES (%s, %s, %s, 0, "
                                   "false)", (stream_id, session_id, floor))
                added = _STREAM_OVERHEAD
            elif held[0] != session_id:
                raise ValueError(f"PostgresEventStore.append: stream id {stream_id!r} is a "
                                 "stream of another session; stream ids are unique across "
                                 "sessions")
            cur = await conn.execute("SELECT nextval('mcpkit_event_numbers')")
            number = await cur.fetchone()
            assert number is not None
            seq = int(number[0])
            await conn.execute("INSERT INTO mcpkit_events VALUES (%s, %s, %s, %s)",
                               (seq, session_id, stream_id, data))
            await conn.execute("UPDATE mcpkit_event_streams SET events = events + 1, ended = %s "
                               "WHERE stream_id = %s", (final, stream_id))
            cur = await conn.execute(
                "UPDATE mcpkit_event_sessions SET seq = %s, size = size + %s, events = events + 1 "
                "WHERE session_id = %s RETURNING events, size",
                (seq, len(data) + _EVENT_OVERHEAD + added, session_id))
            counts = await cur.fetchone()
            assert counts is not None
            if int(counts[0]) > self.max_events or int(counts[1]) > self.max_bytes:
                await self._trim(conn, session_id, int(counts[0]), int(counts[1]))
        self._appends += 1
        if self._appends % _CHECK_TOTAL_EVERY == 0:
            await self._trim_total(seq)
        return f"{stream_id}.{seq}"

    async def _evict(self, conn: Any, rows: list[tuple[Any, ...]]) -> None:
        """Drop these events (seq, session, stream, size), moving the floors past them."""
        for seq, session_id, stream_id, size in rows:
            await conn.execute("DELETE FROM mcpkit_events WHERE seq = %s", (seq,))
            cur = await conn.execute(
                "UPDATE mcpkit_event_streams SET events = events - 1, floor = %s "
                "WHERE stream_id = %s RETURNING events", (seq, stream_id))
            left = await cur.fetchone()
            freed = int(size) + _EVENT_OVERHEAD
            if left is not None and int(left[0]) <= 0:  # nothing left to replay: "gone"
                await conn.execute("DELETE FROM mcpkit_event_streams WHERE stream_id = %s",
                                   (stream_id,))
                freed += _STREAM_OVERHEAD
            await conn.execute(
                "UPDATE mcpkit_event_sessions SET floor = %s, size = size - %s, "
                "events = events - 1 WHERE session_id = %s", (seq, freed, session_id))

    async def _trim(self, conn: Any, session_id: str, events: int, size: int) -> None:
        cur = await conn.execute(
            "SELECT seq, session_id, stream_id, octet_length(data) FROM mcpkit_events "
            "WHERE session_id = %s ORDER BY seq", (session_id,))
        rows = await cur.fetchall()
        doomed: list[tuple[Any, ...]] = []
        for row in rows[:-1]:  # the newest event is always kept
            if events <= self.max_events and size <= self.max_bytes:
                break
            doomed.append(row)
            events -= 1
            size -= int(row[3]) + _EVENT_OVERHEAD
        await self._evict(conn, doomed)

    async def _trim_total(self, newest: int) -> None:
        async with self._engine.transaction("bounding the SSE events kept") as conn:
            cur = await conn.execute("SELECT coalesce(sum(size), 0) FROM mcpkit_event_sessions")
            row = await cur.fetchone()
            total = int(row[0]) if row else 0
            if total <= self.max_total_bytes:
                return
            cur = await conn.execute(
                "SELECT seq, session_id, stream_id, octet_length(data) FROM mcpkit_events "
                "WHERE seq <> %s ORDER BY seq LIMIT 10000", (newest,))
            doomed: list[tuple[Any, ...]] = []
            for event in await cur.fetchall():
                if total <= self.max_total_bytes:
                    break
                doomed.append(event)
                total -= int(event[3]) + _EVENT_OVERHEAD
            await self._evict(conn, doomed)
            await conn.execute("DELETE FROM mcpkit_event_sessions WHERE events <= 0")

    async def replay_after(self, session_id: str, event_id: str) -> Replay:
        stream_id, seq = self.replay_point(event_id)
        await self._engine.ensure("events", _TABLES)
        async with self._engine.transaction("replaying SSE events") as conn:
            cur = await conn.execute(
                "SELECT st.session_id, st.floor, st.ended, se.seq FROM mcpkit_event_streams st "
                "JOIN mcpkit_event_sessions se USING (session_id) WHERE st.stream_id = %s",
                (stream_id,))
            held = await cur.fetchone()
            if held is None:
                raise self.unknown_stream(event_id)
            owner, floor, ended, newest = held
            if owner != session_id:
                raise self.other_session(event_id)
            if seq > int(newest):
                raise self.not_issued(event_id, newest)
            if int(floor) > seq:
                raise self.evicted(event_id)
            cur = await conn.execute(
                "SELECT seq, data FROM mcpkit_events WHERE stream_id = %s AND seq > %s "
                "ORDER BY seq", (stream_id, seq))
            events = [(f"{stream_id}.{n}", bytes(data)) for n, data in await cur.fetchall()]
        return Replay(stream_id, events, bool(ended))

    async def forget(self, session_id: str) -> None:
        await self._engine.ensure("events", _TABLES)
        async with self._engine.transaction("forgetting a session's SSE events") as conn:
            for table in ("mcpkit_events", "mcpkit_event_streams", "mcpkit_event_sessions"):
                await conn.execute(f"DELETE FROM {table} WHERE session_id = %s", (session_id,))

    async def close(self) -> None:
        await self._engine.close()
