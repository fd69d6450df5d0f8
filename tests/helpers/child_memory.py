"""Memory measured in a fresh interpreter of its own, never in the test process: there, other
tests' leftovers, fixtures, the collector and any thread the run started allocate too, and a
bound on the difference would pass or fail with them.

`traced(setup)` runs the statements `setup` in a new Python process; they define `work` (a
function or coroutine function of no arguments) and may define `prepare` (the same), which runs
first, untraced. Then `work` runs with tracemalloc on, and what it left allocated and its peak
come back, in bytes. Only what `work` allocates is traced: what `setup` and `prepare` built (a
schema, a store and its first entries) is there before tracing starts. `run_here(setup)` runs
the same statements in the test's own event loop, for the checks that are not of memory.
"""

from __future__ import annotations

import inspect
import json
import os
import subprocess
import sys
import textwrap
from typing import Any

_PROGRAM = """
import asyncio, inspect, json, tracemalloc
loop = asyncio.new_event_loop()

def call(function):
    if inspect.iscoroutinefunction(function):
        loop.run_until_complete(function())
    else:
        function()

{setup}
if "prepare" in globals():
    call(prepare)
tracemalloc.start()
before = tracemalloc.get_traced_memory()[0]
call(work)
now, peak = tracemalloc.get_traced_memory()
tracemalloc.stop()
print(json.dumps({{"left": now - before, "peak": peak - before}}))
"""


def unmeasured_env() -> dict[str, str]:
    """This environment without coverage.py's hand-over to child processes: a measured child's
    own tracer allocates too, and its figures would be coverage's as much as the code's."""
    return {k: v for k, v in os.environ.items() if not k.startswith("COVERAGE_")}


def traced(setup: str, *, timeout: float = 300) -> dict[str, int]:
    """{"left": bytes still allocated after `work` that were not before it, "peak": the most
    allocated at once during it, above where it started}."""
    program = _PROGRAM.format(setup=textwrap.dedent(setup))
    done = subprocess.run([sys.executable, "-c", program], capture_output=True, text=True,
                          timeout=timeout, env=unmeasured_env())
    assert done.returncode == 0, done.stderr[-3000:]
    figures: dict[str, int] = json.loads(done.stdout.strip().splitlines()[-1])
    return figures


async def run_here(setup: str) -> dict[str, Any]:
    """The statements `setup` run in this process, `prepare` and `work` awaited (or called) in
    turn; returns the names they defined."""
    names: dict[str, Any] = {}
    exec(textwrap.dedent(setup), names)
    for step in ("prepare", "work"):
        if step in names:
            done = names[step]()
            if inspect.isawaitable(done):
                await done
    return names
