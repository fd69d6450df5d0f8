"""The legacy session and event stores of each engine, as a backend (`mcpkit.store.urls.
Backend`) hands them out: `sessions(state_type, max_sessions=, idle_s=)` and
`events(max_events=, max_bytes=, max_total_bytes=)`, made when a server serving legacy
clients asks, on the connection the backend's other seams share.

Session states are kept as JSON: every state kept so far is a small dataclass.

Imports: the standard library, orjson; each engine's store module when it is made.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import orjson

__all__ = [
    "memory_events",
    "memory_sessions",
    "postgres_stores",
    "redis_stores",
]

Factory = Callable[..., Any]


@dataclass(frozen=True, slots=True)
class _DataclassCodec:
    state_type: Any

    def dumps(self, state: Any) -> bytes:
        return orjson.dumps(dataclasses.asdict(state))

    def loads(self, data: bytes) -> Any:
        return self.state_type(**orjson.loads(data))


def memory_sessions(clock: Callable[[], float]) -> Factory:
    """Sessions in this process (memory and SQLite backends alike)."""
    def sessions(state_type: Any = None, *, max_sessions: int = 10_000,
                 idle_s: float = 3600.0) -> Any:
        from mcpkit.store.legacy.sessions import MemorySessionStore

        return MemorySessionStore(max_sessions, idle_s, clock)

    return sessions


def memory_events(**bounds: int) -> Any:
    """Events in this process (memory and SQLite backends alike)."""
    from mcpkit.store.legacy.events import MemoryEventStore

    return MemoryEventStore(**bounds)


def postgres_stores(engine: Any, clock: Callable[[], float]) -> tuple[Factory, Factory]:
    """Sessions and events on a `PostgresEngine`."""
    from mcpkit.store.legacy.postgres_events import PostgresEventStore
    from mcpkit.store.legacy.postgres_sessions import PostgresSessionStore

    def sessions(state_type: Any, *, max_sessions: int = 10_000,
                 idle_s: float = 3600.0) -> Any:
        return PostgresSessionStore(engine, _DataclassCodec(state_type), max_sessions=max_sessions,
                                    idle_s=idle_s, clock=clock)

    def events(**bounds: int) -> Any:
        return PostgresEventStore(engine, **bounds)

    return sessions, events


def redis_stores(engine: Any, clock: Callable[[], float]) -> tuple[Factory, Factory]:
    """Sessions and events on a `RedisEngine`."""
    from mcpkit.store.legacy.redis_events import RedisEventStore
    from mcpkit.store.legacy.redis_sessions import RedisSessionStore

    def sessions(state_type: Any, *, max_sessions: int = 10_000,
                 idle_s: float = 3600.0) -> Any:
        return RedisSessionStore(engine, _DataclassCodec(state_type), max_sessions=max_sessions,
                                 idle_s=idle_s, clock=clock)

    def events(**bounds: int) -> Any:
        return RedisEventStore(engine, **bounds)

    return sessions, events
