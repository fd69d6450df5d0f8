"""A retry that reached another replica, relayed to the replica holding its call.

Behind a load balancer with no affinity, the retry of a round may reach any proxy replica, but
the upstream call it continues runs in one process: the one that started it, which the sealed
`requestState` names (`origin`). The replica that got the retry sends the caller's answers
there through the server's shared broker (`mcpkit.server.broker.SharedBroker`, on its topic
of control messages, where the Tasks extension's cancels travel too), and answers the caller
with what comes back, exactly as if it held the call itself:

    retry at B ──answer──▶ A (holds the call)     A ──ack──▶ B at once
                                                  A ──note──▶ B for each progress or log message
                                                  A ──alive──▶ B while the call runs
                                                  A ──done──▶ B: the result, an error, or the
                                                                 next questions (still held by A)

A replica that hears nothing for `ProxyOptions.relay_wait_s` (no acknowledgement, or no word
since the last) takes the holder for gone and answers `HeldCallGoneError`, as the holder does
for a call it no longer holds; a caller that leaves sends `cancel`. Every message names the
replica it is for (`to`), so replicas ignore each other's. A process whose broker is its own
(`LocalBroker`) holds every call it can be retried for, and relays nothing.

Messages are JSON between replicas sharing one store; they are still read as untrusted, so a
malformed one is dropped with a log line, never an exception in the listener.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import secrets
from collections.abc import Awaitable, Callable, Mapping
from typing import Any, Final

from mcpkit.errors import HeldCallGoneError, RPCError, StoreUnavailableError
from mcpkit.proxy.held import HeldCall, HeldCalls, Outcome, Sink
from mcpkit.proxy.rounds import Step

__all__ = [
    "CONTROL_PREFIX",
    "Relay",
]

log = logging.getLogger("mcpkit.proxy")

CONTROL_PREFIX: Final = "mcpkit-proxy/"
"""How the proxy's control messages are named on the broker (`call/ID`, `reply/ID`); the
Tasks extension's are task ids, which never start so."""
_RETRY_S: Final = (0.1, 2.0)

Advance = Callable[[HeldCall, Mapping[str, Any], Sink], Awaitable[Step]]


class _Relayed:
    """A held call's progress and log messages, sent to the replica the retry reached."""

    def __init__(self, relay: Relay, to: str, reply: str) -> None:
        self._relay, self._to, self._reply = relay, to, reply

    async def progress(self, progress: Any, total: Any, message: Any) -> None:
        await self._relay.send_reply(self._to, self._reply,
                                     {"op": "note", "kind": "progress",
                                      "args": [progress, total, message]})

    async def log(self, level: Any, data: Any, logger: Any) -> None:
        await self._relay.send_reply(self._to, self._reply,
                                     {"op": "note", "kind": "log", "args": [level, data, logger]})


class Relay:
    """Retries between the replicas of one proxy; see the module docstring."""

    def __init__(self, server: Any, calls: HeldCalls, advance: Advance, wait_s: float) -> None:
        self._server = server
        self._calls = calls
        self._advance = advance
        self._wait_s = wait_s
        self._own = secrets.token_hex(8)
        self._waiting: dict[str, asyncio.Queue[dict[str, Any]]] = {}
        self._task: asyncio.Task[None] | None = None
        self._serving: set[asyncio.Task[None]] = set()

    @property
    def _broker(self) -> Any | None:
        broker = self._server.broker
        if callable(getattr(broker, "publish_control", None)) and callable(
                getattr(broker, "controls", None)):
            return broker
        return None

    @property
    def origin(self) -> str:
        """This process's name in a sealed state: the broker's, so replicas can address it."""
        broker = self._broker
        return str(broker.origin) if broker is not None else self._own

    def start(self) -> None:
        """Listen for retries relayed to the calls this process holds (with a shared broker)."""
        if self._broker is not None and self._task is None:
            self._task = asyncio.get_running_loop().create_task(self._follow())

    async def close(self) -> None:
        for task in [self._task, *self._serving]:
            if task is not None:
                task.cancel()
        for task in [self._task, *self._serving]:
            if task is not None:
                with contextlib.suppress(BaseException):
                    await task
        self._task = None

    # -- listening ------------------------------------------------------------------------

    async def _follow(self) -> None:
        broker = self._broker
        assert broker is not None
        delay, longest = _RETRY_S
        while True:
            try:
                async with broker.controls() as controls:
                    delay = _RETRY_S[0]
                    async for topic, message in controls:
                        self._arrived(topic, message)
                return  # the broker closed: the server is stopping
            except StoreUnavailableError:
                pass
            except Exception:
                log.exception("listening for relayed retries failed; listening again")
            await asyncio.sleep(delay)
            delay = min(delay * 2, longest)

    def _arrived(self, topic: str, message: dict[str, Any]) -> None:
        if not topic.startswith(CONTROL_PREFIX) or message.get("to") != self.origin:
            return
        kind, _, name = topic[len(CONTROL_PREFIX):].partition("/")
        if kind == "reply":
            queue = self._waiting.get(name)
            if queue is not None:
                queue.put_nowait(message)
        elif kind == "call":
            task = asyncio.get_running_loop().create_task(self._serve(name, message))
            self._serving.add(task)
            task.add_done_callback(self._serving.discard)

    # -- the holder's side ------------------------------------------------------------------

    async def _serve(self, call_id: str, message: dict[str, Any]) -> None:
        back, reply, op = message.get("from"), message.get("reply"), message.get("op")
        if type(back) is not str or type(reply) is not str:
            log.warning("dropped a relayed retry that names no replica to answer")
            return
        call = self._calls.take(call_id)
        if op == "cancel":
            if call is not None:
                self._calls.drop(call)
                call.cancel()
            return
        try:
            if call is None:
                await self.send_reply(back, reply, {"op": "gone"})
                return
            await self.send_reply(back, reply, {"op": "ack"})
            step = await self._relayed_round(call, message, _Relayed(self, back, reply), back,
                                             reply)
            await self.send_reply(back, reply, {"op": "done", **step.to_wire()})
        except StoreUnavailableError as exc:
            log.warning("%s: the answer to a relayed retry could not be sent (%s)",
                        call.where if call is not None else call_id, exc)

    async def _relayed_round(self, call: HeldCall, message: dict[str, Any], sink: Sink,
                             back: str, reply: str) -> Step:
        round_, answers, capabilities = (message.get("round"), message.get("answers"),
                                         message.get("capabilities"))
        alive = asyncio.get_running_loop().create_task(self._keep_alive(back, reply))
        try:
            if type(round_) is not int or type(answers) is not dict or type(
                    capabilities) is not dict:
                raise RPCError.from_wire({"code": -32603, "message": (
                    f"{call.where}: a relayed retry came without its round, answers or "
                    "capabilities")})
            call.answer(round_, answers)
            step = await self._advance(call, capabilities, sink)
        except RPCError as exc:
            self._calls.hold(call)  # the call waits on, for a retry that answers it
            return Step(Outcome(error=exc))
        finally:
            alive.cancel()
        if step.questions is not None:
            self._calls.hold(call)
        else:
            self._calls.drop(call)
        return step

    async def _keep_alive(self, back: str, reply: str) -> None:
        while True:
            await asyncio.sleep(self._wait_s / 3)
            with contextlib.suppress(StoreUnavailableError):
                await self.send_reply(back, reply, {"op": "alive"})

    async def send_reply(self, to: str, reply: str, body: dict[str, Any]) -> None:
        broker = self._broker
        assert broker is not None
        await broker.publish_control(f"{CONTROL_PREFIX}reply/{reply}", {"to": to, **body})

    # -- the side the retry reached ---------------------------------------------------------

    async def forward(self, holder: str, call_id: str, round_: int, answers: dict[str, Any],
                      capabilities: Mapping[str, Any], sink: Sink, where: str) -> Step:
        """Relay a retry's answers to the replica holding the call; its next step."""
        broker = self._broker
        if broker is None:
            raise HeldCallGoneError(
                f"{where}: the upstream call this retry continues is held by another proxy "
                "process, and this one shares no broker with it: give every replica the same "
                "PostgreSQL or Redis store URL (--store), or call again without the "
                "requestState")
        await broker.ready()
        reply = secrets.token_hex(12)
        queue: asyncio.Queue[dict[str, Any]] = asyncio.Queue()
        self._waiting[reply] = queue
        try:
            await broker.publish_control(f"{CONTROL_PREFIX}call/{call_id}", {
                "op": "answer", "to": holder, "from": self.origin, "reply": reply,
                "round": round_, "answers": answers, "capabilities": dict(capabilities)})
            while True:
                try:
                    async with asyncio.timeout(self._wait_s):
                        message = await queue.get()
                except TimeoutError:
                    raise HeldCallGoneError(
                        f"{where}: the proxy replica holding the upstream call this retry "
                        f"continues did not answer within {self._wait_s} s (it stopped, or "
                        "cannot be reached); call again without the requestState") from None
                op = message.get("op")
                if op == "note":
                    await _note(sink, message.get("kind"), message.get("args"))
                elif op == "gone":
                    raise HeldCallGoneError(
                        f"{where}: the upstream call this retry continues is no longer held "
                        "(it waited past its hold time and was cancelled); call again without "
                        "the requestState")
                elif op == "done":
                    return Step.from_wire(message, where)
        except asyncio.CancelledError:
            with contextlib.suppress(Exception):
                await broker.publish_control(f"{CONTROL_PREFIX}call/{call_id}", {
                    "op": "cancel", "to": holder, "from": self.origin, "reply": reply})
            raise
        finally:
            self._waiting.pop(reply, None)


async def _note(sink: Sink, kind: Any, args: Any) -> None:
    if type(args) is not list or len(args) != 3:
        return
    try:
        if kind == "progress":
            await sink.progress(*args)
        elif kind == "log":
            await sink.log(*args)
    except Exception:
        log.debug("a relayed %s message was not passed on", kind, exc_info=True)
