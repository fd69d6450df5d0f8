"""Asking for input inside a task: the same `ctx.ask`, answered through `tasks/update`.

A task tool's call starts like any call: its handler runs in the request, and an ask it makes
then is a multi round-trip exchange (an `InputRequiredResult`, a retry with the answers: no
task exists yet, TASK-9). `TaskRound` is that round until the call becomes a task
(`detach`); from then on an ask the request cannot answer parks the task in `input_required`
with the question among its outstanding `inputRequests` and waits for `tasks/update` to bring
the answer, instead of ending the round.

An answer is kept for the task's lifetime by key: asking a key again returns it (as a retry's
carried answer does in a round), so a key is never issued twice with two meanings (TASK-10).
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Mapping
from typing import Any

from mcpkit.errors import MissingRequiredClientCapabilityError
from mcpkit.protocol.envelope import missing_capabilities
from mcpkit.server.extending import Question, Round, Sealer, check_question

__all__ = [
    "Park",
    "TaskRound",
]

Park = Callable[[dict[str, Any]], Awaitable[dict[str, Any]]]
"""Parks the task on these input requests (by key) and returns their raw answers by key."""


class TaskRound(Round):
    """A round that turns into a task's input channel once the call becomes a task."""

    __slots__ = ("_created", "_known", "_park")

    def __init__(self, sealer: Sealer, method: str, target: str, arguments: Any,
                 params: dict[str, Any], principal: Any) -> None:
        super().__init__(sealer, method, target, arguments, params, principal)
        self._park: Park | None = None
        self._known: dict[str, Any] = {}
        self._created = asyncio.Event()

    def detach(self, park: Park) -> None:
        """From now on, asks park the task (once `created` says the task is stored)."""
        self._known = self.given
        self._park = park

    def created(self) -> None:
        self._created.set()

    @property
    def detached(self) -> bool:
        return self._park is not None

    def remember(self, answers: Mapping[str, Any]) -> None:
        """Answers given before this process ran the task (a resumed task's)."""
        self._known.update(answers)

    @property
    def known(self) -> dict[str, Any]:
        return self._known

    async def ask(self, capabilities: dict[str, Any], questions: Mapping[str, Question], *,
                  single_use: bool = False, skip_unsupported: bool = False) -> dict[str, Any]:
        if self._park is None:
            return await super().ask(capabilities, questions, single_use=single_use,
                                     skip_unsupported=skip_unsupported)
        where = self.where
        answers: dict[str, Any] = dict.fromkeys(questions)
        lacking: dict[str, Any] = {}
        waiting: dict[str, Question] = {}
        for key, question in questions.items():
            check_question(where, key, question)
            missing = missing_capabilities(capabilities, question.capability)
            if missing:
                if not skip_unsupported:
                    for name, sub in missing.items():
                        lacking.setdefault(name, {}).update(sub)
                continue
            question.request(where)
            if key in self._known:
                answers[key] = question.read(self._known[key], where, key)
            else:
                waiting[key] = question
        if lacking:
            raise MissingRequiredClientCapabilityError(
                lacking, f"{where} needs the client capability {', '.join(sorted(lacking))} to "
                f"ask {', '.join(repr(k) for k in questions)}; the request that started the task "
                "did not declare it")
        if waiting:
            await self._created.wait()
            raw = await self._park({k: q.request(where) for k, q in waiting.items()})
            for key, question in waiting.items():
                self._known[key] = raw[key]
                answers[key] = question.read(raw[key], where, key)
        return answers

    async def redeem(self) -> bool:
        # Inside a task, answers come once through tasks/update, never replayed by a retry.
        if self._park is not None:
            return True
        return await super().redeem()
