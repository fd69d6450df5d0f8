"""`ProgressWatch`: the progress a handler reports before its call becomes a task.

A task tool's handler starts in the request, like any call; what it reports within the
synchronous budget is the progress of that request (sent on when the request asked for it)
and, should the call become a task, the task's first statusMessage.
"""

from __future__ import annotations

from typing import Any

from mcpkit.ext.tasks.jobs import progress_message
from mcpkit.protocol.envelope import RequestMeta
from mcpkit.server.extending import Context
from mcpkit.types.methods import Method

__all__ = ["ProgressWatch"]


class ProgressWatch:
    """Keeps the last progress report a handler makes before its call becomes a task, so the
    task starts with it as its statusMessage; forwards the reports the request asked for."""

    def __init__(self, ctx: Context) -> None:
        self.last: str | None = None
        meta = ctx.meta
        asked = meta.progress_token is not None

        async def relay(message: dict[str, Any]) -> None:
            if message.get("method") == Method.PROGRESS:
                self.last = progress_message(message.get("params") or {}) or self.last
                if not asked:
                    return
            if forward is not None:
                await forward(message)

        forward = ctx.route_notifications(relay)
        if not asked:  # progress is the task's to keep, asked for or not
            ctx.meta = RequestMeta(meta.protocol_version, meta.client_capabilities,
                                   meta.client_info, meta.log_level, "task-progress", meta.raw)
