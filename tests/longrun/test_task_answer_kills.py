"""The replica running a task is SIGKILLed at each step of the answer path, on every engine:
an answer acknowledged is never lost, and no key is asked again after its answer was taken.

Replica A runs five tasks that each ask one question ("go") a few steps in; B shares the
task store and runs its upkeep. At the moment A is killed (SIGKILL on SQLite, PostgreSQL and
Redis; on the memory engine, which lives in the test's process, A is dropped as a SIGKILL
would drop it):

- T1 waits for its answer, none given yet (before the answer);
- T2's answer was just acknowledged by B, racing A's taking it (while it is stored and taken);
- T3's answer was taken by A, which has worked on since (after);
- T5's answer is sent to A itself as A dies (during: acknowledged or not, the client retries
  it through B when it got no acknowledgement);
- T4, which cannot be resumed, waits for its answer.

On the memory engine, and on every engine once more with the replicas in this process, each
write of the store is tapped, so how many times each task issued its key is known exactly.

A is started again. The resumable tasks are taken up once their lease lapsed and run again
with every answer given: each completes with the note acknowledged, and no key is issued again
once answered (T1's, never answered before the kill, may be asked once more). T4 ends `failed`, saying its process
stopped. Two runs of one task never overlap, and every status path is valid.
"""

from __future__ import annotations

import asyncio
import random
from pathlib import Path
from typing import Any

import pytest
from helpers.store_urls import KINDS, make_url
from helpers.task_fleet import (
    Fleet,
    LocalReplica,
    ReplicaDown,
    check_effects,
    check_paths,
    issued,
    replicas_for,
)

STEPS, ASK_AT, STEP_S = 24, 2, 0.1


WRITES: list[tuple[str, frozenset[str]]] = []


@pytest.fixture(params=[*(("process", kind) for kind in KINDS if kind != "memory"),
                        *(("local", kind) for kind in KINDS)], ids="-".join)
async def replicas(request: pytest.FixtureRequest, tmp_path: Path) -> Any:
    """Two replicas on one engine: real processes, or servers in this process whose writes
    are tapped (`WRITES`), so what keys each task issued is known exactly."""
    mode, engine = request.param
    url = None if engine in ("memory", "sqlite") else make_url(engine, request, tmp_path)
    WRITES.clear()
    made = replicas_for(engine, 2, tmp_path, url, tmp_path / "effects",
                        writes=WRITES if mode == "local" else None)
    yield made
    for replica in made:
        await replica.close()


async def until_seen(fleet: Fleet, task: Any, on: Any, test: Any) -> None:
    async with asyncio.timeout(30):
        while not test(await fleet.look(task, on=on)):
            await asyncio.sleep(0.02)


def past_step(n: int) -> Any:
    return lambda seen: seen.status == "working" and (seen.message or "").startswith(
        "step ") and int(seen.message.split()[1]) > n


async def test_a_kill_at_each_step_of_the_answer_path_loses_no_acknowledged_answer(
        replicas: list[Any], tmp_path: Path) -> None:
    a, b = replicas
    for replica in replicas:
        await replica.start()
    fleet = Fleet(replicas, random.Random(25))
    tasks = {tag: await fleet.create("batch" if tag == "T4" else "relay", tag, STEPS, ASK_AT,
                                     STEP_S, on=a) for tag in ("T1", "T2", "T3", "T4", "T5")}
    for task in tasks.values():
        await until_seen(fleet, task, b, lambda seen: "go" in seen.asked)
    await fleet.answer(tasks["T3"], "go", on=b)
    await until_seen(fleet, tasks["T3"], b, past_step(ASK_AT + 2))  # A took it, works on
    await fleet.answer(tasks["T2"], "go", on=b)
    t5 = tasks["T5"]
    if isinstance(a, LocalReplica):  # in one process the update is done before A is dropped
        await fleet.answer(t5, "go", on=a)
        await a.kill()
    else:
        sent = asyncio.ensure_future(fleet.answer(t5, "go", on=a))
        await asyncio.sleep(0)
        await a.kill()
        try:
            await sent
        except ReplicaDown:
            pass
    if "go" not in t5.acked:
        await fleet.answer(t5, "go", on=b)
    await a.start()
    await fleet.follow(timeout=90)
    check_paths(fleet.tasks)
    runs = check_effects(tmp_path / "effects", fleet.tasks)
    for tag in ("T1", "T2", "T3", "T5"):
        last = tasks[tag].last
        assert last is not None and last.status == "completed", (tag, tasks[tag].seen)
        assert len(runs[tag]) == 2, (tag, "ran again exactly once, after the kill")
    failed = tasks["T4"].last
    assert failed is not None and failed.status == "failed"
    assert "stopped before it finished" in (failed.message or "")
    if isinstance(a, LocalReplica):  # every write is known: which keys were issued, how often
        counts = {tag: issued(WRITES, task.task_id, "go") for tag, task in tasks.items()}
        # T1's question was outstanding at the kill: answered before its run again asks (the
        # answer is then taken from the store) or asked once more; every other key once
        assert counts["T1"] in (1, 2) and {**counts, "T1": 1} == dict.fromkeys(tasks, 1), counts
