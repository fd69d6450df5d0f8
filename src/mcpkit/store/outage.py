"""What a request gets while a shared store is down: one wording for every engine.

A store that cannot be reached fails the request that needs it at once with
`StoreUnavailableError` (-32603 with `data.unavailable`, HTTP 503) rather than letting it hang;
the process stays up and the engine's pool reconnects in the background. The message names
the engine and what was being done, never the address or credentials: the driver's own words,
which hold them, go to the log, at most every five seconds so an outage does not flood it.

Imports: the standard library and `mcpkit.errors`.
"""

from __future__ import annotations

import logging
import time

from mcpkit.errors import StoreUnavailableError

__all__ = ["unavailable"]

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
