"""`mcpkit run FILE --http ... --workers N`: uvicorn's worker processes sharing a PostgreSQL or
Redis store serve one legacy session whichever worker each new connection reaches; without a
shared store the option is refused in one line; SIGTERM stops the parent and its workers."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import httpx
import pytest
from helpers.services import free_port
from helpers.transports.http_peer import Peer
from nginx import REPLICA_SERVER, ROOT


def children(pid: int) -> list[int]:
    out = subprocess.run(["ps", "-o", "pid=", "--ppid", str(pid)], capture_output=True,
                         text=True, check=False).stdout
    return [int(p) for p in out.split()]


def stop(proc: subprocess.Popen[bytes], log: Any) -> None:
    """SIGTERM to `mcpkit run --workers` (its workers stop with it), a kill if it lingers."""
    proc.terminate()
    try:
        proc.wait(30)
    finally:
        if proc.poll() is None:
            proc.kill()
        log.close()


def workers_of(pid: int) -> list[int]:
    found = []
    for child in children(pid):
        try:
            cmd = Path(f"/proc/{child}/cmdline").read_bytes()
        except OSError:
            continue
        if b"spawn_main" in cmd:
            found.append(child)
    return found


@pytest.mark.parametrize("store", [None, "memory", "sqlite:///state.db"])
def test_workers_without_a_shared_store_are_refused(store: str | None, tmp_path: Path) -> None:
    env = {k: v for k, v in os.environ.items() if k != "MCPKIT_STORE"}
    args = [sys.executable, "-m", "mcpkit", "run", REPLICA_SERVER, "--http",
            f"127.0.0.1:{free_port()}", "--workers", "3", *(["--store", store] if store else [])]
    done = subprocess.run(args, capture_output=True, text=True, cwd=tmp_path, env=env,
                          timeout=60, check=False)
    assert done.returncode == 2, done.stderr
    line = done.stderr.strip()
    assert line.startswith("mcpkit run: --workers 3 needs a store every worker shares"), line
    assert "postgresql://" in line and "redis://" in line and "\n" not in line


@pytest.mark.parametrize("engine", ["postgres", "redis"])
async def test_workers_share_one_legacy_session(engine: str, request: pytest.FixtureRequest,
                                                tmp_path: Path) -> None:
    url: str = request.getfixturevalue(f"{engine}_url")
    port = free_port()
    env = {**{k: v for k, v in os.environ.items() if k != "MCPKIT_STATE_KEYS"},
           "HOME": str(tmp_path), "XDG_DATA_HOME": str(tmp_path / "data"), "REPLICA": "W"}
    log = open(tmp_path / "run.log", "wb")  # noqa: SIM115 -- closed below
    proc = subprocess.Popen(
        [sys.executable, "-m", "mcpkit", "run", REPLICA_SERVER, "--http",
         f"127.0.0.1:{port}/mcp", "--store", url, "--workers", "2"],
        cwd=ROOT, stdout=log, stderr=log, stdin=subprocess.DEVNULL, env=env)
    try:
        deadline = time.monotonic() + 60
        ready = False
        while time.monotonic() < deadline and not ready:
            assert proc.poll() is None, (tmp_path / "run.log").read_text()
            try:
                ready = httpx.get(f"http://127.0.0.1:{port}/readyz", timeout=2).status_code == 200
            except httpx.HTTPError:
                time.sleep(0.1)
        assert ready, (tmp_path / "run.log").read_text()
        deadline = time.monotonic() + 30
        while len(workers_of(proc.pid)) < 2 and time.monotonic() < deadline:
            time.sleep(0.1)
        assert len(workers_of(proc.pid)) == 2
        opener_http = httpx.AsyncClient(timeout=20)
        async with opener_http:
            opener = Peer(f"http://127.0.0.1:{port}/mcp", opener_http)
            await opener.initialize()
        for n in range(8):  # a new connection each time: either worker may take it
            async with httpx.AsyncClient(timeout=20) as http:
                peer = Peer(opener.url, http)
                peer.session, peer.revision, peer.ids = opener.session, opener.revision, 10 + n
                reply = await peer.post(peer.request_message("tools/call", {
                    "name": "whoami", "arguments": {}}, with_meta=False))
                assert reply.status == 200, reply.body
                assert reply.message["result"]["content"][0]["text"] == "W"
    finally:
        workers = workers_of(proc.pid)
        stop(proc, log)
    assert proc.returncode == 0, (tmp_path / "run.log").read_text()
    for pid in workers:  # the workers went with the parent
        assert not Path(f"/proc/{pid}").exists() or b"spawn_main" not in Path(
            f"/proc/{pid}/cmdline").read_bytes()


def test_workers_without_http_are_refused(tmp_path: Path) -> None:
    done = subprocess.run([sys.executable, "-m", "mcpkit", "run", REPLICA_SERVER, "--workers",
                           "2"], capture_output=True, text=True, cwd=tmp_path, timeout=60,
                          stdin=subprocess.DEVNULL, check=False)
    assert done.returncode == 2, done.stderr
    assert done.stderr.strip().startswith("mcpkit run: --workers runs HTTP worker processes")
