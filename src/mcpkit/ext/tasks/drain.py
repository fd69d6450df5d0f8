"""A stopping server hands its tasks back instead of leaving them to be found dead.

`drain(runtime, grace_s)` runs when the server is told to stop (SIGTERM, a rolling deploy):

- no task starts here any more, and none is taken over from another process;
- a resumable task is handed back at once: its handler is cancelled, its record stored with
  its lease ended (`TaskStore.release`) and the hand-back announced on the shared broker, so
  another replica claims it and runs it again within a moment, with every answer given so far
  (a hand-back is no crash: it does not count against `TaskOptions.max_attempts`);
- any other task has the grace period to finish; one still running when it ends is stopped
  and stored `failed`, its message saying the server was shut down before it finished and
  that its tool is not resumable, so its client learns why.

Without a shared broker a handed-back task waits for the next process's sweep (a restarted
server, or a `tasks/get`, takes it up at once since its lease has ended).
"""

from __future__ import annotations

import asyncio
import logging
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from mcpkit.ext.tasks.jobs import Job
    from mcpkit.ext.tasks.keeper import TaskKeeper

__all__ = ["drain"]

log = logging.getLogger("mcpkit.tasks")

_END_BOUND_S = 5.0
"""How long the drain waits for the handlers it stopped to be stored, after the grace."""


async def drain(runtime: TaskKeeper, grace_s: float) -> None:
    """Hand back, finish or end every task this process runs; see the module docstring."""
    runtime.draining = True
    jobs = list(runtime.jobs.values())
    for job in jobs:
        if job.record.resumable:
            job.stop("handback")
    waiting = {job.supervisor for job in jobs if job.supervisor is not None}
    if not waiting:
        return
    _, late = await asyncio.wait(waiting, timeout=grace_s)
    if late:
        for job in jobs:
            if job.supervisor in late:
                job.stop("shutdown", _shutdown_message(job, grace_s))
        await asyncio.wait(late, timeout=_END_BOUND_S)


def _shutdown_message(job: Job, grace_s: float) -> str:
    return (f"the server process running this task was shut down before it finished (its "
            f"grace period of {grace_s:g} s ran out); its tool {job.record.tool!r} is not "
            "resumable, so it was not run again: call it again")
