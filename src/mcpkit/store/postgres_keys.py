"""The shared state key ring in PostgreSQL: `PostgresKeys`, a `SharedRing` whose record is one
row of `mcpkit_state_keys`.

The ring is read with psycopg's synchronous client (sealing is synchronous, see
`mcpkit.store.shared_ring`), one short connection per read: a read happens every few
seconds at most. The row is created with `INSERT ... ON CONFLICT DO NOTHING`, so replicas
starting at once all end up with the first one's key, and a rotation holds the row's lock
(`SELECT ... FOR UPDATE`) while it rewrites it.

Imports: the standard library, `mcpkit.protocol.extras`, `mcpkit.store`.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any, Final

from mcpkit.protocol.extras import require
from mcpkit.store.outage import unavailable
from mcpkit.store.shared_ring import SharedRing

__all__ = [
    "PostgresKeys",
    "PostgresRingSource",
]

_TABLE: Final = ("CREATE TABLE IF NOT EXISTS mcpkit_state_keys (name TEXT PRIMARY KEY, "
                 "record TEXT NOT NULL)")
_NAME: Final = "ring"


class PostgresRingSource:
    """The record as one row; every failure to reach the server is `StoreUnavailableError`."""

    engine = "PostgreSQL"
    name = "postgresql"

    def __init__(self, url: str, *, timeout: float = 2.0) -> None:
        self._psycopg = require("psycopg", "the store postgresql://")
        self.url = url
        self.timeout = timeout
        self._ready = False

    @contextmanager
    def _transaction(self, what: str) -> Iterator[Any]:
        psycopg = self._psycopg
        try:
            with psycopg.connect(self.url, connect_timeout=max(1, int(self.timeout))) as conn:
                if not self._ready:
                    conn.execute("SELECT pg_advisory_xact_lock(%s)", (0x6D63706B,))
                    conn.execute(_TABLE)
                    conn.commit()
                    self._ready = True
                with conn.transaction():
                    yield conn
        except psycopg.OperationalError as exc:
            raise unavailable("PostgreSQL", "postgresql", what, exc) from None

    def read(self) -> str | None:
        with self._transaction("reading the state keys") as conn:
            row = conn.execute("SELECT record FROM mcpkit_state_keys WHERE name = %s",
                               (_NAME,)).fetchone()
        return None if row is None else str(row[0])

    def create(self, text: str) -> str:
        with self._transaction("creating the state keys") as conn:
            conn.execute("INSERT INTO mcpkit_state_keys VALUES (%s, %s) ON CONFLICT DO NOTHING",
                         (_NAME, text))
            row = conn.execute("SELECT record FROM mcpkit_state_keys WHERE name = %s",
                               (_NAME,)).fetchone()
        assert row is not None
        return str(row[0])

    def update(self, change: Callable[[str | None], str]) -> str:
        with self._transaction("rotating the state keys") as conn:
            conn.execute("INSERT INTO mcpkit_state_keys VALUES (%s, '') ON CONFLICT DO NOTHING",
                         (_NAME,))
            row = conn.execute("SELECT record FROM mcpkit_state_keys WHERE name = %s "
                               "FOR UPDATE", (_NAME,)).fetchone()
            current = str(row[0]) if row is not None and row[0] else None
            record = change(current)
            conn.execute("UPDATE mcpkit_state_keys SET record = %s WHERE name = %s",
                         (record, _NAME))
        return record

    def close(self) -> None:
        """Nothing is held open between reads."""


class PostgresKeys(SharedRing):
    """The ring kept in the database at `url`."""

    def __init__(self, url: str, **options: Any) -> None:
        super().__init__(PostgresRingSource(url), **options)
