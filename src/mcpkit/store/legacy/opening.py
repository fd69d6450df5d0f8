"""The legacy session and event stores on a store URL's backend (`mcpkit.store.urls.Backend`):
`session_store(backend, state_type, max_sessions=, idle_s=)` and `event_store(backend,
max_events=, max_bytes=, max_total_bytes=)`, made when a server serving legacy clients asks, on
the engine the backend's other seams share (`Backend.engine`): PostgreSQL and Redis keep them
there, memory and SQLite in this process.

Session states are kept as JSON: every state kept so far is a small dataclass.

Imports: the standard library, orjson, `mcpkit.store`; each engine's store module when it is
made.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import Any

import orjson

from mcpkit.store.urls import Backend

__all__ = [
    "event_store",
    "session_store",
]


@dataclass(frozen=True, slots=True)
class _DataclassCodec:
    state_type: Any

    def dumps(self, state: Any) -> bytes:
        return orjson.dumps(dataclasses.asdict(state))

    def loads(self, data: bytes) -> Any:
        return self.state_type(**orjson.loads(data))


def session_store(backend: Backend, state_type: Any = None, *, max_sessions: int = 10_000,
                  idle_s: float = 3600.0) -> Any:
    """A session store on `backend`: in this process for memory and SQLite, on the shared
    engine (states kept as JSON of `state_type`) for PostgreSQL and Redis."""
    if backend.kind == "postgresql":
        from mcpkit.store.legacy.postgres_sessions import PostgresSessionStore

        return PostgresSessionStore(backend.engine, _DataclassCodec(state_type),
                                    max_sessions=max_sessions, idle_s=idle_s,
                                    clock=backend.clock)
    if backend.kind == "redis":
        from mcpkit.store.legacy.redis_sessions import RedisSessionStore

        return RedisSessionStore(backend.engine, _DataclassCodec(state_type),
                                 max_sessions=max_sessions, idle_s=idle_s, clock=backend.clock)
    from mcpkit.store.legacy.sessions import MemorySessionStore

    return MemorySessionStore(max_sessions, idle_s, backend.clock)


def event_store(backend: Backend, **bounds: int) -> Any:
    """An event store on `backend`: in this process for memory and SQLite, on the shared
    engine for PostgreSQL and Redis."""
    if backend.kind == "postgresql":
        from mcpkit.store.legacy.postgres_events import PostgresEventStore

        return PostgresEventStore(backend.engine, **bounds)
    if backend.kind == "redis":
        from mcpkit.store.legacy.redis_events import RedisEventStore

        return RedisEventStore(backend.engine, **bounds)
    from mcpkit.store.legacy.events import MemoryEventStore

    return MemoryEventStore(**bounds)
