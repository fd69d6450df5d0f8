"""`Job`: a task this process is running, as its handler and the task methods see it.

The stored record is the truth every process reads; the job is what only the running process
has: the asyncio task running the handler, its `TaskRound`, the answers a parked ask waits
for, and why the handler was stopped when something other than its own end stopped it. Every
change goes through `Job.save`, one at a time per job (so two writes of one task never reach
the store out of order), which writes only while this process holds the task's lease: a save
the store refuses means another process runs the task now, and the handler is stopped
instead of going on beside it. `shown` is the state last stored, which the task methods
answer with, so a client never sees a state the store did not take.
"""

from __future__ import annotations

import asyncio
import dataclasses
from collections.abc import Awaitable, Callable
from typing import Any, Literal

from mcpkit.ext.tasks.records import TaskRecord
from mcpkit.ext.tasks.task_round import TaskRound
from mcpkit.protocol.codec import RequestId
from mcpkit.types.methods import Method

__all__ = [
    "Job",
    "Stop",
    "answered",
    "progress_message",
    "snapshot",
    "waiting",
]

Save = Callable[[TaskRecord], Awaitable[bool]]
"""Writes a record if this process holds its lease; False when it does not."""
Stored = Callable[[], Awaitable[dict[str, Any]]]
"""The answers the store holds for the task."""

Stop = Literal["cancel", "timeout", "lost", "expired", "handback", "shutdown"]
"""Why a handler was stopped: a `tasks/cancel`; no answer within `TaskOptions.input_wait_s`;
its lease taken by another process (or not renewed in time); its TTL over; handed back by
a stopping process (resumable); the stopping process's grace ran out (not resumable)."""


def progress_message(params: dict[str, Any]) -> str | None:
    """A task's statusMessage for a progress report: its message, with the count when known."""
    progress, total, message = params.get("progress"), params.get("total"), params.get("message")
    count = f"{progress:g}/{total:g}" if isinstance(total, int | float) else (
        f"{progress:g}" if isinstance(progress, int | float) else None)
    if message and count:
        return f"{message} ({count})"
    return message or count


def snapshot(record: TaskRecord) -> TaskRecord:
    """A copy of `record` that later changes to it do not reach (its results are replaced,
    never changed in place, so they are shared)."""
    return dataclasses.replace(record, input_requests=dict(record.input_requests),
                               asked=list(record.asked), answers=dict(record.answers),
                               capabilities=dict(record.capabilities))


def waiting(record: TaskRecord) -> None:
    """Set an asking task's status and statusMessage from its outstanding input requests:
    `input_required` naming them, or `working` once none is left."""
    if record.input_requests:
        record.status = "input_required"
        record.status_message = "waiting for input: " + ", ".join(record.input_requests)
    else:
        record.status, record.status_message = "working", None


def answered(record: TaskRecord, answers: dict[str, Any]) -> TaskRecord:
    """`record` as its client is to see it once `answers` are stored for it: the keys they
    answer no longer outstanding. An answer a `tasks/update` brought to a replica that does
    not run the task is stored before it is acknowledged, and the runner takes it up a moment
    later; the answer is what counts, so a `tasks/get` right after the acknowledgement, on any
    replica, already shows it taken (TASK-10's "later `tasks/get` lists only pending keys")."""
    if record.status != "input_required" or answers.keys().isdisjoint(record.input_requests):
        return record
    view = snapshot(record)
    view.answers.update({k: v for k, v in answers.items() if k not in view.answers})
    for key in answers:
        view.input_requests.pop(key, None)
    waiting(view)
    return view


class Job:
    """One running task."""

    def __init__(self, record: TaskRecord, save: Save, stored: Stored, rnd: TaskRound | None,
                 clock: Callable[[], float]) -> None:
        self.record = record
        self.shown = snapshot(record)
        """The state last stored: what `tasks/get` and listeners are told."""
        self.round = rnd
        self.task: asyncio.Future[dict[str, Any]] | None = None
        self.supervisor: asyncio.Future[None] | None = None
        """Stores how the task ended once the handler is done (held so it is not collected)."""
        self.stopped: Stop | None = None
        self.stop_message: str | None = None
        self.parked_at: float | None = None
        """When it last began waiting for input (Unix seconds), None while working."""
        self.fence: asyncio.TimerHandle | None = None
        """Stops the handler when the lease ends before a heartbeat renewed it."""
        self._save = save
        self._stored = stored
        self._clock = clock
        self._saving = asyncio.Lock()
        self._changed = asyncio.Condition()
        self._answers: dict[str, Any] = {}

    async def save(self) -> bool:
        """Store the record as it is now; False (and the handler stopped) when this process
        no longer holds the task."""
        async with self._saving:
            if self.stopped == "lost":
                return False
            state = snapshot(self.record)
            state.updated_at = self._clock()
            if not await self._save(state):
                self.stop("lost")
                return False
            self.record.updated_at = state.updated_at
            self.shown = state
            return True

    def writing(self) -> asyncio.Lock:
        """Held while a write of this task is under way: `save`s wait for it."""
        return self._saving

    def stop(self, why: Stop, message: str | None = None) -> None:
        """Stop the handler (at its next await) for `why`; the first reason stands."""
        if self.stopped is None:
            self.stopped, self.stop_message = why, message
        if self.fence is not None:
            self.fence.cancel()
            self.fence = None
        if self.task is not None and not self.task.done():
            self.task.cancel()

    # -- input (TASK-10) ---------------------------------------------------------------------

    async def park(self, requests: dict[str, Any]) -> dict[str, Any]:
        """Add `requests` to the outstanding ones, wait until each is answered, return them."""
        record = self.record
        record.input_requests.update(requests)
        record.asked.extend(k for k in requests if k not in record.asked)
        waiting(record)
        self.parked_at = self._clock()
        if await self.save():
            # Answers given before this run asked (it was resumed after its first process
            # stopped) are in the store already: no key is asked twice.
            stored = await self._stored()
            await self.deliver({k: v for k, v in stored.items() if k in requests})
        keys = list(requests)
        async with self._changed:
            await self._changed.wait_for(lambda: all(k in self._answers for k in keys))
        return {k: self._answers.pop(k) for k in keys}

    async def deliver(self, answers: dict[str, Any]) -> None:
        """Stored answers: those to outstanding keys are taken, the rest ignored."""
        record = self.record
        taken = {k: v for k, v in answers.items() if k in record.input_requests}
        if not taken:
            return
        for key in taken:
            del record.input_requests[key]
        record.answers.update(taken)
        if record.status == "input_required":
            waiting(record)
            if not record.input_requests:
                self.parked_at = None
        if not await self.save():
            return
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


def task_token(record: TaskRecord) -> RequestId:
    """The progress token a handler's reports carry inside a task (its id: never sent)."""
    return record.task_id
