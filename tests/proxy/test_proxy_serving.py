"""Serving a proxy as a user does, with real processes: `mcpkit proxy` over stdio (a host's
way) and over HTTP in front of an HTTP upstream of either era, `proxy.asgi()` under uvicorn
(whose lifespan starts and stops the proxy and its upstream), an upstream process killed under
the proxy, and the command line's refusals, each one line with its exit status."""

from __future__ import annotations

import asyncio
import os
import re
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from helpers.client.schema_tap import SchemaTap, TappedConnector
from helpers.proxy.proxied import answer_form
from helpers.proxy.proxy_command import ROOT, UPSTREAM_SERVER, ProxyProcess, python_upstream
from helpers.services import free_port
from helpers.transports.http_peer import ServerProcess

from mcpkit import Client, ClientOptions, InMemory, Server, StdioServer
from mcpkit.errors import InternalError
from mcpkit.transports.http_client.transport import HTTPConnector

WAIT_S = 30.0
HERE = Path(__file__).resolve().parent


def mcpkit(*args: str, timeout: float = 120, stdin: Any = subprocess.DEVNULL
           ) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "mcpkit", *args], cwd=ROOT, stdin=stdin,
                          capture_output=True, text=True, timeout=timeout)


def test_mcpkit_proxy_serves_stdio_for_a_host_to_start() -> None:
    proxy = f"{sys.executable} -m mcpkit proxy '{python_upstream()}' --era legacy"
    done = mcpkit("call", proxy, "greet", "--answer", "name=Ada", "--answer", "loud=false")
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip().splitlines()[-1] == "Hello, Ada!"
    listed = mcpkit("tools", proxy)
    assert listed.returncode == 0, listed.stderr
    assert listed.stdout.startswith("The proxied server 3.1.4 · modern 2026-07-28")


@pytest.fixture(scope="module")
def http_upstream() -> Iterator[ServerProcess]:
    server = ServerProcess.start(UPSTREAM_SERVER)
    yield server
    server.stop()


@pytest.mark.parametrize("era", ["auto", "legacy"])
async def test_an_http_upstream_of_either_era_is_served_over_http(
        http_upstream: ServerProcess, era: str) -> None:
    with ProxyProcess(http_upstream.url, "--era", era) as proxy:
        for client_era in ("modern", "legacy"):
            tap = SchemaTap()
            async with Client(TappedConnector(HTTPConnector(proxy.url), tap),
                              options=ClientOptions(era=client_era),  # type: ignore[arg-type]
                              elicit=answer_form) as client:
                assert client.era == client_era
                assert (await client.call_tool("add", {"a": 1, "b": 2})).structured == {"sum": 3}
                assert (await client.call_tool("greet")).text == "HELLO, ADA!"
            tap.assert_clean()


def _children(pid: int) -> set[int]:
    found: set[int] = set()
    for task in Path(f"/proc/{pid}/task").iterdir():
        text = (task / "children").read_text().split()
        found |= {int(p) for p in text}
    return found


def _gone(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return True
    status = Path(f"/proc/{pid}/status")
    return status.exists() and "zombie" in status.read_text()


async def test_the_asgi_lifespan_starts_the_proxy_and_stops_its_upstream() -> None:
    port = free_port()
    proc = subprocess.Popen(
        [sys.executable, "-m", "uvicorn", "helpers.proxy.asgi_proxy:app", "--host", "127.0.0.1", "--port",
         str(port), "--lifespan", "on"], cwd=HERE, stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
        env={**os.environ, "PYTHONPATH": os.pathsep.join([str(HERE), str(ROOT / "tests"),
                                                          os.environ.get("PYTHONPATH", "")])})
    try:
        assert proc.stderr is not None
        deadline = time.monotonic() + WAIT_S
        for raw in proc.stderr:
            if b"Application startup complete" in raw:
                break
            assert time.monotonic() < deadline, "uvicorn did not start the application"
        upstream = _children(proc.pid)
        assert upstream, "the lifespan started no upstream process"
        async with Client(HTTPConnector(f"http://127.0.0.1:{port}/mcp")) as client:
            assert "greet" in {t.name for t in await client.list_tools()}
        proc.send_signal(signal.SIGTERM)
        rest = proc.stderr.read()  # to the end: uvicorn re-raises SIGTERM once it shut down
        assert proc.wait(WAIT_S) in (0, -signal.SIGTERM)
        assert b"Application shutdown complete" in rest, rest  # the lifespan's shutdown ran
        async with asyncio.timeout(WAIT_S):
            while not all(_gone(pid) for pid in upstream):
                await asyncio.sleep(0.05)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()


async def test_a_killed_upstream_fails_the_call_in_flight_and_is_started_again() -> None:
    proxy = Server.proxy(StdioServer(python_upstream(), stderr="capture"))
    async with proxy, Client(InMemory(proxy)) as client:
        transport: Any = proxy.upstream.main.transport
        first = transport.proc.pid
        call = asyncio.ensure_future(client.call_tool("wait_here", {"tag": "k"}))
        async with asyncio.timeout(WAIT_S):
            while "wait_here k started" not in transport.stderr_text:
                await asyncio.sleep(0.02)
        os.kill(first, signal.SIGKILL)
        with pytest.raises(InternalError, match="the connection to the upstream server failed"):
            await call
        assert (await client.call_tool("echo", {"text": "again"})).text == "again"
        assert proxy.upstream.main.transport.proc.pid != first  # type: ignore[union-attr]
        async with asyncio.timeout(WAIT_S), client.listen(tools=True) as sub:
            # The lists are followed again on the new process: a change there is heard here.
            await client.call_tool("change", {"what": "tool-after"})
            async for note in sub:
                if note["method"] == "notifications/tools/list_changed":
                    break
        assert "tool_after" in {t.name for t in await client.list_tools(fresh=True)}


@pytest.mark.parametrize("args, status, says", [
    (["proxy", ""], 2, "SERVER is empty"),
    (["proxy", "127.0.0.1:9/mcp"], 2, "has no scheme"),
    (["proxy", "x", "--http", "nowhere:port"], 2, "expected [HOST:]PORT[/PATH]"),
    (["proxy", "x", "--asks", "mind-reading"], 2, "--asks"),
    (["proxy", "x", "--hold", "0"], 2, "--hold"),
    (["proxy", "http://127.0.0.1:9/mcp", "--timeout", "5"], 1, "cannot serve"),
])
def test_the_command_line_refuses_in_one_line(args: list[str], status: int, says: str) -> None:
    done = mcpkit(*args)
    assert done.returncode == status, done.stderr
    lines = done.stderr.strip().splitlines()
    assert says in lines[-1], done.stderr
    assert "Traceback" not in done.stderr


def test_a_taken_port_is_one_line_and_status_1() -> None:
    with ProxyProcess(python_upstream()) as first:
        done = mcpkit("proxy", python_upstream(), "--http", f"127.0.0.1:{first.port}")
    assert done.returncode == 1
    assert re.search(r"cannot serve on 127\.0\.0\.1:\d+: .*choose another port", done.stderr)
