"""Multi round-trip requests on the server: rounds, what a retry brings, what a round asks.

In 2026-07-28 a server never sends a request to the client (MRTR-1). A handler that needs
input calls `ctx.ask(...)` (or `ctx.elicit`, `ctx.sample`, `ctx.roots`); when the request
does not yet carry the answer, the `InputRequired` signal ends this round and the method
answers an `InputRequiredResult`. The client retries the same request with `inputResponses`
and the echoed `requestState`, and the handler runs again from the top: each ask now returns
its answer. A `Round` is that bookkeeping for one request:

- on the way in it opens the presented `requestState` (every failure is -32602 naming the
  check, logged, and nothing of the state is used) and takes `inputResponses`;
- while the handler runs it answers asks from answers carried in the state, then from this
  request's `inputResponses`, and collects what is still missing;
- on the way out it seals `ctx.state` and the answers so far into a new `requestState`
  bound to the principal, the method and its target and arguments, with a short expiry.

So no server memory is used between rounds, and any instance holding the keys can serve a
retry. The keys, the clock and the single-use store are the server's `Sealer`
(`mcpkit.server.sealing`).

Imports: `mcpkit.protocol`, `mcpkit.errors`, `mcpkit.schema`, `mcpkit.server.asking`,
`mcpkit.server.sealing`.
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable, Mapping
from typing import Any, Final

import orjson

from mcpkit.errors import InvalidParamsError, MissingRequiredClientCapabilityError
from mcpkit.protocol.envelope import missing_capabilities
from mcpkit.protocol.request_state import Opened, StateRejected
from mcpkit.schema import json_type
from mcpkit.server.asking import Question, check_question
from mcpkit.server.sealing import Sealer

__all__ = [
    "InputRequired",
    "Round",
    "begin_round",
    "in_rounds",
]

log = logging.getLogger("mcpkit.server")

_EMPTY: Final[dict[str, Any]] = {}


class InputRequired(BaseException):
    """Ends a round that still needs input from the client.

    A BaseException, like cancellation, so that a handler's `except Exception` cannot
    swallow it by accident.
    """


def begin_round(ctx: Any, target: str, arguments: Any, params: dict[str, Any]) -> Round:
    """The round of one `tools/call`, `prompts/get` or `resources/read`; the context asks
    through it. The method catches `InputRequired` and answers `round.input_required()`.
    A request a handler made of its own server (`ctx.call_tool`) has its caller's round
    already, and asks through it (`mcpkit.server.calls`)."""
    if ctx._round is not None:
        return ctx._round  # type: ignore[no-any-return]
    rnd = Round(ctx.server.sealer, ctx.method, target, arguments, params, ctx.principal)
    ctx._round = rnd
    return rnd


async def in_rounds(
    ctx: Any, target: str, arguments: Any, params: dict[str, Any],
    work: Callable[[], Awaitable[dict[str, Any]]],
) -> dict[str, Any]:
    """Serve one `tools/call`, `prompts/get` or `resources/read` as a round: begin it (a bad
    presented state is refused before the handler runs), then run `work` for the method's
    result; when the handler still needs input, the result is the round's
    `InputRequiredResult` instead (never a cacheable one, MRTR-20)."""
    rnd = begin_round(ctx, target, arguments, params)
    try:
        return await work()
    except InputRequired:
        return rnd.input_required()


class _Ledger:
    """What a round that was answered, or that asks, keeps; most requests never make one."""

    __slots__ = ("carried", "opened", "pending", "redeemed", "responses", "state", "used")

    def __init__(self) -> None:
        self.responses: dict[str, Any] = _EMPTY
        self.opened: Opened | None = None
        self.carried: dict[str, Any] = _EMPTY
        self.state: dict[str, Any] | None = None
        self.pending: dict[str, Question] = {}
        self.used: dict[str, Any] = {}
        self.redeemed = False


class Round:
    """One request's part in a multi round-trip exchange."""

    __slots__ = ("_arguments", "_ledger", "_method", "_principal", "_sealer", "_target")

    def __init__(
        self, sealer: Sealer, method: str, target: str, arguments: Any, params: dict[str, Any],
        principal: Any,
    ) -> None:
        self._sealer = sealer
        self._method = method
        self._target = target
        self._arguments = arguments
        self._principal = principal
        self._ledger: _Ledger | None = None
        if "inputResponses" in params or "requestState" in params:
            self._take(params)

    @property
    def where(self) -> str:
        return f"{self._method} {self._target!r}"

    def _book(self) -> _Ledger:
        if self._ledger is None:
            self._ledger = _Ledger()
        return self._ledger

    def _take(self, params: dict[str, Any]) -> None:
        """Check what a retry brought, before the handler runs; nothing of a bad state is used."""
        book = self._book()
        responses = params.get("inputResponses", _EMPTY)
        if type(responses) is not dict:
            raise InvalidParamsError(
                f"{self.where}: inputResponses must be an object mapping each key of the "
                f"previous inputRequests to its result; got {json_type(responses)}"
            )
        book.responses = responses
        if "requestState" not in params:
            return
        token = params["requestState"]
        if type(token) is not str or not token:
            raise InvalidParamsError(
                f"{self.where}: requestState must be the string from the previous result, "
                "echoed unchanged"
            )
        try:
            opened = self._sealer.open_state(
                token, self._principal, self._method, self._target, self._arguments, self.where
            )
        except StateRejected as exc:
            log.warning("rejected requestState on %s: %s", self.where, exc.reason)
            raise
        body = orjson.loads(opened.body) if opened.body else _EMPTY
        state, carried = body.get("s"), body.get("a")
        book.state = state if type(state) is dict else None
        book.carried = carried if type(carried) is dict else _EMPTY
        book.opened = opened

    @property
    def given(self) -> dict[str, Any]:
        """Every answer this request has for its questions so far: carried in its state,
        sent in its `inputResponses`, or already used (a copy, by key)."""
        book = self._book()
        return {**book.carried, **book.responses, **book.used}

    @property
    def state(self) -> dict[str, Any]:
        book = self._book()
        if book.state is None:
            book.state = {}
        return book.state

    def can_ask(self, capabilities: dict[str, Any], question: Question) -> bool:
        return not missing_capabilities(capabilities, question.capability)

    async def ask(
        self,
        capabilities: dict[str, Any],
        questions: Mapping[str, Question],
        *,
        single_use: bool = False,
        skip_unsupported: bool = False,
    ) -> dict[str, Any]:
        """Each question's answer, or InputRequired for the ones this request lacks.

        An answer comes from the state (asked and answered in an earlier round) or else from
        this request's `inputResponses`. A `single_use` answer needs a valid state, which is
        then recorded as used, so replaying the retry is refused.
        """
        where = self.where
        lacking: dict[str, Any] = {}
        chosen: list[tuple[str, Question]] = []
        for key, question in questions.items():
            check_question(where, key, question)
            missing = missing_capabilities(capabilities, question.capability)
            if not missing:
                chosen.append((key, question))
            elif not skip_unsupported:
                for name, sub in missing.items():
                    lacking.setdefault(name, {}).update(sub)
        if lacking:
            names = ", ".join(sorted(lacking))
            raise MissingRequiredClientCapabilityError(
                lacking, f"{where} needs the client capability {names} to ask "
                f"{', '.join(repr(k) for k in questions)}; declare it in _meta "
                "io.modelcontextprotocol/clientCapabilities",
            )
        book = self._book()
        trusted = book.opened is not None or not single_use
        answers: dict[str, Any] = dict.fromkeys(questions)
        waiting: list[tuple[str, Question]] = []
        for key, question in chosen:
            question.request(where)  # checks the question where it is asked
            if key in book.carried:
                raw = book.carried[key]
            elif trusted and key in book.responses:
                raw = book.responses[key]
            else:
                waiting.append((key, question))
                continue
            answers[key] = question.read(raw, where, key)
            book.used[key] = raw
        if waiting:
            book.pending.update(waiting)
            raise InputRequired(where)
        if single_use:
            await self.redeem()
        return answers

    async def redeem(self) -> bool:
        """Use the presented state at most once; False when none was presented."""
        book = self._book()
        if book.opened is None:
            return False
        if not book.redeemed:
            await self._sealer.redeem(book.opened, self.where)
            book.redeemed = True
        return True

    def input_required(self) -> dict[str, Any]:
        """The `InputRequiredResult` that ends this round: what is still missing (MRTR-6) and
        the sealed state (always, so a retry can be bound to this request)."""
        book = self._book()
        carried = {**book.carried, **book.used} if book.used else book.carried
        body: dict[str, Any] = {}
        if book.state:
            body["s"] = book.state
        if carried:
            body["a"] = carried
        try:
            data = orjson.dumps(body) if body else b""
        except TypeError as exc:
            raise TypeError(
                f"{self.where}: ctx.state must hold only JSON data (dict, list, str, int, "
                f"float, bool, None): {exc}"
            ) from None
        result: dict[str, Any] = {"resultType": "input_required"}
        if book.pending:
            result["inputRequests"] = {
                key: question.request(self.where) for key, question in book.pending.items()
            }
        result["requestState"] = self._sealer.seal_state(
            self._principal, self._method, self._target, self._arguments, data
        )
        return result
