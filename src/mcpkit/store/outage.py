"""What a request gets while a shared store is down: one wording for every engine.

A store that cannot be reached fails the request that needs it at once with
`StoreUnavailableError` (-32603 with `data.unavailable`, HTTP 503) rather than letting it hang;
the process stays up and the engine's pool reconnects in the background. The message names
the engine and what was being done, never the address or credentials: the driver's own words,
which hold them, go to the log, at most every five seconds so an outage does not flood it.

A store that hangs (its processes stopped, a network that drops packets without a reset)
would hold a request until TCP gives up, minutes later. `deadline` bounds a whole store
operation (getting a connection, its statements, the commit) so it ends the same way.

Imports: the standard library and `mcpkit.errors`.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Final

from mcpkit.errors import StoreUnavailableError

__all__ = [
    "DEFAULT_DEADLINE_S",
    "deadline",
    "unavailable",
]

DEFAULT_DEADLINE_S: Final = 5.0
"""The most one store operation may take, by default (the store URL's `timeout=`)."""
_GRACE_S: Final = 0.1
"""After the deadline, how long a driver may spend cancelling the statement on the server
before it is interrupted again (psycopg then closes the connection at once)."""

log = logging.getLogger("mcpkit.store")

_last_logged: list[float] = [float("-inf")]


def unavailable(engine: str, name: str, what: str, exc: BaseException) -> StoreUnavailableError:
    """The error for a request that needed `engine` (named `name` in `data.unavailable`)
    while `what`, caused by the driver's `exc`."""
    now = time.monotonic()
    if now - _last_logged[0] >= 5.0:
        _last_logged[0] = now
        text = str(exc).strip().splitlines()
        log.warning("the %s store cannot be reached while %s: %s", engine, what,
                    (text[0] if text else type(exc).__name__)[:300])
    return StoreUnavailableError(
        f"Service unavailable: the server's {engine} store cannot be reached while {what}; "
        "the server reconnects by itself when it returns, try again shortly", store=name)


@asynccontextmanager
async def deadline(seconds: float) -> AsyncIterator[None]:
    """Cancel the block after `seconds`, and raise `TimeoutError` for it.

    Like `asyncio.timeout`, but a driver that answers the cancellation by cancelling its
    statement on the server (psycopg waits up to ten seconds for a server that does not
    answer) is interrupted a second time after `_GRACE_S`, so the request that waited is
    answered within the deadline and a grace, and the hung connection is dropped."""
    task = asyncio.current_task()
    assert task is not None, "deadline() runs inside a task"
    loop = asyncio.get_running_loop()
    fired = 0
    timers: list[asyncio.TimerHandle] = []

    def fire() -> None:
        nonlocal fired
        fired += 1
        task.cancel()
        if fired == 1:
            timers.append(loop.call_later(_GRACE_S, fire))

    timers.append(loop.call_later(seconds, fire))
    try:
        yield
    except asyncio.CancelledError:
        for timer in timers:
            timer.cancel()
        if not fired:
            raise
        for _ in range(fired):
            task.uncancel()
        if task.cancelling():
            raise  # cancelled from outside as well: that one wins
        raise TimeoutError(f"no answer within {seconds:g} s") from None
    else:
        for _ in range(fired):  # the block took our cancellation and ended anyway
            task.uncancel()
    finally:
        for timer in timers:
            timer.cancel()
