"""Held calls: an upstream call kept running between the rounds of its caller's request.

A 2025-11-25 upstream asks its client in the middle of a call (`elicitation/create`,
`sampling/createMessage`, `roots/list`) and waits for the answer on the same connection. A
2026-07-28 caller cannot be asked that way: it is answered `input_required` and retries. So
the proxy holds the upstream call: the call runs in a task of the proxy process that started
it, the upstream's request waits there for its answer, and the caller's round ends with the
question. The retry brings the answer; the held call takes it, goes on, and the next thing it
needs (another question, or its result) answers the retry.

`HeldCall` is one such call: its task, what it asks (`Asked`, each with the future its
upstream request awaits), its `Outcome`, and where its progress and log messages go while a
round waits (`Sink`; between rounds they are kept, a few, for the next). `HeldCalls` is this
process's table of them, by id, each with its hold timer: a call nobody answers within
`ProxyOptions.hold_s` is cancelled upstream and forgotten, so a retry after that learns it is
gone rather than waiting.
"""

from __future__ import annotations

import asyncio
import collections
import logging
import secrets
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any, Final, Protocol

from mcpkit.client.inputs import InputRequest
from mcpkit.errors import InternalError, InvalidParamsError, RPCError

__all__ = [
    "Asked",
    "HeldCall",
    "HeldCalls",
    "Outcome",
    "Sink",
]

log = logging.getLogger("mcpkit.proxy")

_KEPT_NOTES: Final = 16
"""Progress and log messages kept while no round waits, for the next one; older ones go."""


class Sink(Protocol):
    """Where a held call's progress and log messages go while a round waits for it."""

    async def progress(self, progress: Any, total: Any, message: Any) -> None: ...

    async def log(self, level: Any, data: Any, logger: Any) -> None: ...


@dataclass(slots=True)
class Asked:
    """One request the upstream sent in the middle of the call, waiting for its answer."""

    request: InputRequest
    answer: asyncio.Future[dict[str, Any]]
    key: str = ""
    """Its key among the round's `inputRequests`, once the round that asks it is made."""


@dataclass(frozen=True, slots=True)
class Outcome:
    """How the upstream call ended: its result, or the error to answer with."""

    result: dict[str, Any] | None = None
    error: RPCError | None = None


Start = Callable[["HeldCall"], Awaitable[dict[str, Any]]]
"""Runs the upstream request of a held call (on a connection that names the call)."""


@dataclass(slots=True)
class _Note:
    kind: str
    args: tuple[Any, Any, Any]


class HeldCall:
    """One upstream call and the questions it asks; see the module docstring."""

    def __init__(self, where: str, failure: Callable[[BaseException], RPCError]) -> None:
        self.id = secrets.token_urlsafe(16)
        self.where = where
        """The request it serves, for messages (`tools/call 'book'`)."""
        self.round = 0
        """How many rounds of questions it has handed out."""
        self.sink: Sink | None = None
        self._failure = failure
        self._events: asyncio.Queue[Asked | Outcome] = asyncio.Queue()
        self._asked: dict[str, Asked] = {}
        self._notes: collections.deque[_Note] = collections.deque(maxlen=_KEPT_NOTES)
        self._task: asyncio.Task[None] | None = None

    def start(self, run: Start) -> None:
        self._task = asyncio.get_running_loop().create_task(self._run(run))

    async def _run(self, run: Start) -> None:
        try:
            outcome = Outcome(result=await run(self))
        except asyncio.CancelledError:
            self._events.put_nowait(Outcome(error=InternalError(
                f"{self.where}: the upstream call was cancelled")))
            raise
        except BaseException as exc:  # every failure is an outcome the caller is answered with
            outcome = Outcome(error=self._failure(exc))
        self._events.put_nowait(outcome)

    # -- the upstream's side ----------------------------------------------------------------

    async def ask(self, request: InputRequest) -> dict[str, Any]:
        """The answer to a request the upstream sent for this call (its client's handlers
        await this)."""
        asked = Asked(request, asyncio.get_running_loop().create_future())
        self._events.put_nowait(asked)
        return await asked.answer

    async def progress(self, progress: Any, total: Any, message: Any) -> None:
        await self._note(_Note("progress", (progress, total, message)))

    async def log(self, level: Any, data: Any, logger: Any) -> None:
        await self._note(_Note("log", (level, data, logger)))

    async def _note(self, note: _Note) -> None:
        sink = self.sink
        if sink is None:
            self._notes.append(note)
            return
        await _deliver(sink, note)

    # -- the caller's side ------------------------------------------------------------------

    async def next(self, sink: Sink) -> list[Asked] | Outcome:
        """What the call needs next: the questions it asks now (all that are waiting), or how
        it ended. Its progress and log messages meanwhile go to `sink`."""
        self.sink = sink
        try:
            while self._notes:
                await _deliver(sink, self._notes.popleft())
            event = await self._events.get()
            if isinstance(event, Outcome):
                return event
            batch = [event]
            while not self._events.empty():
                more = self._events.get_nowait()
                if isinstance(more, Outcome):  # cannot come while the call waits: keep it
                    self._events.put_nowait(more)
                    break
                batch.append(more)
        finally:
            self.sink = None
        self.round += 1
        for i, asked in enumerate(batch):
            asked.key = f"{self.round}.{i}"
            self._asked[asked.key] = asked
        return batch

    def answer(self, round_: int, answers: dict[str, Any]) -> None:
        """Hand the caller's answers (by key) to the upstream requests of round `round_`;
        `InvalidParamsError` when that round is not the one waiting (answered already)."""
        if round_ != self.round or not self._asked:
            raise InvalidParamsError(
                f"{self.where}: this retry answers round {round_} of the held upstream call, "
                f"which is at round {self.round}; a retry is answered once, so call again "
                "without its requestState")
        asked, self._asked = self._asked, {}
        for key, entry in asked.items():
            if entry.answer.done():
                continue
            reply = answers.get(key)
            if isinstance(reply, BaseException):
                entry.answer.set_exception(reply)
            elif type(reply) is dict:
                entry.answer.set_result(reply)
            else:
                entry.answer.set_exception(InvalidParamsError(
                    f"{self.where}: the caller gave no answer to {entry.request.method}"))

    def refuse(self, asked: Asked, error: RPCError) -> None:
        """Answer one upstream request with an error (the caller cannot be asked it)."""
        if not asked.answer.done():
            asked.answer.set_exception(error)

    def cancel(self) -> None:
        """Stop the upstream call (the caller went, or nobody answered in time)."""
        for entry in self._asked.values():
            if not entry.answer.done():
                entry.answer.cancel()
        self._asked = {}
        if self._task is not None:
            self._task.cancel()

    @property
    def done(self) -> bool:
        return self._task is not None and self._task.done()


async def _deliver(sink: Sink, note: _Note) -> None:
    try:
        if note.kind == "progress":
            await sink.progress(*note.args)
        else:
            await sink.log(*note.args)
    except Exception:  # a report that cannot be passed on never ends the call
        log.debug("a %s message of a held call was not passed on", note.kind, exc_info=True)


@dataclass(slots=True)
class _Entry:
    call: HeldCall
    timer: asyncio.TimerHandle | None = None


@dataclass(slots=True)
class HeldCalls:
    """This process's held calls, by id, each forgotten after `hold_s` without an answer."""

    hold_s: float
    _calls: dict[str, _Entry] = field(default_factory=dict)

    def hold(self, call: HeldCall) -> None:
        """Keep `call` until its answer comes or `hold_s` passes (then it is cancelled)."""
        entry = self._calls.get(call.id)
        if entry is None:
            entry = self._calls[call.id] = _Entry(call)
        if entry.timer is not None:
            entry.timer.cancel()
        entry.timer = asyncio.get_running_loop().call_later(self.hold_s, self._expire, call.id)

    def take(self, call_id: str) -> HeldCall | None:
        """The held call of that id, its timer stopped (a retry is answering it), or None."""
        entry = self._calls.get(call_id)
        if entry is None:
            return None
        if entry.timer is not None:
            entry.timer.cancel()
            entry.timer = None
        return entry.call

    def drop(self, call: HeldCall) -> None:
        entry = self._calls.pop(call.id, None)
        if entry is not None and entry.timer is not None:
            entry.timer.cancel()

    def _expire(self, call_id: str) -> None:
        entry = self._calls.pop(call_id, None)
        if entry is not None:
            log.warning("%s: no answer came within %s s (ProxyOptions.hold_s); the held "
                        "upstream call is cancelled", entry.call.where, self.hold_s)
            entry.call.cancel()

    def close(self) -> None:
        """Cancel every held call (the proxy is stopping)."""
        for entry in list(self._calls.values()):
            self.drop(entry.call)
            entry.call.cancel()

    def __len__(self) -> int:
        return len(self._calls)
