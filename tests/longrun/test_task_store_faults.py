"""The shared store stopped, or hung, for longer than a lease while tasks run, then back.

Two replicas (`mcpkit run` processes) share PostgreSQL or Redis; three tasks run on the first,
two resumable and one not, reporting progress and asking on the way. Then the store is
stopped (and started again on the same data) or hung (its processes SIGSTOPped, then
SIGCONTed) for 2.5 s, more than twice the 1 s lease. Meanwhile no replica can renew a lease
and none can take a task over; the replica running them stops their handlers before their
leases end, so when the store returns, the one process that claims each task runs it again
(or fails it, saying why) without a second run beside the first.

Afterwards, as in the kill tests: every acknowledged task is there, status paths are valid,
no answered key is asked again, runs never overlap, the resumable tasks complete, the other
completes or ends `failed` saying its process stopped.

Redis is run here with an append-only file synced at every write: a Redis without persistence
forgets everything when it restarts (docs/state.md), and nothing could then hold.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import random
import shutil
import signal
import socket
import subprocess
import time
from collections.abc import AsyncIterator, Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from helpers.services import free_port, postgres_bin
from helpers.store_urls import make_url
from helpers.task_fleet import Fleet, check_effects, check_paths, replicas_for

OUTAGE_S = 2.5


class DurableRedis:
    """A redis-server of this test's own, with an fsynced append-only file."""

    def __init__(self, folder: Path) -> None:
        self.folder = folder
        self.port = free_port()
        self.url = f"redis://127.0.0.1:{self.port}/0"
        self.proc: subprocess.Popen[bytes] | None = None

    def start(self) -> None:
        exe = shutil.which("redis-server")
        if exe is None:
            pytest.skip("redis-server not found: install redis-server")
        self.proc = subprocess.Popen(
            [exe, "--port", str(self.port), "--bind", "127.0.0.1", "--save", "",
             "--appendonly", "yes", "--appendfsync", "always", "--dir", str(self.folder)],
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        for _ in range(600):
            with contextlib.suppress(OSError), socket.create_connection(
                    ("127.0.0.1", self.port), 0.5):
                return
            assert self.proc.poll() is None, "redis-server exited"
            time.sleep(0.05)
        raise AssertionError("redis-server did not listen")

    def stop(self) -> None:
        if self.proc is not None:
            self.proc.terminate()
            self.proc.wait(10)
            self.proc = None

    def pids(self) -> list[int]:
        return [] if self.proc is None else [self.proc.pid]


def postgres_pids(service: Any) -> list[int]:
    """The postmaster of the test cluster and every process it started."""
    master = int((Path(service.data) / "postmaster.pid").read_text().split()[0])
    found = [master]
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            with contextlib.suppress(OSError):
                fields = (entry / "stat").read_text().rsplit(")", 1)[1].split()
                if int(fields[1]) == master:
                    found.append(int(entry.name))
    return found


@pytest.fixture(params=["postgresql", "redis"])
def engine(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[tuple[str, str, Any]]:
    """(name, URL, the server behind it: `stop()`, `start()`, `pids()`)."""
    if request.param == "redis":
        redis = DurableRedis(tmp_path)
        redis.start()
        try:
            yield "redis", redis.url, redis
        finally:
            redis.stop()
        return
    if postgres_bin("initdb") is None:
        pytest.skip("PostgreSQL not found")
    restartable = request.getfixturevalue("restartable")
    service = restartable.postgres
    url = make_url("postgresql", request, tmp_path)
    service.pids = lambda: postgres_pids(service)
    yield "postgresql", url, service


@pytest.fixture
async def fleet(engine: tuple[str, str, Any], tmp_path: Path) -> AsyncIterator[Fleet]:
    name, url, _ = engine
    replicas = replicas_for(name, 2, tmp_path, url, tmp_path / "effects")
    for replica in replicas:
        await replica.start()
    try:
        yield Fleet(replicas, random.Random(24))
    finally:
        for replica in replicas:
            await replica.close()


def paused(pids: list[int]) -> Callable[[], None]:
    for pid in pids:
        os.kill(pid, signal.SIGSTOP)

    def resume() -> None:
        for pid in pids:
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGCONT)
    return resume


@pytest.mark.parametrize("fault", ["stopped", "hung"])
async def test_a_store_gone_for_two_leases_loses_nothing_and_runs_nothing_twice(
        engine: tuple[str, str, Any], fleet: Fleet, fault: str, tmp_path: Path) -> None:
    _, _, server = engine
    runner = fleet.replicas[0]
    for n, tool in enumerate(("relay", "relay", "batch")):
        await fleet.create(tool, f"S{n}", 30, 6 + 4 * n, 0.1, on=runner)
    following = asyncio.ensure_future(fleet.follow(timeout=120))
    await asyncio.sleep(0.8)  # the tasks are under way (a fault's moment, not an assertion)
    if fault == "stopped":
        await asyncio.to_thread(server.stop)
        try:
            await asyncio.sleep(OUTAGE_S)
        finally:
            await asyncio.to_thread(server.start)
    else:
        resume = paused(server.pids())
        try:
            await asyncio.sleep(OUTAGE_S)
        finally:
            resume()
    await following
    check_paths(fleet.tasks)
    runs = check_effects(tmp_path / "effects", fleet.tasks)
    for task in fleet.tasks:
        last = task.last
        assert last is not None
        if task.tool == "relay":
            assert last.status == "completed", (task.tag, [s.status for s in task.seen])
            assert len(runs[task.tag]) >= 2, (task.tag, "its run outlived the lease")
        else:
            assert last.status == "completed" or (
                last.status == "failed" and "stopped before it finished" in (last.message or "")
            ), (task.tag, last)
