"""Replicas SIGKILLed at seeded random points while tasks run, on every engine.

Three replicas share one engine's task store (real `mcpkit run` processes on SQLite,
PostgreSQL and Redis; on the memory engine, servers in this process dropped as SIGKILL would
drop them). Six tasks, four resumable and two not, each reporting progress at every step and
asking one question, are spread over them. A seeded schedule kills a random replica five
times, a fraction of a second apart (always leaving one running), and starts killed ones again, while the client follows every
task through whichever replica answers and answers each question once. Then every replica runs
again until all tasks have ended.

Afterwards: every status path is valid and never leaves a terminal status; no answered key
was asked again; each completed task used the answer acknowledged; two runs of one task never
overlapped; every resumable task completed; a task that cannot resume ran once and ended
completed or `failed` saying its process stopped. The seed is printed (MCPKIT_LONGRUN_SEED
replays one).
"""

from __future__ import annotations

import asyncio
import os
import random
from pathlib import Path
from typing import Any

import pytest
from helpers.store_urls import KINDS, make_url
from helpers.task_fleet import Fleet, check_effects, check_paths, replicas_for

KILLS = 5


@pytest.fixture(params=KINDS)
async def replicas(request: pytest.FixtureRequest, tmp_path: Path) -> Any:
    engine = request.param
    url = None if engine in ("memory", "sqlite") else make_url(engine, request, tmp_path)
    made = replicas_for(engine, 3, tmp_path, url, tmp_path / "effects")
    yield made
    for replica in made:
        await replica.close()


async def test_replicas_killed_at_random_lose_nothing_and_run_nothing_twice(
        replicas: list[Any], tmp_path: Path) -> None:
    seed = int(os.environ.get("MCPKIT_LONGRUN_SEED", "2025"))
    print(f"MCPKIT_LONGRUN_SEED={seed}")
    rng = random.Random(seed)
    for replica in replicas:
        await replica.start()
    fleet = Fleet(replicas, rng)
    for n in range(6):
        await fleet.create("batch" if n % 3 == 2 else "relay", f"T{n}", rng.randint(25, 40),
                           rng.randint(1, 8), 0.1, on=rng.choice(replicas))
    following = asyncio.ensure_future(fleet.follow(timeout=120))
    for _ in range(KILLS):
        await asyncio.sleep(rng.uniform(0.2, 0.8))
        live = fleet.live()
        await rng.choice(live).kill()
        for replica in replicas:
            if not replica.alive and (rng.random() < 0.5 or len(fleet.live()) < 2):
                await replica.start()
    for replica in replicas:
        if not replica.alive:
            await replica.start()
    await following
    check_paths(fleet.tasks)
    check_effects(tmp_path / "effects", fleet.tasks)
    for task in fleet.tasks:
        last = task.last
        assert last is not None
        if task.tool == "relay":
            assert last.status == "completed", (task.tag, [s.status for s in task.seen])
        else:
            assert last.status == "completed" or (
                last.status == "failed" and "stopped before it finished" in (last.message or "")
            ), (task.tag, last)
