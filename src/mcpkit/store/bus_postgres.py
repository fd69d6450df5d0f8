"""`PostgresBus`: the replicas' bus on PostgreSQL `LISTEN/NOTIFY` (`mcpkit.store.bus`).

Each topic is the channel `NAMESPACE_bus_TOPIC`. Publishing is `pg_notify` on one connection
of its own (autocommit, so the notice leaves at once, reconnected on the next call after a
failure); listening holds another in `LISTEN` mode. A notice carries at most 8000 bytes, and a
legacy session's answer (a filled-in form) may be longer: a longer payload is written to the
table `mcpkit_bus_spill` in the same transaction as its notice, which then carries only the
row's id, so a listener never sees the notice before the row. Rows are dropped after
`_SPILL_KEEP_S`, long after every listener has read them; the table is made on first use,
under an advisory lock so replicas starting together do not race to make it.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Iterable
from contextlib import asynccontextmanager
from typing import Any, Final

from mcpkit.protocol.extras import require
from mcpkit.store.bus import Bus, unavailable

__all__ = ["PostgresBus"]

_TIMEOUT_S: Final = 2
"""Connecting gives up after this long (libpq counts whole seconds)."""
_NOTICE_MAX: Final = 7900
"""Payloads longer than this (in UTF-8 bytes) go through the spill table."""
_SPILL_KEEP_S: Final = 600
_SPILL_MARK: Final = "@"
"""A notice naming a spilled row; payloads themselves are JSON objects, so never start so."""
_CONNECT: Final = {"autocommit": True, "connect_timeout": _TIMEOUT_S, "keepalives": 1,
                   "keepalives_idle": 5, "keepalives_interval": 2, "keepalives_count": 2}
"""Keepalives find a vanished server in about ten seconds on a connection only listening."""
_MAKE_SPILL: Final = (
    "CREATE TABLE IF NOT EXISTS mcpkit_bus_spill (id BIGSERIAL PRIMARY KEY, payload TEXT NOT "
    "NULL, created_at TIMESTAMPTZ NOT NULL DEFAULT now())")


class PostgresBus(Bus):
    """Topics on the PostgreSQL server `url` names (`postgresql://` or `postgres://`)."""

    name = "PostgreSQL"

    def __init__(self, url: str, namespace: str = "mcpkit") -> None:
        self._psycopg = require("psycopg", "a PostgreSQL broker (postgresql:// store URL)")
        self._url = url
        self._prefix = f"{namespace}_bus_"
        self._conn: Any = None
        self._lock = asyncio.Lock()
        self._spill_ready = False

    def _errors(self) -> tuple[type[BaseException], ...]:
        return (self._psycopg.Error, OSError, TimeoutError)

    async def _run(self, doing: str, query: str, args: tuple[Any, ...] = ()) -> Any:
        """One statement on the publishing connection; its first row (or None)."""
        async with self._lock:
            try:
                if self._conn is None or self._conn.closed:
                    self._conn = await self._psycopg.AsyncConnection.connect(self._url, **_CONNECT)
                cursor = await self._conn.execute(query, args)
                return await cursor.fetchone() if cursor.description else None
            except self._errors() as exc:
                await self._drop()
                raise unavailable(self.name, doing, exc) from None

    async def _drop(self) -> None:
        conn, self._conn = self._conn, None
        if conn is not None:
            try:
                await conn.close()
            except self._errors():
                pass

    async def publish(self, topic: str, payload: str) -> None:
        channel = self._prefix + topic
        if len(payload.encode()) <= _NOTICE_MAX:
            await self._run(f"publish on {topic!r}", "SELECT pg_notify(%s, %s)", (channel, payload))
            return
        await self._ensure_spill()
        await self._run(
            f"publish on {topic!r}",
            "WITH row AS (INSERT INTO mcpkit_bus_spill (payload) VALUES (%s) RETURNING id), "
            "old AS (DELETE FROM mcpkit_bus_spill WHERE created_at < now() - %s * interval "
            "'1 second') SELECT pg_notify(%s, %s || id) FROM row",
            (payload, _SPILL_KEEP_S, channel, _SPILL_MARK))

    async def _ensure_spill(self) -> None:
        if self._spill_ready:
            return
        await self._run("make its spill table",
                        "DO $$ BEGIN PERFORM pg_advisory_xact_lock(hashtext('mcpkit_bus_spill'));"
                        f" {_MAKE_SPILL}; END $$")
        self._spill_ready = True

    async def ping(self) -> None:
        await self._run("answer a ping", "SELECT 1")

    @asynccontextmanager
    async def listening(self, topics: Iterable[str]) -> AsyncIterator[AsyncIterator[tuple[str, str]]]:
        psycopg = self._psycopg
        try:
            conn = await psycopg.AsyncConnection.connect(self._url, **_CONNECT)
        except self._errors() as exc:
            raise unavailable(self.name, "connect to listen", exc) from None
        try:
            try:
                for topic in topics:
                    # LISTEN returns once registered: a notice committed after it is heard.
                    await conn.execute(psycopg.sql.SQL("LISTEN {}").format(
                        psycopg.sql.Identifier(self._prefix + topic)))
            except self._errors() as exc:
                raise unavailable(self.name, "listen", exc) from None
            yield self._messages(conn)
        finally:
            try:
                await conn.close()
            except self._errors():
                pass

    async def _messages(self, conn: Any) -> AsyncIterator[tuple[str, str]]:
        cut = len(self._prefix)
        try:
            async for notice in conn.notifies():
                payload = notice.payload
                if payload.startswith(_SPILL_MARK):
                    row = await self._run("read a long message", "SELECT payload FROM "
                                          "mcpkit_bus_spill WHERE id = %s", (int(payload[1:]),))
                    if row is None:
                        continue  # dropped already: it was older than any listener waits
                    payload = row[0]
                yield notice.channel[cut:], payload
        except self._errors() as exc:
            raise unavailable(self.name, "listen", exc) from None
        # notifies() ends only when the connection is closed under it
        raise unavailable(self.name, "listen", ConnectionError("the connection was closed"))

    async def aclose(self) -> None:
        async with self._lock:
            await self._drop()
