"""Task controls across replicas: a `tasks/cancel` or `tasks/update` served by one replica
reaches the replica running the task at once, through the server's shared broker.

The store stays the truth. The method first writes the cancel request or the answers to the
store, then publishes a control that names the task (`bus.announce`); a replica that stops hands
its resumable tasks back the same way (`release`), so another resumes them at once. Every replica hears it; the
one running the task reads what was stored for it (`upkeep.pick_up`, the very step its
heartbeat takes) and acts on it: the handler's asyncio task is cancelled, or a parked ask gets
its answers. A control carries no answers of its own, so a control heard twice, or one that
arrives together with a heartbeat, takes nothing twice (the store hands stored answers out
once). A control lost while the bus is down costs only time: the next heartbeat picks the
change up, as it does when there is no broker at all.

The broker of a single process (`LocalBroker`) has no controls, and needs none: that process
runs every task it serves, and the methods reach the running job directly.
"""

from __future__ import annotations

import asyncio
import logging
from typing import TYPE_CHECKING, Any, Final

from mcpkit.errors import StoreUnavailableError
from mcpkit.ext.tasks.bus import shared_broker
from mcpkit.ext.tasks.upkeep import pick_up, recover

if TYPE_CHECKING:
    from mcpkit.ext.tasks.keeper import TaskKeeper

__all__ = ["follow_controls"]

log = logging.getLogger("mcpkit.tasks")

_RETRY_S: Final = (0.1, 2.0)
"""The first and the longest wait before listening for controls again after the bus failed."""


async def follow_controls(runtime: TaskKeeper) -> None:
    """Act on every control any replica publishes for a task this process runs, until the
    broker closes; while the bus is unreachable, retry listening with a bounded backoff (the
    broker logs the outage itself, once)."""
    broker = shared_broker(runtime.server)
    if broker is None:
        return
    delay, longest = _RETRY_S
    while True:
        try:
            async with broker.controls() as controls:
                delay = _RETRY_S[0]
                async for task_id, message in controls:
                    await _act(runtime, task_id, message)
            return  # the broker closed: this server is stopping
        except StoreUnavailableError:
            pass
        except Exception:  # never let a surprise end the listening: the heartbeat alone is slow
            log.exception("listening for task controls failed; listening again")
        await asyncio.sleep(delay)
        delay = min(delay * 2, longest)


async def _act(runtime: TaskKeeper, task_id: str, message: dict[str, Any]) -> None:
    job = runtime.jobs.get(task_id)
    try:
        if job is not None:
            await pick_up(runtime, job)
            return
        if message.get("action") != "release" or runtime.draining:
            return  # another replica's task (or one that has just ended here)
        record = await runtime.store.get(task_id)
        if record is not None and not record.terminal and record.lease_until is not None \
                and record.lease_until < runtime.clock():
            await recover(runtime, record)  # the claim lets one replica of all take it up
    except Exception:  # the store failed: the heartbeat tries again
        log.exception("task %s: a %s control could not be acted on now; retrying at the next "
                      "heartbeat", task_id, message.get("action"))
