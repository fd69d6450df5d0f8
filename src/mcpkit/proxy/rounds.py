"""An upstream's question as a question the proxy asks its caller, and the answer back.

Whatever asks (a 2025-11-25 upstream's request in the middle of a call, or an input request of
a 2026-07-28 upstream's `input_required` result), the proxy asks its own caller with the
server's own questions (`mcpkit.server.asking`): `Elicit`, `ElicitURL`, `Sample`, `ListRoots`,
built here from the upstream's params after `mcpkit.proxy.checked` and the questions' own
checks (a form must be one a client can render), so a question that cannot be asked is
refused here and never reaches the caller. The caller's answer, read and checked by the
server's round, is turned back into the wire result the upstream expects (`wire_answer`).

`advance` is one step of a held call for one round: the next questions it asks that the
caller can answer (the others are refused upstream at once), or how it ended. The replica
holding the call runs it, for a retry it got itself or one relayed from another replica.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Final

from mcpkit.client.inputs import MAX_INPUT_REQUESTS
from mcpkit.errors import InvalidParamsError, MethodNotFoundError, ProtocolViolation, RPCError
from mcpkit.protocol.envelope import missing_capabilities
from mcpkit.proxy import checked
from mcpkit.proxy.held import HeldCall, Outcome, Sink
from mcpkit.server.asking import (
    Elicit,
    Elicited,
    ElicitURL,
    ListRoots,
    Question,
    Root,
    Sample,
    Sampled,
)
from mcpkit.types.methods import Method

__all__ = [
    "Step",
    "advance",
    "question",
    "wire_answer",
]

MAX_ROUNDS: Final = 16
"""Rounds of questions one call may take through the proxy before it is stopped."""


def question(method: Any, params: Any, where: str) -> Question:
    """The question asking the caller what the upstream's `method` asks; `ProtocolViolation`
    naming what is wrong when it cannot be asked."""
    params = params if params is not None else {}
    if type(params) is not dict:
        raise ProtocolViolation(f"{where}: the params of {method} must be an object")
    try:
        if method == Method.ELICIT:
            message = params.get("message")
            if type(message) is not str or not message:
                raise ProtocolViolation(f"{where}: elicitation/create needs a message")
            if params.get("mode") == "url":
                url = params.get("url")
                asked: Question = ElicitURL(message, url if type(url) is str else "")
            elif params.get("mode", "form") == "form":
                schema = params.get("requestedSchema")
                if type(schema) is not dict or schema.get("type") != "object":
                    raise ProtocolViolation(
                        f"{where}: elicitation/create needs a requestedSchema object with "
                        '"type": "object"')
                asked = Elicit(message, schema)
            else:
                raise ProtocolViolation(f"{where}: elicitation mode {params.get('mode')!r} is "
                                        "none the protocol defines")
        elif method == Method.SAMPLE:
            asked = Sample(**checked.sampling_params(params, f"{where}: {method} params"))
        elif method == Method.ROOTS_LIST:
            asked = ListRoots()
        else:
            raise ProtocolViolation(f"{where}: the upstream asked {method!r}, which a server "
                                    "may not ask its client")
        asked.request(where)  # the question's own checks: a renderable form, a sane URL
    except (TypeError, ValueError) as exc:
        raise ProtocolViolation(f"{where}: {exc}") from None
    return asked


def wire_answer(answer: Any) -> dict[str, Any]:
    """The wire result of the caller's answer as the server's round read it."""
    if isinstance(answer, Elicited | Sampled):
        return dict(answer.raw)
    if isinstance(answer, list) and all(isinstance(r, Root) for r in answer):
        return {"roots": [{"uri": r.uri, **({"name": r.name} if r.name else {})}
                          for r in answer]}
    raise TypeError(f"no wire answer for {type(answer).__name__}")


@dataclass(frozen=True, slots=True)
class Step:
    """What one round of a call comes to: an outcome, or questions for the caller (each the
    checked wire request, by key) in round `round` of the held call."""

    outcome: Outcome | None = None
    questions: dict[str, dict[str, Any]] | None = None
    round: int = 0
    holder: str = ""
    """The process holding the call that asks `questions` (`Relay.origin`)."""
    call: str = ""
    """That call's id."""

    def to_wire(self) -> dict[str, Any]:
        """The step as a replica tells it to the replica that relayed the retry."""
        if self.questions is not None:
            return {"questions": self.questions, "round": self.round}
        assert self.outcome is not None
        if self.outcome.error is not None:
            return {"error": self.outcome.error.to_error()}
        return {"result": self.outcome.result}

    @classmethod
    def from_wire(cls, message: Mapping[str, Any], where: str) -> Step:
        questions, round_ = message.get("questions"), message.get("round")
        if type(questions) is dict and type(round_) is int:
            return cls(questions=questions, round=round_)
        error, result = message.get("error"), message.get("result")
        if type(error) is dict:
            return cls(Outcome(error=RPCError.from_wire(error)))
        if type(result) is dict:
            return cls(Outcome(result=result))
        raise ProtocolViolation(f"{where}: the replica holding the call answered nothing usable")


async def advance(call: HeldCall, capabilities: Mapping[str, Any], sink: Sink) -> Step:
    """The held call's next step for a caller of these client `capabilities`: the questions
    it can be asked (an upstream request it cannot answer, or that cannot be asked at all,
    is refused upstream at once), or the outcome."""
    while True:
        event = await call.next(sink)
        if isinstance(event, Outcome):
            return Step(event)
        asked: dict[str, dict[str, Any]] = {}
        for entry in event:
            where = f"{call.where}: the upstream's {entry.request.method}"
            try:
                made = question(entry.request.method, entry.request.params, where)
            except ProtocolViolation as exc:
                call.refuse(entry, InvalidParamsError(f"refused by the proxy: {exc}"))
                continue
            lacking = missing_capabilities(capabilities, made.capability)
            if lacking or len(asked) >= MAX_INPUT_REQUESTS:
                why = (f"its caller did not declare {', '.join(sorted(lacking))}" if lacking
                       else f"it passes on at most {MAX_INPUT_REQUESTS} questions at once")
                call.refuse(entry, MethodNotFoundError(
                    f"{entry.request.method}: the proxy cannot ask this: {why}",
                    {"method": entry.request.method}))
                continue
            asked[entry.key] = made.request(where)
        if asked:
            return Step(questions=asked, round=call.round)
