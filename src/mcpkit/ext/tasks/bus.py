"""The controls replicas send each other about tasks, over the server's shared broker: what
one says (`announce`); what the one running the task does on hearing it is
`mcpkit.ext.tasks.controls`.

A broker carries them when it has `publish_control` and `controls` (PostgreSQL's and Redis's);
a single process's (`LocalBroker`) has none, and needs none.
"""

from __future__ import annotations

import logging
from typing import Any, Literal

from mcpkit.errors import StoreUnavailableError

__all__ = [
    "Action",
    "announce",
    "shared_broker",
]

log = logging.getLogger("mcpkit.tasks")

Action = Literal["cancel", "update", "release"]
"""What a control says happened to a task: a cancel or answers stored for it (its runner
reads the store), or its lease handed back by a stopping replica (any other may take it up)."""


def shared_broker(server: Any) -> Any | None:
    """The server's broker when it carries task controls between replicas, else None."""
    broker = server.broker
    if callable(getattr(broker, "publish_control", None)) and callable(
            getattr(broker, "controls", None)):
        return broker
    return None


async def announce(server: Any, task_id: str, action: Action) -> None:
    """Tell the replica running `task_id` that its cancel request or answers are stored.

    Called after the durable write, and never failing the request: when the bus is down the
    write still stands and the running replica takes it up at its next heartbeat."""
    broker = shared_broker(server)
    if broker is None:
        return
    try:
        await broker.publish_control(task_id, {"action": action})
    except StoreUnavailableError as exc:
        log.warning("task %s: the %s is stored but could not be announced to the other "
                    "replicas (%s); the replica running it takes it up at its next heartbeat "
                    "(TaskOptions.heartbeat_s)", task_id, action, exc)
