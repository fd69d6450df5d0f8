"""A task that runs for several lease periods is never taken for dead while it runs, on every
engine (memory, SQLite, PostgreSQL, Redis).

Two replicas share the engine's task store; the task runs on the first, reporting progress at
every step and asking a question on the way, answered through the second, whose upkeep
(heartbeat and sweeper) runs all the while. Clocks are shortened by options: heartbeats every
0.2 s, a lease of 1 s, so the task's 4.4 s are more than four lease periods. Each progress
report is a save; were a save to write back the lease the task was created with, the second
replica would find it lapsed after a second and fail it or run it again. Afterwards: one run,
one start (attempts 1), a valid status path that never shows `failed`, the key answered once,
and the result computed with that answer.
"""

from __future__ import annotations

import asyncio
import random
from pathlib import Path
from typing import Any

import pytest
from helpers.store_urls import KINDS, make_url
from helpers.task_fleet import Fleet, LocalReplica, check_effects, check_paths

from mcpkit.ext.tasks import runtime_of

STEPS, STEP_S, LEASE_S = 22, 0.2, 1.0


@pytest.fixture(params=KINDS)
def store(request: pytest.FixtureRequest, tmp_path: Path) -> Any:
    """The engine's task store setting: a shared instance, a file, or a URL."""
    if request.param == "memory":
        from mcpkit.ext.tasks.engines.memory import MemoryTaskStore

        return MemoryTaskStore()
    if request.param == "sqlite":
        return str(tmp_path / "tasks.sqlite3")
    return make_url(request.param, request, tmp_path)


async def test_a_task_running_for_four_lease_periods_runs_once_and_completes(
        store: Any, tmp_path: Path) -> None:
    effects = tmp_path / "effects"
    runner, sweeper = (LocalReplica(name, store, effects, lease_s=LEASE_S) for name in "AB")
    await runner.start()
    await sweeper.start()
    try:
        fleet = Fleet([runner, sweeper], random.Random(1))
        task = await fleet.create("relay", "long", STEPS, STEPS // 2, STEP_S, on=runner)
        assert STEPS * STEP_S > 4 * LEASE_S
        async with asyncio.timeout(60):
            while task.last is None or task.last.status != "completed":
                seen = await fleet.look(task, on=sweeper)
                assert seen.status != "failed", seen
                if "go" in seen.asked and "go" not in task.acked:
                    await fleet.answer(task, "go", on=sweeper)
                await asyncio.sleep(0.05)
        stored = await runtime_of(sweeper.server).store.get(task.task_id)
        assert stored is not None and stored.attempts == 1 and stored.lease_owner is None
        check_paths(fleet.tasks)
        runs = check_effects(effects, fleet.tasks)["long"]
        assert len(runs) == 1, "the task ran more than once"
        steps = [e for e in runs[0].lines if e[1] == "step"]
        assert len(steps) == STEPS
        statuses = [s.status for s in task.seen]
        assert "input_required" in statuses and statuses[-1] == "completed"
        assert task.last is not None and task.last.result is not None
        assert task.last.result["content"][0]["text"].endswith("with note-long")
    finally:
        for replica in (runner, sweeper):
            await replica.close()
