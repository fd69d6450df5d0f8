"""The framework layer in real processes: the lifespan entered once per process and exited on
shutdown, dependencies, middleware and a mounted server, over stdio (a subprocess), Streamable
HTTP (`mcpkit run --http`, uvicorn) and `--workers 2` (a rate limit that holds across the
workers through PostgreSQL and Redis), in both eras. Every message is schema-checked."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

import httpx
import pytest
from helpers.client.schema_tap import SchemaTap
from helpers.services import free_port
from helpers.transports.http_peer import ServerProcess, checked_transport
from test_workers import stop, workers_of

from mcpkit import Client
from mcpkit.client import ClientOptions
from mcpkit.errors import RateLimitedError
from mcpkit.transports.stdio.client import StdioServer

pytestmark = pytest.mark.asyncio

SERVER = str(Path(__file__).with_name("framework_server.py"))
ROOT = Path(__file__).resolve().parents[2]
ERAS = ["modern", "legacy"]


def lines(path: Path) -> list[str]:
    return path.read_text().splitlines() if path.exists() else []


def wait_for(predicate: object, what: str, timeout: float = 30.0) -> None:
    deadline = time.monotonic() + timeout
    while not predicate():  # type: ignore[operator]
        assert time.monotonic() < deadline, what
        time.sleep(0.05)


@pytest.mark.parametrize("era", ERAS)
async def test_over_stdio_the_lifespan_dependencies_middleware_and_a_mount_serve(
        era: str, tmp_path: Path) -> None:
    events = tmp_path / "events"
    tap = SchemaTap()
    connector = StdioServer([sys.executable, "-m", "mcpkit", "run", SERVER],
                            env={**os.environ, "FRAMEWORK_EVENTS": str(events),
                                 "MCPKIT_STORE": "memory"}, tap=tap)
    async with Client(connector, options=ClientOptions(era=era)) as client:
        who = (await client.call_tool("whoami", {})).text
        pid = int(who.split()[0])
        assert who == f"{pid} {era} [tagged]"
        assert (await client.call_tool("billing_pay", {"amount": 2})).text == "paid 2 [tagged]"
        for _ in range(3):
            assert (await client.call_tool("limited", {})).text == "ok [tagged]"
        with pytest.raises(RateLimitedError) as limited:
            await client.call_tool("limited", {})
        assert limited.value.retry_after is not None and 0 < limited.value.retry_after <= 3600
        assert lines(events) == [f"enter {pid}"]
    wait_for(lambda: lines(events) == [f"enter {pid}", f"exit {pid}"],
             f"the lifespan was not exited: {lines(events)}")
    assert not tap.problems


@pytest.mark.parametrize("era", ERAS)
async def test_over_http_the_lifespan_is_held_from_startup_to_shutdown(
        era: str, tmp_path: Path) -> None:
    events = tmp_path / "events"
    server = ServerProcess.start(SERVER, env={"FRAMEWORK_EVENTS": str(events),
                                              "MCPKIT_STORE": "memory"})
    try:
        wait_for(lambda: len(lines(events)) == 1, "the lifespan was not entered at startup")
        transport = checked_transport(server.url, check_server=True)
        async with Client(transport, options=ClientOptions(era=era)) as client:
            who = (await client.call_tool("whoami", {})).text
            assert who == f"{server.proc.pid} {era} [tagged]"
            assert (await client.call_tool("billing_pay", {"amount": 5})).text == (
                "paid 5 [tagged]")
        assert lines(events) == [f"enter {server.proc.pid}"]
    finally:
        server.stop()  # SIGTERM: uvicorn shuts down (and then re-raises the signal)
    assert lines(events) == [f"enter {server.proc.pid}", f"exit {server.proc.pid}"]


async def test_a_lifespan_that_fails_at_startup_stops_the_http_server_with_its_reason(
        tmp_path: Path) -> None:
    target = tmp_path / "failing.py"
    target.write_text(
        "from contextlib import asynccontextmanager\n"
        "from mcpkit import Server\n"
        "@asynccontextmanager\n"
        "async def lifespan(server):\n"
        "    raise ConnectionError('the database is down')\n"
        "    yield\n"
        "server = Server('failing', lifespan=lifespan)\n")
    done = subprocess.run([sys.executable, "-m", "mcpkit", "run", str(target), "--http",
                           f"127.0.0.1:{free_port()}"], capture_output=True, text=True,
                          timeout=60, stdin=subprocess.DEVNULL, check=False)
    assert done.returncode != 0
    assert "failing: its lifespan failed to start: ConnectionError: the database is down" in (
        done.stderr)


@pytest.mark.parametrize("engine", ["postgres", "redis"])
async def test_two_workers_each_hold_the_lifespan_and_share_one_rate_limit(
        engine: str, request: pytest.FixtureRequest, tmp_path: Path) -> None:
    url: str = request.getfixturevalue(f"{engine}_url")
    port = free_port()
    events = tmp_path / "events"
    limit = 6
    env = {**{k: v for k, v in os.environ.items() if k != "MCPKIT_STATE_KEYS"},
           "HOME": str(tmp_path), "XDG_DATA_HOME": str(tmp_path / "data"),
           "FRAMEWORK_EVENTS": str(events), "FRAMEWORK_LIMIT": str(limit)}
    log = open(tmp_path / "run.log", "wb")  # noqa: SIM115 -- closed below
    proc = subprocess.Popen(
        [sys.executable, "-m", "mcpkit", "run", SERVER, "--http", f"127.0.0.1:{port}/mcp",
         "--store", url, "--workers", "2"],
        cwd=ROOT, stdout=log, stderr=log, stdin=subprocess.DEVNULL, env=env)
    try:
        wait_for(lambda: len(workers_of(proc.pid)) == 2 and len(lines(events)) == 2,
                 f"two workers did not start: {lines(events)}", 90)
        workers = {int(line.split()[1]) for line in lines(events)}
        assert workers == set(workers_of(proc.pid))
        answered: set[int] = set()
        refused = None
        calls = 0
        for n in range(40):  # a new connection each time: either worker may take it
            era = ERAS[n % 2]
            async with Client(checked_transport(f"http://127.0.0.1:{port}/mcp",
                                                check_server=True),
                              options=ClientOptions(era=era)) as client:
                answered.add(int((await client.call_tool("whoami", {})).text.split()[0]))
                if calls < limit:
                    assert (await client.call_tool("limited", {})).text == "ok [tagged]"
                    calls += 1
                elif refused is None:
                    with pytest.raises(RateLimitedError) as caught:
                        await client.call_tool("limited", {})
                    refused = caught.value
            if refused is not None and answered == workers:
                break
        assert answered == workers, "both workers should have answered"
        assert refused is not None and refused.retry_after is not None
        # Over HTTP a modern caller also gets 429 with Retry-After.
        reply = httpx.post(f"http://127.0.0.1:{port}/mcp", timeout=20, headers={
            "accept": "application/json, text/event-stream", "content-type": "application/json",
            "mcp-protocol-version": "2026-07-28", "mcp-method": "tools/call",
            "mcp-name": "limited"}, json={"jsonrpc": "2.0", "id": 1, "method": "tools/call",
                                          "params": {"name": "limited", "arguments": {}, "_meta": {
                                              "io.modelcontextprotocol/protocolVersion":
                                                  "2026-07-28",
                                              "io.modelcontextprotocol/clientCapabilities": {}}}})
        assert reply.status_code == 429, reply.text
        assert reply.json()["error"]["code"] == -32602
        assert reply.json()["error"]["data"]["rateLimit"] == {"limit": limit, "perS": 3600.0}
        assert 1 <= int(reply.headers["retry-after"]) <= 3600
    finally:
        stop(proc, log)
    exits = {line for line in lines(events) if line.startswith("exit")}
    assert exits == {f"exit {pid}" for pid in workers}, lines(events)
