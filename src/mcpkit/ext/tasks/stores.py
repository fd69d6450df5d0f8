"""Which `TaskStore` a `TaskOptions.store` setting names.

None is the embedded default: the SQLite file `tasks.sqlite3` in the user's data folder, so
tasks survive a restart with no configuration. A string is read by the store URL grammar
(`mcpkit.store.urls.parse_store_url`, with paths): a path or `sqlite:///path` is an SQLite
file there, `memory:` keeps them in this process only, and `postgresql://...` or `redis://...`
is that shared engine. A `TaskStore` instance is used as it is. With no setting, a server
whose own store URL is shared (`ServerOptions.store`, MCPKIT_STORE) keeps its tasks there too,
so every replica sees every task.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

from mcpkit.ext.tasks.records import TaskStore

__all__ = [
    "DEFAULT_FILE",
    "on_backend",
    "store_for",
]

DEFAULT_FILE = "tasks.sqlite3"


def store_for(setting: TaskStore | str | Path | None, clock: Callable[[], float],
              backend: Any = None) -> TaskStore:
    """The store `setting` names; `StoreURLError` (a ValueError) for a string of no form the
    store URL grammar reads. `backend` is the server's (`Sealer.backend`): its task store when
    `setting` is None and it is shared."""
    if isinstance(setting, TaskStore):
        return setting
    if setting is None and backend is not None and backend.shared:
        return on_backend(backend)
    from mcpkit.ext.tasks.engines.sqlite import SQLiteTaskStore

    if setting is None:
        from mcpkit.store.state_keys import data_dir

        return SQLiteTaskStore(data_dir() / DEFAULT_FILE, clock=clock)
    if isinstance(setting, Path):
        return SQLiteTaskStore(setting, clock=clock)
    if not isinstance(setting, str):
        raise TypeError(f"TaskOptions.store is a TaskStore, a path or a URL, not "
                        f"{type(setting).__name__}")
    from mcpkit.store.urls import SHARED, StoreURLError, open_backend, parse_store_url

    try:
        parsed = parse_store_url(setting, paths=True)
    except StoreURLError as exc:
        instance = " (or a TaskStore instance)" if exc.reason.startswith("expected") else ""
        raise StoreURLError(setting, f"TaskOptions.store: {exc.reason}{instance}") from None
    if parsed.kind in SHARED:
        return on_backend(open_backend(setting, clock=clock))
    if parsed.kind == "memory":
        from mcpkit.ext.tasks.engines.memory import MemoryTaskStore

        return MemoryTaskStore(clock=clock)
    return SQLiteTaskStore(Path(parsed.target), clock=clock)


def on_backend(backend: Any) -> TaskStore:
    """The task store on the engine of a store URL's backend (`mcpkit.store.urls.Backend`):
    PostgreSQL and Redis share it between replicas, SQLite between the processes of a host,
    memory within this process."""
    kind, engine, clock = backend.kind, backend.engine, backend.clock
    if kind == "postgresql":
        from mcpkit.ext.tasks.engines.postgres import PostgresTaskStore

        return PostgresTaskStore(engine, clock=clock)
    if kind == "redis":
        from mcpkit.ext.tasks.engines.redis import RedisTaskStore

        return RedisTaskStore(engine, clock=clock)
    if kind == "sqlite":
        from mcpkit.ext.tasks.engines.sqlite import SQLiteTaskStore

        return SQLiteTaskStore(engine, clock=clock)
    from mcpkit.ext.tasks.engines.memory import MemoryTaskStore

    return MemoryTaskStore(clock=clock)
