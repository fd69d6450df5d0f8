"""A rolling restart behind nginx under task load, on PostgreSQL and on Redis.

Three `mcpkit run --grace 1` replicas (heartbeats every 0.5 s, leases of 3 s: replicas
starting on a loaded machine must not starve a running one past its lease) of the long-running tests' worker (tests/helpers/task_worker.py:
tasks that report progress at every step and ask one question) behind a round-robin nginx.
Nine tasks are started through nginx, five resumable and four not (one of them, W8, left
waiting for its answer until the restart is over, so it is running whenever its replica
stops, however long the restart takes); then each replica in
turn gets SIGTERM, drains and exits, and is started again before the next one is stopped,
while the client follows every task and answers its question through nginx, whichever
replica serves it.

Afterwards every resumable task has completed (a stopping replica hands it back, another
resumes it, the hand-back counting as no crash); each other task has completed or ended
`failed` with a message saying why (shut down before it finished, its grace ran out); no two
runs of one task overlapped and none that cannot resume ran twice; every status path is valid,
no answered key was asked again, and every completed task used the answer acknowledged.
Every server message is schema-checked (`Peer`).
"""

from __future__ import annotations

import asyncio
import random
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
from helpers.task_fleet import WORKER, Balanced, Fleet, check_effects, check_paths
from nginx import Cluster, nginx_binary


@pytest.fixture(params=["postgres", "redis"])
def rolling(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Cluster]:
    nginx_binary()
    url: str = request.getfixturevalue(f"{request.param}_url")
    cluster = Cluster(request.param, url, WORKER, extra_env={
        "EFFECTS": str(tmp_path / "effects"), "TASK_HEARTBEAT_S": "0.5",
        "TASK_LEASE_S": "3.0"}, extra_args=("--grace", "1"))
    try:
        cluster.start()
        yield cluster
    finally:
        cluster.stop()


async def test_a_rolling_restart_ends_every_task_completed_or_saying_why(
        rolling: Cluster, tmp_path: Path) -> None:
    rng = random.Random(25)
    async with httpx.AsyncClient(timeout=20) as http:
        fleet = Fleet([Balanced(rolling.url, http)], rng)
        for n in range(8):
            await fleet.create("batch" if n % 3 == 2 else "relay", f"W{n}", rng.randint(30, 45),
                               rng.randint(1, 10), 0.1)
        await fleet.create("batch", "W8", 100, 1, 0.1)  # waits for its answer: stopped mid-way
        following = asyncio.ensure_future(fleet.follow(timeout=120, hold=frozenset({"W8"})))
        for replica in rolling.replicas:
            await asyncio.to_thread(replica.stop)  # SIGTERM: a drain, then the exit
            assert replica.proc is not None and replica.proc.returncode is not None
            await asyncio.to_thread(replica.start)
        await following
    check_paths(fleet.tasks)
    runs = check_effects(tmp_path / "effects", fleet.tasks)
    handed = 0
    for task in fleet.tasks:
        last = task.last
        assert last is not None
        if task.tool == "relay":
            assert last.status == "completed", (task.tag, [s.status for s in task.seen])
            handed += len(runs[task.tag]) - 1
        else:
            assert last.status == "completed" or (
                last.status == "failed" and "shut down before it finished" in (
                    last.message or "")), (task.tag, last)
    assert handed >= 1, "no task was running when its replica stopped"
    stopped = fleet.tasks[-1].last
    assert stopped is not None and stopped.status == "failed", stopped
    assert "grace period of 1 s ran out" in (stopped.message or "")
    log = rolling.output()
    assert "Traceback" not in log, log
