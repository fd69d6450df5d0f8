"""Running a transport's event loop: uvloop when it is installed, asyncio's own otherwise.

uvloop roughly halves the CPU a stdio server spends per message; it is optional
(`pip install mcpkit[fast]`) and nothing else in mcpkit depends on it.
"""

from __future__ import annotations

import asyncio
from collections.abc import Coroutine
from typing import Any, TypeVar

__all__ = ["run"]

T = TypeVar("T")


def run(main: Coroutine[Any, Any, T]) -> T:
    try:
        import uvloop
    except ImportError:
        return asyncio.run(main)
    with asyncio.Runner(loop_factory=uvloop.new_event_loop) as runner:
        return runner.run(main)
