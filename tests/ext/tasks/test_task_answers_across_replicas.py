"""An answer acknowledged by a replica that does not run the task is seen at once: `tasks/get`
right after the `tasks/update`, through either replica, lists only the keys still pending, on
every engine. And what a client writes into a task (its arguments, its answers) and what the
tool makes of it (progress messages, the result) may hold any character, NUL included: every
engine stores it and gives the same back to the other replica.

Two servers in this process share one task store and no broker, and neither runs its upkeep:
the replica running the task takes the stored answer up only when the test runs its heartbeat
(`upkeep_once`). So between the acknowledgement and that heartbeat the runner has not taken the
answer, whatever the timing: what `tasks/get` says then comes from the store alone. Every
message the servers send is schema-checked.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
from helpers.store_urls import KINDS, make_url
from test_task_shares import CAPS, Caller

from mcpkit import Context, Server
from mcpkit.ext.tasks import TaskOptions, runtime_of
from mcpkit.ext.tasks.upkeep import upkeep_once
from mcpkit.ext.tasks.wire import check_get_task_result
from mcpkit.server.options import ServerOptions

WAIT_S = 10.0
GATES: dict[str, asyncio.Event] = {}
"""What `echo_text` waits for after its progress report, by its text (set by the test)."""


def replica(store: Any) -> Server:
    server = Server("answers", options=ServerOptions(extensions={"tasks": TaskOptions(
        store=store, sync_budget_s=0.01, heartbeat_s=60, lease_s=180)}))
    @server.tool(task="required", resumable=True)
    async def echo_text(text: str, ctx: Context) -> str:
        await ctx.report_progress(1, 2, f"read {text}")
        await GATES[text].wait()
        answer = await ctx.elicit("more", f"More than {text}?", {"name": str})
        return f"{text} and {(answer.content or {})['name']}"

    @server.tool(task="required")
    async def two_names(ctx: Context) -> str:
        await asyncio.sleep(0.05)  # past the budget (a loop timer after it): a task asks
        first, second = await asyncio.gather(ctx.elicit("first", "First name?", {"name": str}),
                                             ctx.elicit("second", "Second name?", {"name": str}))
        return f"{(first.content or {})['name']} and {(second.content or {})['name']}"

    # The heartbeat runs only when the test runs it: the background upkeep never starts.
    runtime_of(server).upkeep = asyncio.get_running_loop().create_future()  # type: ignore[union-attr]
    return server


@pytest.fixture(params=KINDS)
async def pair(request: pytest.FixtureRequest, tmp_path: Path) -> AsyncIterator[list[Server]]:
    """Two replicas on one store of each engine (one instance on the memory engine)."""
    if request.param == "memory":
        from mcpkit.ext.tasks.engines.memory import MemoryTaskStore

        setting: Any = MemoryTaskStore(clock=time.time)
    elif request.param == "sqlite":
        setting = str(tmp_path / "tasks.sqlite3")
    else:
        setting = make_url(request.param, request, tmp_path)
    servers = [replica(setting), replica(setting)]
    yield servers
    for server in servers:
        runtime = runtime_of(server)
        for job in list(runtime.jobs.values()):
            for running in (job.task, job.supervisor):
                if running is not None:
                    running.cancel()
        await asyncio.sleep(0)
        await runtime.store.close()


async def update(caller: Caller, task_id: str, key: str, name: str) -> None:
    reply = await caller.wire.request("tasks/update", {
        "taskId": task_id, "_meta": CAPS,
        "inputResponses": {key: {"action": "accept", "content": {"name": name}}}})
    assert reply["result"]["resultType"] == "complete", reply


async def seen(caller: Caller, task_id: str) -> dict[str, Any]:
    reply = await caller.get(task_id)
    return check_get_task_result(reply["result"])


async def test_an_answer_given_to_the_other_replica_is_seen_at_once_by_both(
        pair: list[Server]) -> None:
    a, b = pair
    on_a, on_b = Caller(a, None), Caller(b, None)
    created = await on_a.call("two_names")
    task_id = created["result"]["taskId"]
    async with asyncio.timeout(WAIT_S):
        while set((await seen(on_b, task_id)).get("inputRequests", {})) != {"first", "second"}:
            await asyncio.sleep(0.01)

    await update(on_b, task_id, "first", "Ada")  # stored by B; A has not taken it up
    for caller in (on_b, on_a):
        task = await seen(caller, task_id)
        assert task["status"] == "input_required", task
        assert set(task["inputRequests"]) == {"second"}, task
        assert task["statusMessage"] == "waiting for input: second", task
    stored = await runtime_of(b).store.get(task_id)
    assert stored is not None and set(stored.input_requests) == {"first", "second"}, \
        "the runner took the answer already: the test no longer shows the window"

    await update(on_a, task_id, "second", "Grace")  # A takes both: the stored one too
    async with asyncio.timeout(WAIT_S):
        while (task := await seen(on_b, task_id))["status"] != "completed":
            await asyncio.sleep(0.01)
    assert task["result"]["content"][0]["text"] == "Ada and Grace", task


async def test_every_answer_given_to_the_other_replica_makes_the_task_working_at_once(
        pair: list[Server]) -> None:
    a, b = pair
    on_a, on_b = Caller(a, None), Caller(b, None)
    task_id = (await on_a.call("two_names"))["result"]["taskId"]
    async with asyncio.timeout(WAIT_S):
        while set((await seen(on_a, task_id)).get("inputRequests", {})) != {"first", "second"}:
            await asyncio.sleep(0.01)

    await update(on_b, task_id, "second", "Grace")
    await update(on_b, task_id, "first", "Ada")
    for caller in (on_a, on_b):
        task = await seen(caller, task_id)
        assert task["status"] == "working" and "inputRequests" not in task, task
        assert "statusMessage" not in task, task
    # A second answer to a key already answered, on either replica, is ignored.
    await update(on_a, task_id, "first", "Bea")

    await upkeep_once(runtime_of(a))  # the runner's heartbeat takes the stored answers up
    async with asyncio.timeout(WAIT_S):
        while (task := await seen(on_b, task_id))["status"] != "completed":
            await asyncio.sleep(0.01)
    assert task["result"]["content"][0]["text"] == "Ada and Grace", task


async def test_text_with_nul_is_stored_and_read_back_the_same_on_every_engine(
        pair: list[Server]) -> None:
    a, b = pair
    on_a, on_b = Caller(a, None), Caller(b, None)
    text, name = "a\x00b \u2028 \U0001f600", "x\x00y"
    GATES[text] = asyncio.Event()  # this test's
    task_id = (await on_a.call("echo_text", text=text))["result"]["taskId"]
    async with asyncio.timeout(WAIT_S):
        while (task := await seen(on_b, task_id)).get("statusMessage") != f"read {text} (1/2)":
            await asyncio.sleep(0.01)
    stored = await runtime_of(b).store.get(task_id)  # read by the other replica's store
    assert stored is not None and stored.arguments == {"text": text}
    GATES[text].set()
    async with asyncio.timeout(WAIT_S):
        while (task := await seen(on_b, task_id))["status"] != "input_required":
            await asyncio.sleep(0.01)
    assert text in task["inputRequests"]["more"]["params"]["message"]
    await update(on_b, task_id, "more", name)
    stored = await runtime_of(a).store.get(task_id)
    assert stored is not None and stored.answers == {
        "more": {"action": "accept", "content": {"name": name}}}
    await upkeep_once(runtime_of(a))
    async with asyncio.timeout(WAIT_S):
        while (task := await seen(on_b, task_id))["status"] != "completed":
            await asyncio.sleep(0.01)
    assert task["result"]["content"][0]["text"] == f"{text} and {name}", task
