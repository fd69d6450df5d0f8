"""`Job`: a task this process is running, as its handler and the task methods see it.

The stored record is the truth every process reads; the job is what only the running process
has: the asyncio task running the handler, its `TaskRound`, and the answers `tasks/update`
delivered that a parked ask has not taken yet. Every change goes through `Job.save`, which
stamps the record, writes it to the store and announces it (for `notifications/tasks`).
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from typing import Any

from mcpkit.ext.tasks.task_round import TaskRound
from mcpkit.protocol.codec import RequestId
from mcpkit.store.tasks import TaskRecord
from mcpkit.types.constants import Method

__all__ = ["Job", "progress_message"]

Save = Callable[[TaskRecord], Awaitable[None]]


def progress_message(params: dict[str, Any]) -> str | None:
    """A task's statusMessage for a progress report: its message, with the count when known."""
    progress, total, message = params.get("progress"), params.get("total"), params.get("message")
    count = f"{progress:g}/{total:g}" if isinstance(total, int | float) else (
        f"{progress:g}" if isinstance(progress, int | float) else None)
    if message and count:
        return f"{message} ({count})"
    return message or count


class Job:
    """One running task."""

    def __init__(self, record: TaskRecord, save: Save, rnd: TaskRound | None) -> None:
        self.record = record
        self.round = rnd
        self.task: asyncio.Future[dict[str, Any]] | None = None
        self.supervisor: asyncio.Future[None] | None = None
        """Stores how the task ended once the handler is done (held so it is not collected)."""
        self._save = save
        self._changed = asyncio.Condition()
        self._answers: dict[str, Any] = {}

    async def save(self) -> None:
        await self._save(self.record)

    # -- input (TASK-10) ---------------------------------------------------------------------

    async def park(self, requests: dict[str, Any]) -> dict[str, Any]:
        """Add `requests` to the outstanding ones, wait until each is answered, return them."""
        record = self.record
        record.input_requests.update(requests)
        record.asked.extend(k for k in requests if k not in record.asked)
        record.status = "input_required"
        record.status_message = "waiting for input: " + ", ".join(record.input_requests)
        await self.save()
        keys = list(requests)
        async with self._changed:
            await self._changed.wait_for(lambda: all(k in self._answers for k in keys))
        return {k: self._answers.pop(k) for k in keys}

    async def deliver(self, answers: dict[str, Any]) -> None:
        """Answers from `tasks/update`: those to outstanding keys are taken, the rest ignored."""
        record = self.record
        taken = {k: v for k, v in answers.items() if k in record.input_requests}
        if not taken:
            return
        for key in taken:
            del record.input_requests[key]
        if not record.input_requests and record.status == "input_required":
            record.status = "working"
            record.status_message = None
        await self.save()
        async with self._changed:
            self._answers.update(taken)
            self._changed.notify_all()

    # -- what the handler's Context sends ----------------------------------------------------

    async def notify(self, message: dict[str, Any]) -> None:
        """The Context's notifications inside a task: progress becomes the statusMessage;
        log messages have no stream to go to (the request that started it has ended)."""
        if message.get("method") != Method.PROGRESS or self.record.status != "working":
            return
        text = progress_message(message.get("params") or {})
        if text is not None and text != self.record.status_message:
            self.record.status_message = text
            await self.save()

    def cancel(self) -> None:
        if self.task is not None and not self.task.done():
            self.task.cancel()


def task_token(record: TaskRecord) -> RequestId:
    """The progress token a handler's reports carry inside a task (its id: never sent)."""
    return record.task_id
