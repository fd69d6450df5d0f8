"""One URL picks the backend of every state seam: `open_backend(url) -> Backend`.

| URL | single use (`Store`) | legacy sessions, events | state keys |
|---|---|---|---|
| `memory` | this process | this process | the user's key file |
| `sqlite:///state.db`, `sqlite:PATH` | the SQLite file | this process | the user's key file |
| `postgresql://user@host/db` | PostgreSQL | PostgreSQL | PostgreSQL |
| `redis://host:6379/0` | Redis | Redis | Redis |

(The legacy sessions and events are made on the backend's engine by the era's room,
`mcpkit.store.legacy.opening`.)

`sqlite:///state.db` is relative to the working folder and `sqlite:////var/lib/x.db` absolute
(the usual reading of SQLite URLs); `sqlite:PATH` is the path as written. `postgres://` is
taken for `postgresql://`, `rediss://` is Redis over TLS. The same URL comes from
`ServerOptions(store=...)`, `mcpkit run --store URL` or the MCPKIT_STORE environment variable,
so every replica of a deployment is configured by one line.

Opening a backend connects to nothing: a pool opens on the first request that needs the
store, so a server that never asks for input or serves no legacy session never touches it,
and one that starts while the store is down serves everything that needs no state.

Imports: the standard library, `mcpkit.store`; a backend's own modules when it is opened.
"""

from __future__ import annotations

import os
import time
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, Final

from mcpkit.errors import StoreURLError
from mcpkit.store import Store

__all__ = [
    "SHARED",
    "STORE_ENV",
    "STORE_FORMS",
    "Backend",
    "StoreURL",
    "StoreURLError",
    "open_backend",
    "parse_store_url",
    "split_deadline",
    "split_prefix",
    "store_from_env",
]

STORE_ENV: Final = "MCPKIT_STORE"
"""Environment variable holding the store URL when `ServerOptions.store` is not set."""
STORE_FORMS: Final = ("memory, sqlite:///PATH (or sqlite:PATH), postgresql://USER@HOST/DB or "
                      "redis://HOST:PORT/DB")
SHARED: Final = frozenset({"postgresql", "redis"})
"""Kinds whose every seam is shared by all the processes that open the same URL."""


@dataclass(frozen=True, slots=True)
class StoreURL:
    kind: str
    """memory, sqlite, postgresql or redis."""
    target: str
    """The file of sqlite, the driver's URL of postgresql and redis; empty for memory."""


_SCHEMES: Final = frozenset({"memory", "sqlite", "postgresql", "postgres", "redis", "rediss"})
"""The schemes of the forms `parse_store_url` reads."""


def parse_store_url(value: str, *, paths: bool = False) -> StoreURL:
    """Which backend `value` names, or `StoreURLError` saying what is accepted.

    With `paths`, a value of no scheme this grammar knows and without `://` is the path of an
    SQLite file, as written (what a setting that takes a file as well reads,
    `TaskOptions.store`): `tasks.db`, `/var/lib/tasks.db`, `C:\\data\\tasks.db`."""
    text = value.strip()
    scheme, sep, rest = text.partition(":")
    lower = scheme.lower()
    if text.lower() in ("memory", "memory:", "memory://"):
        return StoreURL("memory", "")
    if lower == "sqlite" and sep:
        path = rest[3:] if rest.startswith("///") else rest
        if rest.startswith("//") and not rest.startswith("///"):
            raise StoreURLError(value, "a SQLite URL has no host; write "
                                "sqlite:///relative.db or sqlite:////absolute/path.db")
        if not path.strip():
            raise StoreURLError(value, "name the file, e.g. sqlite:///state.db")
        return StoreURL("sqlite", path.strip())
    if lower in ("postgresql", "postgres") and rest.startswith("//"):
        return StoreURL("postgresql", "postgresql:" + rest)
    if lower in ("redis", "rediss") and rest.startswith("//"):
        return StoreURL("redis", lower + ":" + rest)
    if not paths:
        raise StoreURLError(value, f"expected {STORE_FORMS}")
    if text and lower not in _SCHEMES and "://" not in text:
        return StoreURL("sqlite", text)
    raise StoreURLError(value, f"expected {STORE_FORMS}, or the path of an SQLite file")


def store_from_env(environ: Mapping[str, str] | None = None) -> str | None:
    """The store URL MCPKIT_STORE holds, or None when it is unset or blank."""
    value = (os.environ if environ is None else environ).get(STORE_ENV, "").strip()
    return value or None


@dataclass(slots=True)
class Backend:
    """Every seam of one store URL. `store` is the single-use store; `keys` is the shared state
    key ring (None: the user's key file); `engine` what other stores are built on, on the
    connection the backend's seams share (the Tasks extension's task store,
    `mcpkit.ext.tasks.stores`; the sessions and events of the initialize era,
    `mcpkit.store.legacy.opening`): the `PostgresEngine` or `RedisEngine`, the SQLite file's
    path, None for memory; `clock` the time its expiries are read against."""

    kind: str
    url: str
    """The URL without its password (for messages and logs)."""
    store: Store
    keys: Any = None
    engine: Any = None
    clock: Callable[[], float] = time.time
    _closers: list[Callable[[], Awaitable[None]]] = field(default_factory=list)

    @property
    def shared(self) -> bool:
        """Whether processes on other hosts that open the same URL share every seam."""
        return self.kind in SHARED

    async def close(self) -> None:
        """Release the pools and connections of every seam."""
        for closer in self._closers:
            await closer()
        if self.keys is not None:
            self.keys.close()




def open_backend(url: str, *, clock: Callable[[], float] | None = None) -> Backend:
    """The backend `url` names, connected to nothing yet (see the module's table).

    `clock` (Unix seconds) is what expiries are read against; the default is `time.time`.
    A missing driver is `MissingExtraError` naming the extra (`postgres`, `redis`).
    """
    parsed = parse_store_url(url)
    now = clock or time.time
    if parsed.kind == "memory":
        from mcpkit.store.memory import MemoryStore

        return Backend("memory", "memory", MemoryStore(clock=now), clock=now)
    if parsed.kind == "sqlite":
        from mcpkit.store.sqlite import SQLiteStore

        sqlite = SQLiteStore(parsed.target, clock=now)
        return Backend("sqlite", f"sqlite:{parsed.target}", sqlite, engine=parsed.target,
                       clock=now, _closers=[sqlite.close])
    if parsed.kind == "postgresql":
        return _postgres(parsed.target, now)
    return _redis(parsed.target, now)


def _postgres(url: str, clock: Callable[[], float]) -> Backend:
    from mcpkit.store.postgres_keys import PostgresKeys
    from mcpkit.store.postgres_store import PostgresEngine, PostgresStore, redact

    url, deadline = split_deadline(url)
    engine = PostgresEngine(url, deadline=deadline)
    return Backend("postgresql", redact(url), PostgresStore(engine, clock=clock),
                   PostgresKeys(url, deadline=deadline), engine, clock, [engine.close])


def _redis(url: str, clock: Callable[[], float]) -> Backend:
    from mcpkit.store.postgres_store import redact
    from mcpkit.store.redis_keys import RedisKeys
    from mcpkit.store.redis_store import RedisEngine, RedisStore

    url, prefix = split_prefix(url)
    url, deadline = split_deadline(url)
    engine = RedisEngine(url, prefix=prefix, deadline=deadline)
    return Backend("redis", redact(url), RedisStore(engine, clock=clock),
                   RedisKeys(url, prefix=engine.prefix, deadline=deadline), engine, clock,
                   [engine.close])


def _take_option(url: str, name: str) -> tuple[str, str | None]:
    """The URL without mcpkit's own query parameter `name`, and its value (None: not given),
    taken off before the driver, which would refuse it, reads the rest."""
    from urllib.parse import parse_qsl, urlencode, urlsplit, urlunsplit

    parts = urlsplit(url)
    query = parse_qsl(parts.query, keep_blank_values=True)
    value = next((v for k, v in query if k == name), None)
    if value is None:
        return url, None
    rest = urlencode([(k, v) for k, v in query if k != name])
    return urlunsplit(parts._replace(query=rest)), value


def split_prefix(url: str) -> tuple[str, str]:
    """A Redis URL's own `prefix=` query parameter (the key prefix, `mcpkit:` by default, so
    deployments can share one Redis)."""
    url, prefix = _take_option(url, "prefix")
    return url, "mcpkit:" if prefix is None else prefix


def split_deadline(url: str) -> tuple[str, float]:
    """A shared store URL's own `timeout=SECONDS`: the most one store operation may take
    (`mcpkit.store.outage.deadline`), 5 s by default."""
    import math

    from mcpkit.store.outage import DEFAULT_DEADLINE_S

    rest, text = _take_option(url, "timeout")
    if text is None:
        return url, DEFAULT_DEADLINE_S
    try:
        seconds = float(text)
    except ValueError:
        seconds = math.nan
    if not math.isfinite(seconds) or seconds <= 0:
        raise StoreURLError(rest, f"timeout={text!r} must be a number of seconds above zero, "
                            "e.g. timeout=5")
    return rest, seconds
