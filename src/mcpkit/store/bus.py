"""The message bus between replicas sharing a store: the seam under a shared broker.

A `Bus` carries short text payloads on a few named topics to every process listening on the
same engine (Redis pub/sub, PostgreSQL `LISTEN/NOTIFY`). It knows nothing of what the payloads
mean: `mcpkit.server.broker.SharedBroker` gives them meaning (change events, a legacy
session's answers, task control messages). Delivery is at most once, to the processes
listening at that moment, which is what every use here needs: a replica that was not
listening has no stream or waiting handler to deliver to.

Listening holds one dedicated connection per process. `follow` keeps it: when the engine goes
away it says so once in the log, retries with a bounded backoff, says so again when it is
back, and never ends on its own, so a replica outlives a restart of the engine without being
restarted itself. Publishing uses a connection of its own and fails fast
(`StoreUnavailableError`) while the engine is down.

`bus_for(url)` picks the engine from the store URL: `redis://`/`rediss://` or
`postgresql://`/`postgres://`; any other URL (memory, SQLite) has no bus, since one process or
one host file needs none. Imports: the standard library and `mcpkit.errors`; the engines'
modules load their drivers.
"""

from __future__ import annotations

import abc
import asyncio
import logging
from collections.abc import AsyncIterator, Callable, Iterable
from contextlib import AbstractAsyncContextManager
from typing import Final

from mcpkit.errors import StoreUnavailableError

__all__ = [
    "TOPICS",
    "Bus",
    "bus_for",
    "follow",
    "unavailable",
]

log = logging.getLogger("mcpkit.store")

TOPICS: Final = ("changes", "answers", "controls")
"""Every topic a shared broker uses: list and resource changes, a legacy session's answers to
the server's requests, and task control messages."""

_BACKOFF: Final = (0.1, 2.0)
"""The first and the longest wait between two attempts to listen again."""


class Bus(abc.ABC):
    """Topics shared by the processes of one deployment; see the module docstring."""

    name: str = "bus"
    """The engine, as the log names it ("Redis", "PostgreSQL")."""

    @abc.abstractmethod
    async def publish(self, topic: str, payload: str) -> None:
        """Send `payload` to every process listening on `topic` (this one included); raises
        `StoreUnavailableError` at once when the engine cannot be reached."""

    @abc.abstractmethod
    def listening(self, topics: Iterable[str]) -> AbstractAsyncContextManager[
            AsyncIterator[tuple[str, str]]]:
        """A dedicated connection listening on `topics`: entered once the engine confirmed the
        subscription, it yields (topic, payload) until the connection fails, when iteration
        raises `StoreUnavailableError`."""

    @abc.abstractmethod
    async def ping(self) -> None:
        """Raise `StoreUnavailableError` unless the engine answers now (readiness)."""

    async def aclose(self) -> None:  # noqa: B027 -- optional for engines holding nothing
        """Release the publishing connection."""


async def follow(bus: Bus, topics: Iterable[str], deliver: Callable[[str, str], None],
                 ready: asyncio.Event) -> None:
    """Listen on `topics` for as long as the task runs, delivering each payload; `ready` is
    set while a subscription is in place and cleared while the engine is unreachable.

    A failure is one warning when it starts and one line when listening resumes, not a line
    per attempt, so an engine down for an hour does not fill the log.
    """
    wanted = tuple(topics)
    delay, longest = _BACKOFF
    down_since: float | None = None
    loop = asyncio.get_running_loop()
    while True:
        try:
            async with bus.listening(wanted) as messages:
                ready.set()
                if down_since is not None:
                    log.warning("the %s broker is reachable again after %.1f s; listening on %s",
                                bus.name, loop.time() - down_since, ", ".join(wanted))
                    down_since = None
                delay = _BACKOFF[0]
                async for topic, payload in messages:
                    try:
                        deliver(topic, payload)
                    except Exception:  # one bad payload must not stop the others
                        log.exception("a %s broker message on %r could not be delivered",
                                      bus.name, topic)
        except asyncio.CancelledError:
            ready.clear()
            raise
        except Exception as exc:
            ready.clear()
            if down_since is None:
                down_since = loop.time()
                log.warning("the %s broker is unreachable (%s): changes, answers and task "
                            "controls from other replicas are not received until it returns; "
                            "retrying", bus.name, exc)
            await asyncio.sleep(delay)
            delay = min(delay * 2, longest)
        else:  # the engine ended the subscription cleanly (a server shutdown): listen again
            ready.clear()
            down_since = down_since if down_since is not None else loop.time()


def bus_for(url: str, namespace: str = "mcpkit") -> Bus | None:
    """The bus of the engine `url` names, or None for a store with no engine to share (memory,
    SQLite). `namespace` keeps deployments sharing one engine apart."""
    scheme = url.partition(":")[0].lower()
    if scheme in ("redis", "rediss"):
        from mcpkit.store.bus_redis import RedisBus
        from mcpkit.store.urls import split_deadline, split_prefix

        # The URL's own `prefix=` and `timeout=` are no parameters of redis-py's; the prefix
        # names the deployment, so its channels are kept apart as its keys are.
        url, prefix = split_prefix(url)
        url, _ = split_deadline(url)
        if prefix != "mcpkit:":
            namespace = prefix.rstrip(":") or namespace
        return RedisBus(url, namespace)
    if scheme in ("postgresql", "postgres"):
        from mcpkit.store.bus_postgres import PostgresBus

        return PostgresBus(url, namespace)
    return None


def unavailable(engine: str, doing: str, exc: BaseException) -> StoreUnavailableError:
    """The one wording of an engine that cannot be reached, for both engines: the driver's
    text, which may hold the address, stays in the log."""
    log.debug("the %s broker cannot %s: %r", engine, doing, exc)
    return StoreUnavailableError(
        f"Service unavailable: the server's {engine} broker cannot {doing} "
        f"({type(exc).__name__}); it recovers by itself when {engine} returns, try again shortly",
        store=engine)
