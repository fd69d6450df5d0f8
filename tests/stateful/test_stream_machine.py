"""A real stdio connection (`serve_stdio` over OS pipes, in this process) walked by a state
machine against a model of what its client may expect.

The bytes go through everything `mcpkit run` serves stdio with: the line reader, the
`StreamConnection`, a task per request, the broker's change fan-out. The model, from the spec
(MSG-3, CANC-4, SUB-3/4, STDIO-7/8, VER-6/7, LEG-1) and docs/architecture.md:

- each request gets exactly one response, with its id, unless the client cancelled it: then
  nothing more is sent for it, not even from a handler that takes its time to unwind after
  the cancellation (its id may be in use again by then);
- a request naming an id in flight is answered -32600 at once, and the request holding the id
  goes on;
- the first request decides the era: one declaring 2026-07-28 pins it, `initialize` on a fresh
  connection pins 2025-11-25; an `initialize` after either is refused with -32600;
- a `subscriptions/listen` is acknowledged first, carrying its id, then hears each change of the
  tool list; a legacy connection hears it as a plain `notifications/tools/list_changed`;
- at the end of input, the listen streams end, the requests in flight still get their responses
  once their handlers finish, and serving returns.

Every message the server writes is read back from the pipe, one JSON object per line, and
checked against the official schema of the connection's revision.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
from typing import Any

import orjson
from helpers.wire import LEGACY, MODERN, check_client_message, check_server_message, meta
from hypothesis import strategies as st
from hypothesis.stateful import (
    RuleBasedStateMachine,
    invariant,
    precondition,
    rule,
    run_state_machine_as_test,
)
from stateful_runs import Tally, machine_settings

from mcpkit import Server
from mcpkit.transports.stdio.server import serve_stdio

BOUND = 10.0
"""The longest any one expected message may take to arrive."""
IDS = st.sampled_from([1, 2, 3, "1", "x", 0])
SUB_ID = "io.modelcontextprotocol/subscriptionId"
TALLY = Tally("stdio StreamConnection over pipes")


class Gates:
    """What the tools wait on: one event per request serial, set by the machine."""

    def __init__(self) -> None:
        self.events: dict[str, asyncio.Event] = {}
        self.unwound: set[str] = set()

    def __getitem__(self, name: str) -> asyncio.Event:
        return self.events.setdefault(name, asyncio.Event())


def gated_server(gates: Gates) -> Server:
    server = Server("machine")

    @server.tool()
    async def hold(serial: str, slow_unwind: bool = False) -> str:
        """Answers `serial` once its gate opens; cancelled, it may take its time to unwind."""
        try:
            await gates[serial].wait()
        except asyncio.CancelledError:
            if slow_unwind:
                await gates["unwind-" + serial].wait()
            gates.unwound.add(serial)
            raise
        return serial

    @server.tool()
    def echo(serial: str) -> str:
        """Answers at once, from a worker thread."""
        return serial

    return server


class Pipes:
    """The client's ends of the two pipes `serve_stdio` reads and writes."""

    def __init__(self, loop: asyncio.AbstractEventLoop) -> None:
        self.loop = loop
        self.stdin_r, self.stdin_w = os.pipe()
        self.stdout_r, self.stdout_w = os.pipe()
        self.lines: asyncio.Queue[bytes | None] = asyncio.Queue()
        self._buffer = b""
        self._reader: asyncio.ReadTransport | None = None

    async def start_reading(self) -> None:
        pipes = self

        class Reader(asyncio.Protocol):
            def data_received(self, data: bytes) -> None:
                pipes._buffer += data
                *lines, pipes._buffer = pipes._buffer.split(b"\n")
                for line in lines:
                    pipes.lines.put_nowait(line)

            def eof_received(self) -> bool:
                pipes.lines.put_nowait(None)
                return False

        self._reader, _ = await self.loop.connect_read_pipe(
            Reader, os.fdopen(self.stdout_r, "rb", buffering=0))

    def write(self, message: dict[str, Any]) -> None:
        data = orjson.dumps(message) + b"\n"
        view = memoryview(data)
        while view:
            view = view[os.write(self.stdin_w, view):]

    def end_input(self) -> None:
        if self.stdin_w >= 0:
            os.close(self.stdin_w)
            self.stdin_w = -1

    def close(self) -> None:
        self.end_input()
        for fd in (self.stdin_r, self.stdout_w):
            with contextlib.suppress(OSError):
                os.close(fd)
        if self._reader is not None:
            self._reader.close()


class StreamMachine(RuleBasedStateMachine):
    def __init__(self, loop: asyncio.AbstractEventLoop) -> None:
        super().__init__()
        TALLY.example()
        self.loop = loop
        self.gates = Gates()
        self.server = gated_server(self.gates)
        self.pipes = Pipes(loop)
        self.serving = loop.create_task(serve_stdio(
            self.server, stdin_fd=self.pipes.stdin_r, stdout_fd=self.pipes.stdout_w))
        loop.run_until_complete(self.pipes.start_reading())
        # the model
        self.era: str | None = None
        self.running: dict[Any, str] = {}
        """Id -> the serial of the request holding it (`hold` or a listen)."""
        self.listens: set[Any] = set()
        self.cancelled: set[str] = set()
        self.slow: dict[str, bool] = {}
        self.expected_unwinds: set[str] = set()
        self.serial = 0
        self.ended = False
        # what the server sent, filed
        self.methods: dict[Any, str] = {}
        self.responses: list[dict[str, Any]] = []
        self.notes: list[dict[str, Any]] = []
        self.unread: list[dict[str, Any]] = []

    # -- plumbing ----------------------------------------------------------------------------

    def run(self, coro: Any) -> Any:
        return self.loop.run_until_complete(coro)

    def revision(self) -> str:
        return LEGACY if self.era == "legacy" else MODERN

    def send(self, message: dict[str, Any]) -> None:
        check_client_message(self.revision() if message.get("method") != "initialize"
                             else LEGACY, message)
        if "id" in message and "method" in message and message["id"] not in self.running:
            # Which method a response answers: a request refused for its id in use leaves
            # the id to the request holding it.
            self.methods[message["id"]] = message["method"]
        self.pipes.write(message)

    async def _next(self) -> dict[str, Any] | None:
        line = await asyncio.wait_for(self.pipes.lines.get(), BOUND)
        if line is None:
            return None
        message: dict[str, Any] = orjson.loads(line)
        answers = self.methods.get(message.get("id")) if "method" not in message else None
        check_server_message(LEGACY if answers == "initialize" else self.revision(),
                             message, answers)
        if "method" in message:
            self.notes.append(message)
        else:
            self.responses.append(message)
        return message

    def expect(self, match: Any) -> dict[str, Any]:
        """Read until a message `match` accepts arrives; the others are kept for later."""
        for i, message in enumerate(self.unread):
            if match(message):
                return self.unread.pop(i)

        async def wait() -> dict[str, Any]:
            while True:
                message = await self._next()
                assert message is not None, "the server's output ended before the message came"
                if match(message):
                    return message
                self.unread.append(message)

        return self.run(wait())  # type: ignore[no-any-return]

    def response_to(self, request_id: Any) -> dict[str, Any]:
        return self.expect(lambda m: "method" not in m and m.get("id") == request_id
                           and type(m.get("id")) is type(request_id))

    def next_serial(self) -> str:
        self.serial += 1
        return f"r{self.serial}"

    def request(self, request_id: Any, method: str, params: dict[str, Any]) -> dict[str, Any]:
        if self.era != "legacy":
            params = {**params, "_meta": meta()}
        return {"jsonrpc": "2.0", "id": request_id, "method": method, "params": params}

    def refused_as_in_use(self, request_id: Any) -> None:
        reply = self.response_to(request_id)
        assert reply["error"]["code"] == -32600, reply
        assert "already in use" in reply["error"]["message"], reply

    # -- rules -------------------------------------------------------------------------------

    @precondition(lambda self: not self.ended)
    @rule(request_id=IDS, slow_unwind=st.booleans())
    def call_held(self, request_id: Any, slow_unwind: bool) -> None:
        TALLY.step()
        serial = self.next_serial()
        self.send(self.request(request_id, "tools/call", {
            "name": "hold", "arguments": {"serial": serial, "slow_unwind": slow_unwind}}))
        if request_id in self.running:
            self.refused_as_in_use(request_id)
            return
        self.running[request_id] = serial
        self.slow[serial] = slow_unwind
        if self.era is None:
            self.era = "modern"

    @precondition(lambda self: not self.ended and any(
        s not in self.listens for s in self.running))
    @rule(data=st.data())
    def release(self, data: st.DataObject) -> None:
        TALLY.step()
        held = sorted((i for i in self.running if i not in self.listens), key=repr)
        request_id = data.draw(st.sampled_from(held), label="request")
        serial = self.running.pop(request_id)
        self.gates[serial].set()
        reply = self.response_to(request_id)
        assert reply["result"]["content"][0]["text"] == serial, reply

    @precondition(lambda self: not self.ended)
    @rule(request_id=IDS)
    def echo(self, request_id: Any) -> None:
        TALLY.step()
        serial = self.next_serial()
        self.send(self.request(request_id, "tools/call", {
            "name": "echo", "arguments": {"serial": serial}}))
        if request_id in self.running:
            self.refused_as_in_use(request_id)
            return
        if self.era is None:
            self.era = "modern"
        reply = self.response_to(request_id)
        assert reply["result"]["content"][0]["text"] == serial, reply

    @precondition(lambda self: not self.ended)
    @rule(request_id=IDS)
    def cancel(self, request_id: Any) -> None:
        TALLY.step()
        self.send({"jsonrpc": "2.0", "method": "notifications/cancelled",
                   "params": {"requestId": request_id}})
        serial = self.running.pop(request_id, None)
        if serial is None:
            return
        self.listens.discard(request_id)
        self.cancelled.add(serial)
        if self.slow.get(serial):
            self.expected_unwinds.add(serial)

    @precondition(lambda self: not self.ended and bool(self.expected_unwinds))
    @rule(data=st.data())
    def finish_unwinding(self, data: st.DataObject) -> None:
        """A cancelled handler that was taking its time to unwind finishes doing so."""
        TALLY.step()
        serial = data.draw(st.sampled_from(sorted(self.expected_unwinds)), label="serial")
        self.expected_unwinds.discard(serial)
        self.gates["unwind-" + serial].set()

    @precondition(lambda self: not self.ended and self.era != "legacy")
    @rule(request_id=IDS)
    def listen(self, request_id: Any) -> None:
        TALLY.step()
        self.send(self.request(request_id, "subscriptions/listen",
                               {"notifications": {"toolsListChanged": True}}))
        if request_id in self.running:
            self.refused_as_in_use(request_id)
            return
        self.era = "modern"
        ack = self.expect(lambda m: m.get("method") == "notifications/subscriptions/acknowledged"
                          and m["params"]["_meta"][SUB_ID] == request_id)
        assert ack["params"]["notifications"] == {"toolsListChanged": True}, ack
        self.running[request_id] = self.next_serial()
        self.listens.add(request_id)

    @precondition(lambda self: not self.ended and (self.listens or self.era == "legacy"))
    @rule()
    def tools_change(self) -> None:
        TALLY.step()
        self.server.notify_tools_changed()
        if self.era == "legacy":
            note = self.expect(lambda m: m.get("method") == "notifications/tools/list_changed")
            assert SUB_ID not in (note.get("params") or {}).get("_meta", {}), note
            return
        for request_id in sorted(self.listens, key=repr):
            self.expect(lambda m, i=request_id: m.get("method") == "notifications/tools/list_changed"
                        and m["params"]["_meta"][SUB_ID] == i
                        and type(m["params"]["_meta"][SUB_ID]) is type(i))

    @precondition(lambda self: not self.ended)
    @rule(request_id=IDS)
    def initialize(self, request_id: Any) -> None:
        TALLY.step()
        self.send({"jsonrpc": "2.0", "id": request_id, "method": "initialize", "params": {
            "protocolVersion": LEGACY, "capabilities": {},
            "clientInfo": {"name": "machine", "version": "1"}}})
        reply = self.response_to(request_id)
        if request_id in self.running or self.era is not None:
            assert reply["error"]["code"] == -32600, reply
            if self.era == "modern" and request_id not in self.running:
                assert set(reply["error"]["data"]["supported"]) == {MODERN, LEGACY}, reply
            return
        assert reply["result"]["protocolVersion"] == LEGACY, reply
        self.era = "legacy"
        self.send({"jsonrpc": "2.0", "method": "notifications/initialized"})

    @precondition(lambda self: not self.ended)
    @rule(now=st.integers(0, 3))
    def end_of_input(self, now: int) -> None:
        """The client closes its end (drawn rarely: nothing but this rule runs after it)."""
        TALLY.step()
        if now == 0:
            self.finish()

    @precondition(lambda self: self.ended)
    @rule()
    def after_the_end(self) -> None:
        assert self.pipes.lines.empty() and self.serving.done()

    # -- the end, and what must hold ---------------------------------------------------------

    def finish(self) -> None:
        """Close the input; release every handler; serving must return and every request in
        flight but the listens must have had its one response."""
        self.ended = True
        self.pipes.end_input()
        for serial in self.running.values():
            self.gates[serial].set()
        for serial in self.expected_unwinds:
            self.gates["unwind-" + serial].set()
        held = {i: s for i, s in self.running.items() if i not in self.listens}
        for request_id, serial in held.items():
            reply = self.response_to(request_id)
            assert reply["result"]["content"][0]["text"] == serial, reply
        self.run(asyncio.wait_for(self.serving, BOUND))
        os.close(self.pipes.stdout_w)
        self.pipes.stdout_w = -1

        async def drain() -> None:
            while await self._next() is not None:
                pass

        self.run(drain())
        self.running.clear()
        self.listens.clear()

    @invariant()
    def nothing_is_sent_for_a_cancelled_request(self) -> None:
        for message in self.responses:
            result = message.get("result") or {}
            texts = [c.get("text") for c in result.get("content", [])]
            assert not self.cancelled.intersection(texts), message

    @invariant()
    def every_response_answers_a_request(self) -> None:
        for message in self.responses:
            assert message.get("id") in self.methods, message

    def teardown(self) -> None:
        try:
            if not self.ended:
                self.finish()
            # Every response the server wrote was one the model expected: no leftovers.
            leftovers = [m for m in self.unread if "method" not in m]
            assert not leftovers, leftovers
            self.nothing_is_sent_for_a_cancelled_request()
        finally:
            if not self.serving.done():
                self.serving.cancel()
                with contextlib.suppress(BaseException):
                    self.run(self.serving)
            self.pipes.close()
            TALLY.report()


def test_a_stdio_connection_over_pipes_answers_as_the_model_says() -> None:
    loop = asyncio.new_event_loop()
    try:
        run_state_machine_as_test(lambda: StreamMachine(loop), settings=machine_settings(25))
    finally:
        loop.close()
