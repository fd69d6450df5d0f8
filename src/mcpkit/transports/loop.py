"""Running a transport's event loop: uvloop when it is installed, asyncio's own otherwise.

uvloop roughly halves the CPU a stdio server spends per message; it is optional
(`pip install 'mcpkit[fast]'`) and nothing else in mcpkit depends on it. Without it the loop
is asyncio's, silently: an accelerator changes how fast a server runs, never what it does, so
its absence is no error and no warning (`mcpkit.protocol.extras.EXTRAS` still names its extra).
"""

from __future__ import annotations

import asyncio
import gc
from collections.abc import Coroutine
from typing import Any, TypeVar

from mcpkit.protocol.extras import available

__all__ = [
    "freeze_startup_heap",
    "run",
]

T = TypeVar("T")


def run(main: Coroutine[Any, Any, T]) -> T:
    """Run `main` to completion on uvloop when `fast` is installed, on asyncio's loop if not."""
    if not available("uvloop"):
        return asyncio.run(main)
    import uvloop

    with asyncio.Runner(loop_factory=uvloop.new_event_loop) as runner:
        return runner.run(main)


def freeze_startup_heap() -> None:
    """Put every object alive once the server is loaded (modules, the server's tables) out of
    the cyclic collector's reach: they live as long as the process, and every full collection
    would otherwise walk them again. Only for processes mcpkit runs (`run_stdio`, `run_http`)."""
    gc.freeze()
