"""One call through the proxy: `tools/call`, `prompts/get` or `resources/read` forwarded
upstream, its rounds of questions bridged between the eras, its answer checked.

The proxy's handlers are ordinary handlers of the server (registered by
`mcpkit.proxy.catalogue`), each taking the `Context`, so a call is a round of the server's own
multi round-trip machinery in both eras (`mcpkit.server.mrtr`; a 2025-11-25 caller is asked
with real requests by the legacy session, which serves the call again with the answers). What
the round keeps in its sealed `requestState` (`ctx.state`) says how the call goes on:

- nothing: a first round. The call goes upstream as a `HeldCall`;
- `h`, `at`, `round`, `asked`: a 2025-11-25 upstream's call is held by the process `at` (this
  one, or another replica reached through `mcpkit.proxy.relay`) and asked the questions
  `asked` in round `round`; the retry's answers go to it;
- `rounds`, `asked`, `u`: a 2026-07-28 upstream answered `input_required`; nothing is held. Its
  questions were asked of the caller as they were, and its own `requestState` (`u`) rides
  inside the proxy's sealed one; the retry goes upstream with the answers and `u`.

Whichever way, the same step follows: questions end the round with `ctx.ask` (so the caller
gets `input_required`, or the legacy session's requests), a result is checked
(`mcpkit.proxy.checked`) and returned, an error is raised as the class its code names.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping
from dataclasses import replace
from typing import TYPE_CHECKING, Any, Final

import orjson

from mcpkit.client.inputs import MAX_INPUT_REQUESTS
from mcpkit.errors import (
    HeldCallGoneError,
    InternalError,
    InvalidParamsError,
    ProtocolViolation,
    RequestTimeoutError,
    RPCError,
    TransportError,
)
from mcpkit.proxy import checked
from mcpkit.proxy.held import HeldCall
from mcpkit.proxy.rounds import MAX_ROUNDS, Step, advance, question, wire_answer
from mcpkit.server.asking import Question
from mcpkit.server.context import Context
from mcpkit.types.constants import CLIENT_CAPABILITIES_KEY

if TYPE_CHECKING:
    from mcpkit.proxy.server import ProxyServer

__all__ = [
    "Bridge",
    "CallSink",
    "failure",
]

log = logging.getLogger("mcpkit.proxy")

MAX_UPSTREAM_STATE: Final = 65536
"""Longest `requestState` of an upstream that the proxy carries inside its own (characters)."""
_MAX_ERROR_DATA: Final = 4096
"""An upstream error's `data` is passed on when its JSON is at most this long."""


class CallSink:
    """A round's progress and log messages, checked, to its caller through the `Context`."""

    def __init__(self, ctx: Context) -> None:
        self._ctx = ctx

    async def progress(self, progress: Any, total: Any, message: Any) -> None:
        if not checked.number(progress):
            return
        await self._ctx.report_progress(progress, total if checked.number(total) else None,
                                        message if type(message) is str else None)

    async def log(self, level: Any, data: Any, logger: Any) -> None:
        read = checked.log_params({"level": level, "data": data, "logger": logger})
        if read is not None:
            await self._ctx.log(*read)


def failure(where: str) -> Any:
    """How an upstream call's failure is answered: the upstream's own JSON-RPC error (its
    message cut, its data kept when small), or -32603 saying what failed, the details logged
    (a stdio server's stderr may hold what no caller should read)."""

    def failed(exc: BaseException) -> RPCError:
        if isinstance(exc, RPCError):
            error: dict[str, Any] = {"code": exc.code, "message": checked.error_text(exc.message)}
            if exc.data is not None and len(orjson.dumps(exc.data)) <= _MAX_ERROR_DATA:
                error["data"] = exc.data
            return RPCError.from_wire(error)
        if isinstance(exc, RequestTimeoutError):
            return InternalError(f"{where}: the upstream server did not answer in time")
        if isinstance(exc, TransportError):
            log.warning("%s: the upstream connection failed: %s", where, exc)
            return InternalError(f"{where}: the connection to the upstream server failed")
        if isinstance(exc, ProtocolViolation):
            log.warning("%s: %s", where, exc)
            return InternalError(f"{where}: the upstream server broke the protocol: {exc}")
        log.error("%s: the upstream call failed", where, exc_info=exc)
        return InternalError(f"{where}: the proxy could not complete the upstream call")

    return failed


def _questions(asked: Mapping[str, Any], where: str) -> dict[str, Question]:
    """The questions of a round, from the checked wire requests its state keeps."""
    return {key: question(request.get("method"), request.get("params"), where)
            for key, request in asked.items()}


class Bridge:
    """The calls of one proxy; see the module docstring."""

    def __init__(self, proxy: ProxyServer) -> None:
        self._proxy = proxy

    async def call(self, ctx: Context, method: str, fields: dict[str, Any], where: str
                   ) -> dict[str, Any]:
        """The upstream's result of one call (checked by the caller for its method), after
        as many rounds as its questions take."""
        state = ctx.state
        sink = CallSink(ctx)
        if "h" in state:
            step = await self._held_round(ctx, state["at"], state["h"], state["round"],
                                          state["asked"], where, sink)
        elif "rounds" in state:
            step = await self._passed_round(ctx, method, fields, state, where, sink)
        else:
            step = await self._start(ctx, method, fields, where, sink)
        for _ in range(MAX_ROUNDS):
            if step.questions is not None:
                self._keep(ctx, {"h": step.call, "at": step.holder, "round": step.round,
                                 "asked": step.questions})
                step = await self._held_round(ctx, step.holder, step.call, step.round,
                                              step.questions, where, sink)
                continue
            assert step.outcome is not None
            if step.outcome.error is not None:
                raise step.outcome.error
            result = step.outcome.result
            assert result is not None
            if result.get("resultType") != "input_required":
                return result
            step = await self._upstream_round(ctx, method, fields, result, where, sink)
        raise InternalError(f"{where}: the upstream server still asks after {MAX_ROUNDS} rounds")

    def _keep(self, ctx: Context, state: dict[str, Any]) -> None:
        """What the next round needs, sealed into this round's `requestState`."""
        kept = ctx.state
        kept.clear()
        kept.update(state)

    async def _start(self, ctx: Context, method: str, sent: dict[str, Any], where: str,
                     sink: CallSink) -> Step:
        """Send the call upstream, held by this process, and wait for its first step. The
        upstream sees the caller's client capabilities (those the proxy can answer for)."""
        proxy = self._proxy
        call = HeldCall(where, failure(where))
        asks = proxy.proxy_options.asks
        meta = {CLIENT_CAPABILITIES_KEY: {k: v for k, v in ctx.client_capabilities.items()
                                          if k in asks}}

        async def run(held: HeldCall) -> dict[str, Any]:
            async with proxy.upstream.lease(held) as client:
                return await client.request(method, sent, meta=meta, progress=held.progress,
                                            log=held.log, timeout=None)

        call.start(run)
        return await self._held_step(call, ctx, sink)

    async def _held_step(self, call: HeldCall, ctx: Context, sink: CallSink) -> Step:
        try:
            step = await advance(call, ctx.client_capabilities, sink)
        except BaseException:  # the caller went: so does the upstream call
            self._proxy.held.drop(call)
            call.cancel()
            raise
        if step.questions is not None:
            self._proxy.held.hold(call)
            return replace(step, holder=self._proxy.relay.origin, call=call.id)
        self._proxy.held.drop(call)
        return step

    async def _held_round(self, ctx: Context, holder: str, call_id: str, round_: int,
                          asked: dict[str, Any], where: str, sink: CallSink) -> Step:
        """A held call's round: the caller is asked its questions (the round ends here until
        the retry brings the answers), which then go to the call, wherever it is held."""
        answers = await ctx.ask(_questions(asked, where))
        wire = {key: wire_answer(value) for key, value in answers.items() if value is not None}
        proxy = self._proxy
        if holder != proxy.relay.origin:
            step = await proxy.relay.forward(holder, call_id, round_, wire,
                                             ctx.client_capabilities, sink, where)
            return replace(step, holder=holder, call=call_id)
        call = proxy.held.take(call_id)
        if call is None:
            raise HeldCallGoneError(
                f"{where}: the upstream call this retry continues is no longer held (it "
                f"waited past its hold time, {proxy.proxy_options.hold_s} s, and was "
                "cancelled, or this proxy restarted); call again without the requestState")
        try:
            call.answer(round_, wire)
        except InvalidParamsError:
            proxy.held.hold(call)
            raise
        return await self._held_step(call, ctx, sink)

    async def _upstream_round(self, ctx: Context, method: str, fields: dict[str, Any],
                              result: dict[str, Any], where: str, sink: CallSink) -> Step:
        """A 2026-07-28 upstream's `input_required`: its questions asked of the caller under
        the upstream's own keys, or, with a `requestState` alone, the call sent again at once."""
        requests, upstream_state = result.get("inputRequests"), result.get("requestState")
        if upstream_state is not None and (type(upstream_state) is not str
                                           or len(upstream_state) > MAX_UPSTREAM_STATE):
            raise InternalError(f"{where}: the upstream server's requestState is not a string "
                                f"of at most {MAX_UPSTREAM_STATE} characters")
        if not requests:
            if upstream_state is None:
                raise InternalError(f"{where}: the upstream server answered input_required "
                                    "with neither inputRequests nor requestState")
            return await self._start(ctx, method, {**fields, "requestState": upstream_state},
                                     where, sink)
        if type(requests) is not dict or len(requests) > MAX_INPUT_REQUESTS:
            raise InternalError(f"{where}: the upstream server's inputRequests must be an "
                                f"object of at most {MAX_INPUT_REQUESTS} input requests")
        asked: dict[str, Any] = {}
        for key, request in requests.items():
            place = f"{where}: the upstream's input request {key!r}"
            try:
                if type(request) is not dict:
                    raise ProtocolViolation(f"{place} must be an object")
                asked[key] = question(request.get("method"), request.get("params"),
                                      place).request(place)
            except ProtocolViolation as exc:
                raise InternalError(f"{where}: the upstream server asked what cannot be "
                                    f"passed on: {exc}") from None
        state = {"rounds": int(ctx.state.get("rounds", 0)) + 1, "asked": asked,
                 "u": upstream_state}
        self._keep(ctx, state)
        return await self._passed_round(ctx, method, fields, state, where, sink)

    async def _passed_round(self, ctx: Context, method: str, fields: dict[str, Any],
                            state: dict[str, Any], where: str, sink: CallSink) -> Step:
        """A 2026-07-28 upstream's round: the caller is asked its questions (the round ends
        here until the retry brings the answers), then the call goes upstream again with them
        and the upstream's `requestState`."""
        answers = await ctx.ask(_questions(state["asked"], where))
        sent = {**fields, "inputResponses": {key: wire_answer(value)
                                             for key, value in answers.items()}}
        if state.get("u") is not None:
            sent["requestState"] = state["u"]
        return await self._start(ctx, method, sent, where, sink)
