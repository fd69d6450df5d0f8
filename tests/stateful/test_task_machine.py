"""The task state machine against a small model, on every engine (memory, SQLite, PostgreSQL,
Redis): a Hypothesis `RuleBasedStateMachine` drives two replicas sharing one task store.

The replicas are real servers (`mcpkit.Server` with the Tasks runtime) in this process, spoken
to through `ServerWire` with every message checked against the official schema. Their clock is
the machine's: it moves only when a rule says so, and their heartbeats run only when a rule
runs one (`upkeep_once`), so every step is decided by the rules. Each task's handler is driven
by the machine: a command at a time (report progress, ask a key, finish, fail), so the model
knows what the handler does.

Rules: create a task (resumable or not) on either replica; progress; ask a key; answer it
through either replica (an answer through the replica not running the task is stored and taken
up at the runner's heartbeat); cancel through either; finish; fail; a heartbeat of either;
lease loss (one replica stops renewing, the clock passes the lease, the other's heartbeat
recovers its tasks: a resumable one runs again with every answer so far, another fails; then
the first's heartbeat finds its leases gone and stops its handlers); expiry (the clock passes
the TTL: every task is unknown, and the runners' heartbeats stop their handlers).

After every step, for every task: the stored status, outstanding keys and answers are the
model's; `tasks/get` through both replicas says the same, with a key answered through the
replica not running the task no longer outstanding from the acknowledgement on, before the
runner took the answer up (an expired task is -32602 on both);
a terminal status never changes; no key is issued again once answered (every write of the store
is tapped).
"""

from __future__ import annotations

import asyncio
import itertools
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
from helpers.store_urls import KINDS, Clock, make_url
from helpers.task_fleet import Tapped
from helpers.wire import MODERN, check_server_message
from hypothesis import strategies as st
from hypothesis.stateful import (
    Bundle,
    RuleBasedStateMachine,
    invariant,
    precondition,
    rule,
    run_state_machine_as_test,
)
from stateful_runs import Tally, machine_settings

from mcpkit import Context, Server
from mcpkit.errors import InternalError
from mcpkit.ext.tasks import TaskOptions, runtime_of
from mcpkit.ext.tasks.stores import store_for
from mcpkit.ext.tasks.upkeep import upkeep_once
from mcpkit.ext.tasks.wire import TERMINAL, check_get_task_result
from mcpkit.server.options import ServerOptions
from mcpkit.testing import ServerWire

LEASE_S, TTL_S = 30.0, 600.0
KEYS = ("k1", "k2")
CAPS = {"io.modelcontextprotocol/clientCapabilities": {
    "elicitation": {"form": {}}, "extensions": {"io.modelcontextprotocol/tasks": {}}}}
WAIT_S = 10.0
TALLY = {kind: Tally(f"tasks ({kind} store)") for kind in KINDS}


@dataclass
class Model:
    """What one task must be, by the rules so far."""

    task_id: str
    tag: str
    resumable: bool
    runner: str
    status: str = "working"
    outstanding: set[str] = field(default_factory=set)
    asked: set[str] = field(default_factory=set)
    answered: dict[str, str] = field(default_factory=dict)
    delivered: set[str] = field(default_factory=set)
    """Answered keys the running handler has been given."""
    cancel_pending: bool = False
    answered_at: dict[str, int] = field(default_factory=dict)
    """Key -> how many store writes there were when its answer was acknowledged."""
    expired: bool = False


class TaskMachine(RuleBasedStateMachine):
    """See the module docstring. `setting` is the engine's store (instance, path or URL)."""

    tasks = Bundle("tasks")

    def __init__(self, make_setting: Callable[[Clock], Any], epoch: float, tally: Tally) -> None:
        super().__init__()
        self.tally = tally
        tally.example()
        self.loop = asyncio.new_event_loop()
        self.clock = Clock(epoch)
        self.writes: list[tuple[str, frozenset[str]]] = []
        self.reads: list[str] = []
        """The tasks the replicas read from the store (the machine reads past the tap)."""
        self.inboxes: dict[str, asyncio.Queue[str]] = {}
        """Each task's current run: the queue of commands its handler reads."""
        self.acks: dict[str, asyncio.Queue[str]] = {}
        self.models: dict[str, Model] = {}
        self.tags = itertools.count()
        setting = make_setting(self.clock)
        self.replicas: dict[str, Any] = {}
        self.wires: dict[str, ServerWire] = {}
        self.methods: dict[Any, str] = {}
        self.run(self._start(setting))

    # -- the replicas ----------------------------------------------------------------------

    def _server(self, setting: Any) -> Server:
        store = Tapped(store_for(setting, self.clock), self.writes, self.reads)
        server = Server("machine", options=ServerOptions(
            clock=self.clock, extensions={"tasks": TaskOptions(
                store=store, sync_budget_s=0.01, heartbeat_s=LEASE_S / 3, lease_s=LEASE_S,
                ttl_ms=int(TTL_S * 1000), max_attempts=100, input_wait_s=None)}))

        async def scripted(tag: str, ctx: Context) -> str:
            inbox: asyncio.Queue[str] = asyncio.Queue()
            self.inboxes[tag] = inbox  # this run is the task's current one
            self.acks[tag].put_nowait("started")
            steps = 0
            while True:
                command = await inbox.get()
                if command == "progress":
                    steps += 1
                    await ctx.report_progress(steps, None, f"step {steps}")
                elif command.startswith("ask "):
                    key = command[4:]
                    await ctx.elicit(key, f"Value of {key}?", {"v": str})
                elif command == "finish":
                    self.acks[tag].put_nowait(command)
                    return f"{tag} finished"
                elif command == "fail":
                    self.acks[tag].put_nowait(command)
                    raise InternalError(f"{tag} failed on purpose")
                self.acks[tag].put_nowait(command)

        server.add_tool(scripted, "plain_job", task="required")
        server.add_tool(scripted, "resumable_job", task="required", resumable=True)
        return server

    async def _start(self, setting: Any) -> None:
        for name in "AB":
            server = self._server(setting)
            runtime = runtime_of(server)
            # Heartbeats only when a rule runs one: the background upkeep never starts.
            runtime.upkeep = asyncio.get_running_loop().create_future()  # type: ignore[union-attr]
            self.replicas[name] = server
            self.wires[name] = ServerWire(server, tap=self._check)

    def _check(self, direction: str, message: dict[str, Any]) -> None:
        if direction == "send":
            self.methods[message.get("id")] = message.get("method", "")
            return
        check_server_message(MODERN, message, self.methods.get(message.get("id")))

    def run(self, work: Any) -> Any:
        return self.loop.run_until_complete(work)

    def runtime(self, name: str) -> Any:
        return runtime_of(self.replicas[name])

    async def request(self, name: str, method: str, params: dict[str, Any]) -> dict[str, Any]:
        reply: dict[str, Any] = await self.wires[name].request(
            method, {**params, "_meta": CAPS})
        return reply

    async def until(self, test: Callable[[], Any], what: str) -> None:
        async with asyncio.timeout(WAIT_S):
            while not await test():
                await asyncio.sleep(0.002)

    async def stored(self, model: Model) -> Any:
        return await self.runtime("A").store.inner.get(model.task_id)

    async def ack(self, tag: str, command: str) -> None:
        async with asyncio.timeout(WAIT_S):
            got = await self.acks[tag].get()
        assert got == command, (got, command)

    async def settled(self, model: Model, status: str) -> None:
        async def reached() -> bool:
            found = await self.stored(model)
            return found is not None and found.status == status
        await self.until(reached, f"{model.tag} {status}")

    async def jobs_left(self, name: str, task_id: str) -> None:
        async def gone() -> bool:
            return task_id not in self.runtime(name).jobs
        await self.until(gone, f"{task_id} no longer runs on {name}")

    def teardown(self) -> None:
        async def close() -> None:
            for name, server in self.replicas.items():
                runtime = runtime_of(server)
                for job in list(runtime.jobs.values()):
                    for running in (job.task, job.supervisor):
                        if running is not None:
                            running.cancel()
                self.wires[name].close()
                await asyncio.sleep(0)
                await runtime.store.close()
        try:
            self.run(close())
        finally:
            self.loop.close()

    def live(self, model: Model) -> bool:
        return not model.expired and model.status not in TERMINAL

    # -- rules --------------------------------------------------------------------------------

    @precondition(lambda self: sum(self.live(m) for m in self.models.values()) < 4)
    @rule(target=tasks, on=st.sampled_from("AB"), resumable=st.booleans())
    def create(self, on: str, resumable: bool) -> str:
        tag = f"t{next(self.tags)}"
        self.acks[tag] = asyncio.Queue()

        async def go() -> str:
            reply = await self.request(on, "tools/call", {
                "name": "resumable_job" if resumable else "plain_job",
                "arguments": {"tag": tag}})
            result = reply["result"]
            assert result["resultType"] == "task", result
            return str(result["taskId"])
        task_id = self.run(go())
        self.run(self.ack(tag, "started"))
        self.models[task_id] = Model(task_id, tag, resumable, on)
        return task_id

    def _working(self, task_id: str) -> Model | None:
        model = self.models[task_id]
        return model if self.live(model) and model.status == "working" and \
            not model.cancel_pending else None

    @rule(task_id=tasks)
    def progress(self, task_id: str) -> None:
        model = self._working(task_id)
        if model is None:
            return
        self.inboxes[model.tag].put_nowait("progress")
        self.run(self.ack(model.tag, "progress"))

    @rule(task_id=tasks, data=st.data())
    def ask(self, task_id: str, data: st.DataObject) -> None:
        model = self._working(task_id)
        if model is None:
            return
        # Keys answered already are asked again as often as new ones: that is where a
        # resumed run could ask twice.
        key = data.draw(st.sampled_from(sorted(model.answered) or KEYS) | st.sampled_from(KEYS))
        self._ask(model, key)

    def _ask(self, model: Model, key: str) -> None:
        reads = self.reads.count(model.task_id)
        self.inboxes[model.tag].put_nowait(f"ask {key}")
        if key in model.answered and key not in model.delivered:
            self.tally.saw("a run again asked a key answered before it")
        if key in model.answered:  # known: the ask returns at once, nothing is issued
            self.run(self.ack(model.tag, f"ask {key}"))
            model.delivered.add(key)
            return
        model.status, model.outstanding = "input_required", {key}
        model.asked.add(key)

        async def parked() -> bool:
            # Parked, and done looking for answers given before it asked (its one read).
            found = await self.stored(model)
            return found is not None and found.status == "input_required" and \
                self.reads.count(model.task_id) > reads
        self.run(self.until(parked, f"{model.tag} parked on {key}"))

    @rule(task_id=tasks, on=st.sampled_from("AB"), key=st.sampled_from(KEYS))
    def exchange(self, task_id: str, on: str, key: str) -> None:
        """A question asked and answered at once (through either replica)."""
        model = self._working(task_id)
        if model is None or key in model.answered:
            return
        self._ask(model, key)
        self._answer(model, on, key, "z")

    @rule(task_id=tasks, on=st.sampled_from("AB"), value=st.sampled_from(["x", "y"]),
          data=st.data())
    def answer(self, task_id: str, on: str, value: str, data: st.DataObject) -> None:
        model = self.models[task_id]
        if model.expired:
            return
        # Mostly a key the task waits for; sometimes any (an answer it must ignore).
        key = data.draw(st.sampled_from(sorted(model.outstanding) or KEYS) | st.sampled_from(KEYS))
        self._answer(model, on, key, value)

    def _answer(self, model: Model, on: str, key: str, value: str) -> None:
        task_id = model.task_id
        reply = self.run(self.request(on, "tasks/update", {"taskId": task_id, "inputResponses": {
            key: {"action": "accept", "content": {"v": value}}}}))
        assert reply["result"]["resultType"] == "complete", reply
        pending = model.outstanding | (model.asked - model.answered.keys())
        if model.status in TERMINAL:
            return  # ignored: the task has ended
        if key in pending and key not in model.answered:  # the first answer is the one kept
            model.answered[key] = value
            model.answered_at[key] = len(self.writes)
        if on != model.runner or key not in model.asked | model.outstanding:
            return  # stored: the runner takes it up at its heartbeat; or never asked
        # The runner takes up what is stored now, as at a heartbeat: a stored cancel first,
        # else a stored answer to what it waits for (this one, or one another replica took).
        if model.cancel_pending:
            self._cancelled(model)
        elif model.outstanding & model.answered.keys():
            self._delivered(model, next(iter(model.outstanding & model.answered.keys())))

    def _cancelled(self, model: Model) -> None:
        model.status, model.cancel_pending = "cancelled", False
        model.outstanding.clear()
        self.run(self.settled(model, "cancelled"))

    def _delivered(self, model: Model, key: str) -> None:
        """The runner took the answer: its ask returns, the task works on."""
        model.outstanding.discard(key)
        model.delivered.add(key)
        model.status = "working"
        self.run(self.ack(model.tag, f"ask {key}"))

    @rule(task_id=tasks, on=st.sampled_from("AB"))
    def cancel(self, task_id: str, on: str) -> None:
        model = self.models[task_id]
        if model.expired:
            return
        reply = self.run(self.request(on, "tasks/cancel", {"taskId": task_id}))
        assert reply["result"]["resultType"] == "complete", reply
        if model.status in TERMINAL:
            return
        if on == model.runner:
            self._cancelled(model)
        else:
            model.cancel_pending = True  # stored: the runner acts at its heartbeat
            self.tally.saw("cancel through the other replica")

    @rule(task_id=tasks, ending=st.sampled_from(["finish", "fail"]))
    def end(self, task_id: str, ending: str) -> None:
        model = self._working(task_id)
        if model is None:
            return
        self.inboxes[model.tag].put_nowait(ending)
        self.run(self.ack(model.tag, ending))
        model.status = "completed" if ending == "finish" else "failed"
        self.run(self.settled(model, model.status))

    def any_live(self) -> bool:
        return any(self.live(m) for m in self.models.values())

    @precondition(any_live)
    @rule(name=st.sampled_from("AB"))
    def heartbeat(self, name: str) -> None:
        self.run(upkeep_once(self.runtime(name)))
        self._heartbeat_seen(name)

    def _heartbeat_seen(self, name: str) -> None:
        """What a heartbeat of `name` does to the tasks it runs: a stored cancel cancels,
        a stored answer to the outstanding key is taken."""
        for model in self.models.values():
            if not self.live(model) or model.runner != name:
                continue
            if model.cancel_pending:
                self._cancelled(model)
            elif model.outstanding & model.answered.keys():
                self._delivered(model, next(iter(model.outstanding & model.answered.keys())))

    @precondition(any_live)
    @rule(victim=st.sampled_from("AB"), data=st.data())
    def lease_loss(self, victim: str, data: st.DataObject) -> None:
        """`victim` stops renewing; the clock passes its leases; the other replica recovers
        its tasks; then the victim's own heartbeat finds them gone and stops its handlers.
        A resumed task may at once ask a key answered before (where a run again could ask
        twice)."""
        other = "B" if victim == "A" else "A"
        self.clock.advance(LEASE_S + 1)
        lost = [m for m in self.models.values() if self.live(m) and m.runner == victim]
        for model in lost:
            model.runner = "recovering"  # not the other's heartbeat's to change
        for model in lost:  # a rerun announces itself on its queue
            self.acks[model.tag] = asyncio.Queue()
        self.run(upkeep_once(self.runtime(other)))
        self._heartbeat_seen(other)  # its own tasks first; those it recovers after
        for model in lost:
            self.tally.saw(f"lease lost: {'resumed' if model.resumable else 'failed'}")
            model.runner = other
            model.outstanding.clear()
            if model.cancel_pending:
                model.status, model.cancel_pending = "cancelled", False
            elif model.resumable:
                model.status = "working"
                model.delivered = set()
                self.run(self.ack(model.tag, "started"))
            else:
                model.status = "failed"
        self.run(upkeep_once(self.runtime(victim)))
        for model in lost:
            self.run(self.jobs_left(victim, model.task_id))
        for model in lost:
            if model.status == "working" and model.answered and data.draw(st.booleans()):
                self._ask(model, data.draw(st.sampled_from(sorted(model.answered))))

    @precondition(lambda self: len(self.models) >= 3)
    @rule()
    def expire(self) -> None:
        self.tally.saw("expiry")
        self.clock.advance(TTL_S + 1)
        for model in self.models.values():
            model.expired = True
        for name in "AB":
            self.run(upkeep_once(self.runtime(name)))
        for name in "AB":
            for task_id in list(self.models):
                self.run(self.jobs_left(name, task_id))

    # -- what always holds -------------------------------------------------------------------

    @invariant()
    def agrees_with_the_model(self) -> None:
        self.tally.step()
        self.run(self._agrees())

    async def _agrees(self) -> None:
        for model in self.models.values():
            stored = await self.stored(model)
            if model.expired:
                assert stored is None, (model.tag, "expired but found")
                for name in "AB":
                    reply = await self.request(name, "tasks/get", {"taskId": model.task_id})
                    assert reply["error"]["code"] == -32602, reply
                continue
            assert stored is not None, (model.tag, "an acknowledged task was lost")
            assert stored.status == model.status, (model.tag, stored.status, model)
            if model.status == "input_required":
                assert set(stored.input_requests) == model.outstanding, (model.tag, stored)
            if model.status in TERMINAL:
                assert stored.lease_owner is None and stored.answers == {}
            else:
                assert stored.answers.keys() <= model.answered.keys(), (model.tag, stored)
                assert {k: v["content"]["v"] for k, v in stored.answers.items()} == \
                    {k: model.answered[k] for k in stored.answers}
            # A client sees a stored answer taken at once, before the runner took it up.
            pending = model.outstanding - model.answered.keys()
            seen = "working" if model.status == "input_required" and not pending else \
                model.status
            for name in "AB":
                reply = await self.request(name, "tasks/get", {"taskId": model.task_id})
                got = check_get_task_result(reply["result"])
                assert got["status"] == seen, (name, model.tag, got, model)
                if seen == "input_required":
                    assert set(got["inputRequests"]) == pending, (name, model.tag, got, model)
            for key, at in model.answered_at.items():
                # Still outstanding until the runner takes the answer; never again after.
                taken = False
                for task_id, keys in self.writes[at:]:
                    if task_id == model.task_id:
                        taken = taken or key not in keys
                        assert not (taken and key in keys), (model.tag, f"{key} issued again")


@pytest.mark.parametrize("kind", KINDS)
def test_the_task_state_machine_keeps_to_its_model(
        kind: str, request: pytest.FixtureRequest, tmp_path: Path) -> None:
    """One store for every machine of the run: each machine's clock starts long after the
    last one's tasks expired, so none of them is seen by the next (and the next purges them)."""
    shared = None if kind in ("memory", "sqlite") else make_url(kind, request, tmp_path)
    epochs = itertools.count(1_800_000_000, 10 * TTL_S)

    def setting(clock: Clock) -> Any:
        if kind == "memory":
            from mcpkit.ext.tasks.engines.memory import MemoryTaskStore

            return MemoryTaskStore(clock=clock)
        return str(tmp_path / "tasks.sqlite3") if kind == "sqlite" else shared

    try:
        run_state_machine_as_test(lambda: TaskMachine(setting, next(epochs), TALLY[kind]),
                                  settings=machine_settings(20))
    finally:
        TALLY[kind].report()
