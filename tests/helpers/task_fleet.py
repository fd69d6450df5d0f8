"""What the long-running task tests share: replicas of `task_worker.py` on one task store (real
`mcpkit run` processes, or servers in the test's own process for the memory engine), a client
that creates tasks, answers their question and follows them through any replica, and the
checks of what must hold afterwards.

- `ProcessReplica`: `mcpkit run task_worker.py --http 127.0.0.1:0` on an engine (PostgreSQL or
  Redis through `--store URL`; SQLite through the data folder the replicas share, where tasks
  live by default), spoken to over HTTP with every server message schema-checked (`Peer`);
  `kill()` is SIGKILL, `stop()` SIGTERM (a drain).
- `LocalReplica`: the same server in this process, on a store instance the replicas share (the
  memory engine has no other way to be shared); `kill()` drops it the way SIGKILL would: its
  upkeep and handlers cancelled, nothing more written. Its messages are schema-checked too.
- `Balanced`: replicas behind nginx, spoken to through it.
- `Fleet`: the client. It keeps, per task, every state it observed (each `tasks/get` sent after
  the one before was answered, so they are in order) and when each answer was acknowledged.
- The checks, against the observations and the effects file: each status path is valid and
  never leaves a terminal status; a key, once its answer was acknowledged and seen taken, is
  never asked again; the answer acknowledged is the one the task used; two runs of one task
  never overlap (a run's lines all come before the next run's first); a task that is not
  resumable runs once.
"""

from __future__ import annotations

import asyncio
import itertools
import os
import random
import signal
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx

from helpers.task_worker import make_worker, task_options
from helpers.transports.http_peer import Peer, ServerProcess
from helpers.wire import MODERN, check_server_message
from mcpkit.ext.tasks import runtime_of
from mcpkit.ext.tasks.records import TaskStore
from mcpkit.ext.tasks.stores import store_for
from mcpkit.ext.tasks.wire import TERMINAL, check_get_task_result
from mcpkit.server.options import ServerOptions
from mcpkit.testing import ServerWire

__all__ = ["WORKER", "Balanced", "Fleet", "LocalReplica", "ProcessReplica", "Tapped", "check_effects",
           "check_paths", "issued", "replicas_for"]

WORKER = str(Path(__file__).with_name("task_worker.py"))
TASKS = "io.modelcontextprotocol/tasks"
CAPS = {"elicitation": {"form": {}}, "extensions": {TASKS: {}}}


class ReplicaDown(Exception):
    """The replica cannot be reached (killed, stopping, not started yet)."""


async def posted(peer: Peer, where: str, method: str, params: dict[str, Any], name: str
                 ) -> dict[str, Any]:
    """One request through `peer`; ReplicaDown when nothing answered it (a connection lost,
    a 502 from a balancer whose replica died, a 503 from a stopping or storeless one)."""
    message = peer.request_message(method, params, **{
        "io.modelcontextprotocol/clientCapabilities": CAPS})
    sent, headers, _ = peer._prepare(message, {"Mcp-Name": name}, True, True)
    try:
        response = await peer.client.post(peer.url, content=sent, headers=headers)
    except httpx.HTTPError as exc:
        raise ReplicaDown(f"{where}: {exc!r}") from None
    if response.status_code in (502, 503, 504):  # nginx's 502 is no MCP message at all
        raise ReplicaDown(f"{where}: {response.status_code}")
    return peer._reply(response, response.content, method).message


class Balanced:
    """Replicas behind a load balancer, as one: every request goes to its URL."""

    name = "balancer"
    alive = True

    def __init__(self, url: str, http: httpx.AsyncClient) -> None:
        self.peer = Peer(url, http)

    async def request(self, method: str, params: dict[str, Any], name: str) -> dict[str, Any]:
        return await posted(self.peer, self.name, method, params, name)


class ProcessReplica:
    """One `mcpkit run task_worker.py --http` process; see the module docstring."""

    def __init__(self, name: str, env: dict[str, str], args: tuple[str, ...]) -> None:
        self.name = name
        self.env = env
        self.args = args
        self.process: ServerProcess | None = None
        self.http: httpx.AsyncClient | None = None
        self.peer: Peer | None = None
        self.pids: list[int] = []
        self._spent: list[httpx.AsyncClient] = []

    @property
    def alive(self) -> bool:
        return self.process is not None and self.process.proc.poll() is None

    async def start(self) -> None:
        self.process = await asyncio.to_thread(ServerProcess.start, WORKER, *self.args,
                                               env=self.env)
        self.pids.append(self.process.proc.pid)
        self.http = httpx.AsyncClient(timeout=20)
        self.peer = Peer(self.process.url, self.http)

    async def request(self, method: str, params: dict[str, Any], name: str) -> dict[str, Any]:
        if not self.alive or self.peer is None:
            raise ReplicaDown(self.name)
        return await posted(self.peer, self.name, method, params, name)

    async def kill(self) -> None:
        """SIGKILL: nothing of the process runs any more, nothing is said."""
        if self.process is not None and self.process.proc.poll() is None:
            self.process.proc.send_signal(signal.SIGKILL)
            await asyncio.to_thread(self.process.proc.wait, 10)
        await self._close()

    async def stop(self) -> None:
        """SIGTERM: a drain, as a deploy stops a replica."""
        if self.process is not None:
            await asyncio.to_thread(self.process.stop)
        await self._close()

    async def _close(self) -> None:
        """Forget the client; it is closed once requests still in flight have failed
        (`close`), not under them."""
        if self.http is not None:
            self._spent.append(self.http)
        self.http = self.peer = None

    async def close(self) -> None:
        """The end of the test: the process stopped, every client closed."""
        await self.kill()
        for http in self._spent:
            await http.aclose()
        self._spent.clear()

    def output(self) -> str:
        return self.process.output() if self.process is not None else ""


class Tapped(TaskStore):
    """A real task store that notes each write of a task's outstanding input requests, in
    order, in `writes` (shared by the replicas of a test): which keys a task issued when, as
    no poll of `tasks/get` could tell for sure."""

    def __init__(self, inner: TaskStore, writes: list[tuple[str, frozenset[str]]],
                 reads: list[str] | None = None) -> None:
        self.inner = inner
        self.writes = writes
        self.reads = reads
        """The ids of the tasks read, in order, when given."""

    async def create(self, record: Any, quota: Any = None) -> Any:
        full = await self.inner.create(record, quota)
        if full is None:
            self.writes.append((record.task_id, frozenset(record.input_requests)))
        return full

    async def save(self, record: Any, owner: str) -> bool:
        saved = await self.inner.save(record, owner)
        if saved:
            self.writes.append((record.task_id, frozenset(record.input_requests)))
        return saved

    async def release(self, record: Any, owner: str) -> bool:
        released = await self.inner.release(record, owner)
        if released:
            self.writes.append((record.task_id, frozenset(record.input_requests)))
        return released

    async def get(self, task_id: str) -> Any:
        found = await self.inner.get(task_id)
        if self.reads is not None:
            self.reads.append(task_id)
        return found

    async def put_answers(self, task_id: str, answers: dict[str, Any]) -> None:
        await self.inner.put_answers(task_id, answers)

    async def request_cancel(self, task_id: str) -> None:
        await self.inner.request_cancel(task_id)

    async def renew(self, task_ids: list[str], owner: str, until: float) -> set[str]:
        return await self.inner.renew(task_ids, owner, until)

    async def claim(self, task_id: str, owner: str, now: float, until: float) -> Any:
        return await self.inner.claim(task_id, owner, now, until)

    async def stale(self, now: float) -> list[Any]:
        return await self.inner.stale(now)

    async def purge(self, now: float) -> int:
        return await self.inner.purge(now)

    async def usage(self, owner: str | None, now: float) -> Any:
        return await self.inner.usage(owner, now)

    async def close(self) -> None:
        await self.inner.close()


def issued(writes: list[tuple[str, frozenset[str]]], task_id: str, key: str) -> int:
    """How many times `task_id` issued `key`: writes where it became outstanding."""
    count, outstanding = 0, False
    for written, keys in writes:
        if written == task_id:
            count += key in keys and not outstanding
            outstanding = key in keys
    return count


class LocalReplica:
    """The worker in this process, on a store the replicas share; see the module docstring."""

    def __init__(self, name: str, store: Any, effects: Path,
                 writes: list[tuple[str, frozenset[str]]] | None = None, **options: Any) -> None:
        self.name = name
        self.store = store
        self.effects = effects
        self.writes = writes
        self.options = options
        self.server: Any = None
        self.wire: ServerWire | None = None
        self._servers: list[Any] = []

    @property
    def alive(self) -> bool:
        return self.wire is not None

    async def start(self) -> None:
        store = self.store
        if self.writes is not None:
            store = Tapped(store_for(store, time.time), self.writes)
        self.server = make_worker(ServerOptions(extensions={"tasks": task_options(
            store=store, **self.options)}), self.effects)
        self._servers.append(self.server)
        self._killed = asyncio.Event()
        self.wire = ServerWire(self.server, tap=self._check)
        runtime_of(self.server).start()
        self._methods: dict[Any, str] = {}

    def _check(self, direction: str, message: dict[str, Any]) -> None:
        if direction == "send":
            self._methods[message.get("id")] = message.get("method", "")
            return
        check_server_message(MODERN, message, self._methods.get(message.get("id")))

    async def request(self, method: str, params: dict[str, Any], name: str) -> dict[str, Any]:
        if self.wire is None:
            raise ReplicaDown(self.name)
        meta = {"io.modelcontextprotocol/clientCapabilities": CAPS}
        asked = asyncio.ensure_future(self.wire.request(method, {**params, "_meta": meta}))
        gone = asyncio.ensure_future(self._killed.wait())
        await asyncio.wait({asked, gone}, return_when=asyncio.FIRST_COMPLETED)
        gone.cancel()
        if not asked.done():  # killed while it was asked: no answer comes, as from a dead process
            asked.cancel()
            raise ReplicaDown(self.name)
        return asked.result()  # type: ignore[no-any-return]

    async def kill(self) -> None:
        """Gone as a SIGKILLed process is: every task of its runtime cancelled, its handlers
        stopped at their next await, nothing more stored."""
        self._killed.set()
        if self.wire is not None:  # its requests first: none may start a run past this point
            self.wire.close()
        self.wire = None
        runtime = runtime_of(self.server)
        for background in (runtime.upkeep, runtime.controls):
            if background is not None:
                background.cancel()
        for job in list(runtime.jobs.values()):
            for running in (job.supervisor, job.task):
                if running is not None:
                    running.cancel()
        runtime.jobs.clear()
        await asyncio.sleep(0)

    async def stop(self) -> None:
        await runtime_of(self.server).drain(self.server.options.grace_s)
        await self.kill()

    async def close(self) -> None:
        if self.alive:
            await self.kill()
        for server in self._servers:
            await runtime_of(server).store.close()

    def output(self) -> str:
        return ""


def replicas_for(engine: str, count: int, tmp_path: Path, url: str | None, effects: Path,
                 extra_env: dict[str, str] | None = None,
                 writes: list[tuple[str, frozenset[str]]] | None = None) -> list[Any]:
    """`count` replicas of the worker on one `engine`'s task store: processes, or, given
    `writes` (or on the memory engine), in this process with their writes tapped."""
    if engine == "memory" or writes is not None:
        from mcpkit.ext.tasks.engines.memory import MemoryTaskStore

        shared: Any = {"memory": MemoryTaskStore, "sqlite": lambda: str(
            tmp_path / "tasks.sqlite3")}.get(engine, lambda: url)()
        return [LocalReplica(f"R{i}", shared, effects, writes) for i in range(count)]
    env = {"EFFECTS": str(effects), "MCPKIT_DATA_DIR": str(tmp_path / "data"),
           "MCPKIT_STATE_KEYS": "", "MCPKIT_STORE": "", **(extra_env or {})}
    args: tuple[str, ...] = () if engine == "sqlite" else ("--store", url or "")
    return [ProcessReplica(f"R{i}", env, args) for i in range(count)]


@dataclass
class Observed:
    """One state of a task as a `tasks/get` answered it."""

    sent: float
    status: str
    asked: frozenset[str]
    message: str | None
    result: dict[str, Any] | None = None


@dataclass
class Followed:
    """A task the fleet created, and what it saw of it."""

    task_id: str
    tag: str
    tool: str
    seen: list[Observed] = field(default_factory=list)
    acked: dict[str, tuple[float, str]] = field(default_factory=dict)
    """Key -> (when its answer was acknowledged, the note it carried)."""

    @property
    def last(self) -> Observed | None:
        return self.seen[-1] if self.seen else None


class Fleet:
    """The client of the long-running tests: creates, answers and follows tasks."""

    def __init__(self, replicas: list[Any], rng: random.Random) -> None:
        self.replicas = replicas
        self.rng = rng
        self.tasks: list[Followed] = []

    def live(self) -> list[Any]:
        return [r for r in self.replicas if r.alive]

    async def _any(self, method: str, params: dict[str, Any], name: str,
                   on: Any = None) -> dict[str, Any]:
        """A request to `on` (ReplicaDown when it is down), or to live replicas in a random
        order until one answers."""
        if on is not None:
            return await on.request(method, params, name)  # type: ignore[no-any-return]
        async with asyncio.timeout(60):
            while True:
                for replica in self.rng.sample(self.live(), len(self.live())):
                    try:
                        return await replica.request(method, params, name)
                    except ReplicaDown:
                        continue
                await asyncio.sleep(0.05)

    async def create(self, tool: str, tag: str, steps: int, ask_at: int, step_s: float,
                     on: Any = None) -> Followed:
        reply = await self._any("tools/call", {"name": tool, "arguments": {
            "tag": tag, "steps": steps, "ask_at": ask_at, "step_s": step_s}}, tool, on)
        result = reply["result"]
        assert result["resultType"] == "task", result
        followed = Followed(result["taskId"], tag, tool)
        self.tasks.append(followed)
        return followed

    async def look(self, task: Followed, on: Any = None) -> Observed:
        sent = time.monotonic()
        reply = await self._any("tasks/get", {"taskId": task.task_id}, task.task_id, on)
        assert "result" in reply, (task.tag, reply)  # an acknowledged task is never lost
        got = check_get_task_result(reply["result"])
        seen = Observed(sent, got["status"], frozenset(got.get("inputRequests", {})),
                        got.get("statusMessage"), got.get("result") or got.get("error"))
        task.seen.append(seen)
        return seen

    async def answer(self, task: Followed, key: str, on: Any = None) -> None:
        note = f"note-{task.tag}"
        reply = await self._any("tasks/update", {"taskId": task.task_id, "inputResponses": {
            key: {"action": "accept", "content": {"note": note}}}}, task.task_id, on)
        assert reply.get("result", {}).get("resultType") == "complete", reply
        task.acked.setdefault(key, (time.monotonic(), note))

    async def follow(self, until: Callable[[], bool] | None = None, timeout: float = 60.0,
                     answer: bool = True, hold: frozenset[str] = frozenset()) -> None:
        """Look at every unfinished task in turn, answering a question the first time it is
        seen (except those of the tasks tagged in `hold`, left waiting), until all are
        finished (or `until()` holds)."""
        async with asyncio.timeout(timeout):
            while True:
                pending = [t for t in self.tasks if t.last is None or t.last.status not in
                           TERMINAL]
                if not pending or (until is not None and until()):
                    return
                for task in pending:
                    seen = await self.look(task)
                    if answer and task.tag not in hold and "go" in seen.asked \
                            and "go" not in task.acked:
                        await self.answer(task, "go")
                await asyncio.sleep(0.02)


VALID = {"working": {"working", "input_required", *TERMINAL},
         "input_required": {"working", "input_required", *TERMINAL}}


def check_paths(tasks: Iterable[Followed]) -> None:
    """Every observed status path is valid: working <-> input_required, then one terminal
    status that never changes; a key whose answer was acknowledged, once seen taken, is never
    outstanding again; a completed task used the note that was acknowledged."""
    for task in tasks:
        statuses = [s.status for s in task.seen]
        for before, after in itertools.pairwise(statuses):
            if before in TERMINAL:
                assert after == before, (task.tag, statuses)
            else:
                assert after in VALID[before], (task.tag, statuses)
        ends = [s for s in task.seen if s.status in TERMINAL]
        assert all(s.result == ends[0].result for s in ends), (task.tag, "a result changed")
        for key, (acked, note) in task.acked.items():
            taken = False
            for seen in task.seen:
                if seen.sent <= acked:
                    continue
                if key not in seen.asked:
                    taken = True
                assert not (taken and key in seen.asked), (
                    task.tag, f"{key!r} was asked again after its answer was taken",
                    [(s.status, sorted(s.asked)) for s in task.seen])
            last = task.last
            if last is not None and last.status == "completed" and last.result is not None:
                text = last.result["content"][0]["text"]
                assert text.endswith(f"with {note}"), (task.tag, "the answer was lost", text)


@dataclass
class Run:
    run: str
    lines: list[tuple[int, str, list[str]]] = field(default_factory=list)


def check_effects(effects: Path, tasks: Iterable[Followed]) -> dict[str, list[Run]]:
    """The runs of each task in the effects file: they never overlap, a task that is not
    resumable ran once, a completed task's result is its last run's; returns them by tag."""
    runs: dict[str, list[Run]] = {}
    for number, line in enumerate(effects.read_text().splitlines()):
        event, tag, run, *rest = line.split()
        by_tag = runs.setdefault(tag, [])
        if not by_tag or by_tag[-1].run != run:
            assert all(r.run != run for r in by_tag), (
                tag, f"run {run} wrote again after a later run had begun (line {number})")
            by_tag.append(Run(run))
        by_tag[-1].lines.append((number, event, rest))
    for task in tasks:
        mine = runs.get(task.tag, [])
        assert mine, (task.tag, "never ran")
        for run in mine[1:]:
            assert run.lines[0][1] == "start", (task.tag, run.run, "a run began mid-way")
        if task.tool == "batch":
            assert len(mine) == 1, (task.tag, "a task that is not resumable ran again")
        last = task.last
        if last is not None and last.status == "completed" and last.result is not None:
            text = last.result["content"][0]["text"]
            assert f"done by {mine[-1].run} " in text, (task.tag, text)
            assert mine[-1].lines[-1][1] == "done", (task.tag, "completed before its end")
    return runs


def pids_of(replicas: Iterable[Any]) -> set[int]:
    return {pid for r in replicas for pid in getattr(r, "pids", [])} | {os.getpid()}
