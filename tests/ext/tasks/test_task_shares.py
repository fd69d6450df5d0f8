"""Fair shares of tasks: one caller cannot take every task slot, or fill the store, for the
others; a full share is the caller's error with a time to wait, a full server a retryable 503;
a task past its TTL, or waiting for an answer past `TaskOptions.input_wait_s`, stops and frees
its place, on every engine and across replicas; a task keeps its arguments only while a run
again may need them.

Servers run in this process on each engine's store; two callers (principals) speak through
`ServerWire` and the HTTP answers come from a real uvicorn on 127.0.0.1. Every message the
servers send is schema-checked.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from helpers.store_urls import KINDS, Clock, make_url
from helpers.transports.http_peer import Peer
from helpers.transports.listening import listening
from helpers.wire import MODERN, check_server_message

from mcpkit import Context, Server
from mcpkit.ext.tasks import TaskOptions, runtime_of
from mcpkit.ext.tasks.records import TaskQuota, TaskUsage
from mcpkit.ext.tasks.shares import Room
from mcpkit.ext.tasks.upkeep import upkeep_once
from mcpkit.ext.tasks.wire import check_get_task_result
from mcpkit.server.options import ServerOptions
from mcpkit.testing import ServerWire

TASKS = "io.modelcontextprotocol/tasks"
CAPS = {"io.modelcontextprotocol/clientCapabilities": {
    "elicitation": {"form": {}}, "extensions": {TASKS: {}}}}


def share_server(store: Any, clock: Any = None, **limits: Any) -> Server:
    options = ServerOptions(extensions={"tasks": TaskOptions(store=store, sync_budget_s=0.02,
                                                             **limits)},
                            **({} if clock is None else {"clock": clock}))
    server = Server("shares", options=options)

    @server.tool(task="required")
    async def hold(seconds: float) -> str:
        await asyncio.sleep(seconds)
        return "held"

    @server.tool(task="required")
    async def quick(size: int = 0) -> str:
        return "x" * size

    @server.tool(task="required")
    async def wait_for_answer(ctx: Context) -> str:
        await asyncio.sleep(0.05)
        await ctx.elicit("go", "Go on?", {"note": str})
        return "went on"

    @server.tool(task="required", resumable=True)
    async def rerunnable(blob: str) -> str:
        await asyncio.sleep(0.2)  # a task while it runs: its arguments are stored meanwhile
        return f"{len(blob)} bytes"

    return server


class Caller:
    """A principal's schema-checked connection to a server."""

    def __init__(self, server: Server, principal: str | None) -> None:
        self.methods: dict[Any, str] = {}
        self.wire = ServerWire(server, tap=self._check, principal=principal)

    def _check(self, direction: str, message: dict[str, Any]) -> None:
        if direction == "send":
            self.methods[message.get("id")] = message.get("method", "")
        else:
            check_server_message(MODERN, message, self.methods.get(message.get("id")))

    async def call(self, tool: str, **arguments: Any) -> dict[str, Any]:
        reply: dict[str, Any] = await self.wire.request("tools/call", {
            "name": tool, "arguments": arguments, "_meta": CAPS})
        return reply

    async def get(self, task_id: str) -> dict[str, Any]:
        reply: dict[str, Any] = await self.wire.request("tasks/get", {
            "taskId": task_id, "_meta": CAPS})
        return reply

    async def until(self, task_id: str, *statuses: str) -> dict[str, Any]:
        async with asyncio.timeout(10):
            while True:
                got = (await self.get(task_id))["result"]
                if got["status"] in statuses:
                    return check_get_task_result(got)
                await asyncio.sleep(0.01)


@pytest.fixture(params=KINDS)
def store(request: pytest.FixtureRequest, tmp_path: Path) -> Any:
    """`store(clock)`: the task store setting every replica of a test shares (on the memory
    engine one instance, made with the first replica's clock)."""
    made: list[Any] = []

    def setting(clock: Any = time.time) -> Any:
        if not made:
            if request.param == "memory":
                from mcpkit.ext.tasks.engines.memory import MemoryTaskStore

                made.append(MemoryTaskStore(clock=clock))
            elif request.param == "sqlite":
                made.append(str(tmp_path / "tasks.sqlite3"))
            else:
                made.append(make_url(request.param, request, tmp_path))
        return made[0]
    return setting


@pytest.fixture
async def closing() -> AsyncIterator[list[Any]]:
    """Servers and connections closed when the test ends."""
    things: list[Any] = []
    yield things
    for thing in things:
        if isinstance(thing, Caller):
            thing.wire.close()
        else:
            for job in list(runtime_of(thing).jobs.values()):
                if job.task is not None:
                    job.task.cancel()
            await asyncio.sleep(0)
            await runtime_of(thing).store.close()


async def test_one_caller_cannot_take_every_task_slot(store: Any, closing: list[Any]) -> None:
    server = share_server(store(), max_active_per_principal=2)
    alice, bob = Caller(server, "alice"), Caller(server, "bob")
    closing += [alice, bob, server]
    for _ in range(2):
        assert (await alice.call("hold", seconds=600))["result"]["resultType"] == "task"
    refused = (await alice.call("hold", seconds=600))["error"]
    assert refused["code"] == -32602
    assert refused["data"] == {"share": "active", "limit": 2, "retryAfterS": 1}
    assert "tool 'hold'" in refused["message"]
    assert "TaskOptions.max_active_per_principal" in refused["message"]
    assert (await bob.call("hold", seconds=600))["result"]["resultType"] == "task"
    assert len(runtime_of(server).jobs) == 3  # the refused call never ran


async def test_a_read_of_a_share_with_room_serves_the_calls_after_it_and_none_past_it(
        store: Any, closing: list[Any]) -> None:
    """The check before a tool runs reads the store once for the places it finds free: the
    next calls take them without a read, and the call that finds none left reads again and is
    refused before its tool runs."""
    server = share_server(store(), max_active_per_principal=3)
    alice = Caller(server, "alice")
    closing += [alice, server]
    tasks = runtime_of(server).store
    reads: list[str | None] = []  # the reads before a tool runs (not the create's own count)
    usage, create = tasks.usage, tasks.create
    creating = False

    async def counted(owner: str | None, now: float) -> Any:
        if not creating:
            reads.append(owner)
        return await usage(owner, now)

    async def counted_create(*args: Any) -> Any:
        nonlocal creating
        creating = True
        try:
            return await create(*args)
        finally:
            creating = False

    tasks.usage, tasks.create = counted, counted_create  # type: ignore[method-assign]
    for _ in range(3):
        assert (await alice.call("hold", seconds=600))["result"]["resultType"] == "task"
    assert len(reads) == 1
    refused = (await alice.call("hold", seconds=600))["error"]
    assert refused["data"] == {"share": "active", "limit": 3, "retryAfterS": 1}
    assert len(reads) == 2
    assert len(runtime_of(server).jobs) == 3


def test_the_room_a_read_found_lasts_a_second_and_a_stored_result_ends_it() -> None:
    now = [0.0]
    room = Room(lambda: now[0])
    assert not room.take("alice")  # nothing read yet
    room.found("alice", TaskUsage(1, 5, 0, None), TaskQuota(4, 100, 10_000))
    assert room.take("alice") and room.take("alice")  # three places free: the reader took one
    assert not room.take("alice")
    room.found("alice", TaskUsage(0, 0, 0, None), TaskQuota(4, 100, 10_000))
    assert not room.take("bob")
    now[0] = 1.0
    assert not room.take("alice")  # a second later the store is read again
    room.found("alice", TaskUsage(0, 0, 0, None), TaskQuota(4, 100, 10_000))
    room.forget("alice")
    assert not room.take("alice")


async def test_a_full_stored_share_says_when_a_place_frees(store: Any, closing: list[Any]) -> None:
    clock = Clock()
    server = share_server(store(clock), clock, max_stored_per_principal=3, ttl_ms=60_000)
    alice = Caller(server, "alice")
    closing += [alice, server]
    ids = []
    for _ in range(3):
        ids.append((await alice.call("quick"))["result"]["taskId"])
        clock.advance(10)
    refused = (await alice.call("quick"))["error"]
    assert refused["data"]["share"] == "stored" and refused["data"]["limit"] == 3
    assert refused["data"]["retryAfterS"] == 30  # the first of them expires 60 s after it began
    clock.advance(30)  # it has expired: its place is free
    assert (await alice.call("quick"))["result"]["resultType"] == "task"


async def test_stored_bytes_are_bounded_per_caller(store: Any, closing: list[Any]) -> None:
    server = share_server(store(), max_stored_bytes_per_principal=20_000)
    alice = Caller(server, "alice")
    closing += [alice, server]
    too_big = await alice.until((await alice.call("quick", size=30_000))["result"]["taskId"],
                                "completed", "failed")
    assert too_big["status"] == "failed"
    assert "over their share of 20000 bytes" in too_big["statusMessage"]
    assert "TaskOptions.max_stored_bytes_per_principal" in too_big["statusMessage"]
    fits = await alice.until((await alice.call("quick", size=5_000))["result"]["taskId"],
                             "completed", "failed")
    assert fits["status"] == "completed"
    refused = (await alice.call("rerunnable", blob="y" * 20_000))["error"]
    assert refused["code"] == -32602 and refused["data"]["share"] == "bytes"


async def test_arguments_are_kept_only_while_a_run_again_may_need_them(
        store: Any, closing: list[Any]) -> None:
    server = share_server(store())
    alice = Caller(server, "alice")
    closing += [alice, server]
    plain = (await alice.call("hold", seconds=600))["result"]["taskId"]
    assert (await runtime_of(server).store.get(plain)).arguments is None  # type: ignore[union-attr]
    again = (await alice.call("rerunnable", blob="z" * 1000))["result"]["taskId"]
    running = await runtime_of(server).store.get(again)
    assert running is not None and running.arguments == {"blob": "z" * 1000}
    await alice.until(again, "completed")
    stored = await runtime_of(server).store.get(again)
    assert stored is not None and stored.arguments is None and stored.answers == {}


async def test_a_task_past_its_ttl_or_its_input_wait_frees_its_place_across_replicas(
        store: Any, closing: list[Any]) -> None:
    clock = Clock()
    runner, other = (share_server(store(clock), clock, max_active_per_principal=2,
                                  ttl_ms=600_000, input_wait_s=60) for _ in range(2))
    alice, elsewhere = Caller(runner, "alice"), Caller(other, "alice")
    closing += [alice, elsewhere, runner, other]
    parked = (await alice.call("wait_for_answer"))["result"]["taskId"]
    await elsewhere.until(parked, "input_required")
    stuck = (await alice.call("hold", seconds=100_000))["result"]["taskId"]
    refused = (await elsewhere.call("hold", seconds=1))["error"]  # counted in the store
    assert refused["data"]["share"] == "active"
    clock.advance(61)  # past the input wait: the parked task is cancelled, saying why
    await upkeep_once(runtime_of(runner))
    cancelled = await elsewhere.until(parked, "cancelled")
    assert "no answer to 'go' within 60 s (TaskOptions.input_wait_s)" in cancelled["statusMessage"]
    clock.advance(600)  # past the TTL: the hung task stops, and its record goes
    await upkeep_once(runtime_of(runner))
    assert (await elsewhere.get(stuck))["error"]["code"] == -32602
    async with asyncio.timeout(10):
        while runtime_of(runner).jobs:  # both handlers stopped: their places are free
            await asyncio.sleep(0.01)
    for _ in range(2):
        assert (await elsewhere.call("hold", seconds=600))["result"]["resultType"] == "task"


async def test_over_http_a_full_share_is_429_and_a_full_server_503() -> None:
    shared = share_server("memory:", max_active_per_principal=1)
    single = share_server("memory:", max_running=1)
    async with listening(shared.asgi()) as a, listening(single.asgi()) as b, \
            httpx.AsyncClient(timeout=10) as http:
        for live, status, code, why in ((a, 429, -32602, "share"), (b, 503, -32603, "busy")):
            peer = Peer(live.url, http)

            async def call(on: Peer = peer) -> Any:
                return await on.post(on.request_message("tools/call", {
                    "name": "hold", "arguments": {"seconds": 600}}, **CAPS))
            assert (await call()).message["result"]["resultType"] == "task"
            refused = await call()
            assert refused.status == status and refused.headers["retry-after"] == "1"
            error = refused.message["error"]
            assert error["code"] == code
            assert error["data"].get("share") == "active" if why == "share" else \
                error["data"]["unavailable"] == "busy"
    for server in (shared, single):
        for job in list(runtime_of(server).jobs.values()):
            job.stop("cancel")
