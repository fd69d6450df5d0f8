"""`mcpkit run --http`: the example server for both eras at one URL, the command line, and the
pieces of the endpoint that need no process (keep-alives, the session store)."""

from __future__ import annotations

import asyncio
import socket
import subprocess
import sys
from collections.abc import AsyncIterator
from pathlib import Path

import httpx
import pytest
import uvicorn
from helpers.transports.http_peer import ROOT, Peer, ServerProcess

from mcpkit import Server
from mcpkit.legacy.session import LegacyState
from mcpkit.transports.http_server.running import parse_address
from mcpkit.transports.legacy.sessions import MemorySessionStore

CALENDAR = "examples/calendar/server.py"


async def test_the_calendar_answers_modern_and_legacy_clients_at_one_url(
    tmp_path: Path
) -> None:
    server = ServerProcess.start(CALENDAR, address="127.0.0.1:0",
                                 env={"CALENDAR_DB": str(tmp_path / "calendar.sqlite3")})
    try:
        assert server.url.endswith("/mcp")
        async with httpx.AsyncClient(timeout=15) as modern_http, \
                httpx.AsyncClient(timeout=15) as legacy_http:
            modern = Peer(server.url, modern_http)
            found = await modern.post(modern.request_message("server/discover"))
            assert found.status == 200
            assert found.message["result"]["_meta"]["io.modelcontextprotocol/serverInfo"][
                "name"] == "calendar"
            created = await modern.post(modern.request_message("tools/call", {
                "name": "create_event",
                "arguments": {"title": "Dentist", "startsAt": "2030-01-02T09:00:00Z"}}))
            assert created.message["result"]["structuredContent"]["title"] == "Dentist"

            legacy = Peer(server.url, legacy_http)
            info = await legacy.initialize()
            assert info["serverInfo"]["name"] == "calendar"
            tools = await legacy.post(legacy.request_message("tools/list", with_meta=False),
                                      mirror=False)
            assert "create_event" in [t["name"] for t in tools.message["result"]["tools"]]
    finally:
        server.stop()


@pytest.mark.parametrize(
    ("address", "parsed"),
    [
        ("8000", ("127.0.0.1", 8000, "/mcp")),
        (":9000", ("127.0.0.1", 9000, "/mcp")),
        ("127.0.0.1:0", ("127.0.0.1", 0, "/mcp")),
        ("0.0.0.0:8080/api/mcp", ("0.0.0.0", 8080, "/api/mcp")),
        ("[::1]:8000/", ("::1", 8000, "/")),
        ("localhost:1/x", ("localhost", 1, "/x")),
    ],
)
def test_addresses_are_parsed(address: str, parsed: tuple[str, int, str]) -> None:
    assert parse_address(address) == parsed


@pytest.mark.parametrize("address", ["", "host", "host:", "1.2.3.4:99999", "host:port/x"])
def test_bad_addresses_are_refused_with_the_expected_form(address: str) -> None:
    with pytest.raises(ValueError, match=r"\[HOST:\]PORT\[/PATH\]"):
        parse_address(address)


def test_the_command_line_reports_a_bad_address_in_one_line() -> None:
    done = subprocess.run(
        [sys.executable, "-m", "mcpkit", "run", CALENDAR, "--http", "nowhere:port"],
        cwd=ROOT, capture_output=True, text=True, timeout=60,
    )
    assert done.returncode == 2
    assert done.stderr.strip().count("\n") == 0
    assert "expected [HOST:]PORT[/PATH]" in done.stderr


def test_an_occupied_port_fails_the_command() -> None:
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        done = subprocess.run(
            [sys.executable, "-m", "mcpkit", "run", CALENDAR, "--http", f"127.0.0.1:{port}"],
            cwd=ROOT, capture_output=True, text=True, timeout=60,
        )
    assert done.returncode != 0
    assert "address already in use" in done.stderr.lower()


# -- in-process pieces --------------------------------------------------------------------------

@pytest.fixture
async def quiet_listen_site() -> AsyncIterator[str]:
    server = Server("quiet", "1.0.0")

    @server.tool()
    async def noop() -> str:
        """Nothing."""
        return ""

    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    sock.listen()
    runner = uvicorn.Server(uvicorn.Config(server.asgi(keepalive_s=0.05), log_level="error",
                                           lifespan="off"))
    task = asyncio.create_task(runner.serve(sockets=[sock]))
    yield f"http://127.0.0.1:{sock.getsockname()[1]}/mcp"
    server.broker.close()
    runner.should_exit = True
    await asyncio.wait_for(task, 10)
    sock.close()


async def test_a_quiet_stream_gets_comment_keepalives(quiet_listen_site: str) -> None:
    async with httpx.AsyncClient(timeout=15) as client:
        peer = Peer(quiet_listen_site, client)
        message = peer.request_message("subscriptions/listen",
                                       {"notifications": {"toolsListChanged": True}})
        async with client.stream("POST", peer.url, content=httpx.Request(
                "POST", peer.url, json=message).content, headers={
                "Accept": "application/json, text/event-stream",
                "Content-Type": "application/json", "MCP-Protocol-Version": "2026-07-28",
                "Mcp-Method": "subscriptions/listen"}) as response:
            received = b""
            chunks = response.aiter_raw()
            while received.count(b":\n\n") < 2:
                received += await asyncio.wait_for(anext(chunks), 5)
    first, _, rest = received.partition(b"\n\n")
    assert first.startswith(b"data: ") and b"acknowledged" in first
    assert rest.startswith(b":\n\n")


def state(version: str = "2025-11-25") -> LegacyState:
    return LegacyState(version, {}, {"name": "c", "version": "1"})


async def test_the_memory_store_expires_idle_sessions() -> None:
    now = [0.0]
    store = MemorySessionStore(idle_s=10, clock=lambda: now[0])
    await store.create("a", state())
    now[0] = 9.0
    assert await store.load("a") is not None  # a request keeps it alive
    now[0] = 18.0
    assert await store.load("a") is not None
    now[0] = 28.5
    assert await store.load("a") is None


async def test_the_memory_store_evicts_the_least_recently_used_when_full() -> None:
    now = [0.0]
    store = MemorySessionStore(max_sessions=2, clock=lambda: now[0])
    for name in ("a", "b"):
        now[0] += 1
        await store.create(name, state())
    now[0] += 1
    await store.load("a")
    await store.create("c", state())
    assert len(store) == 2
    assert await store.load("b") is None
    assert await store.load("a") is not None and await store.load("c") is not None
    saved = state("2025-06-18")
    await store.save("c", saved)
    assert await store.load("c") is saved
    assert await store.delete("c") and not await store.delete("c")




def test_serving_http_without_state_keys_prints_no_warning_and_reads_no_file(
    caplog: pytest.LogCaptureFixture, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.delenv("MCPKIT_STATE_KEYS", raising=False)
    monkeypatch.setenv("MCPKIT_DATA_DIR", str(tmp_path / "data"))
    with caplog.at_level("WARNING"):
        Server("no-keys").asgi()
    assert caplog.text == ""
    assert not (tmp_path / "data").exists()  # the ring is read when a state is first sealed
