"""The calendar with no configuration at all, in fresh processes: one asks when an event starts,
another completes it with the answer and the same requestState, a third reads the week; a
replayed retry is refused; listeners hear of events whoever created them; a client that cannot
be asked gets -32021. Over stdio and HTTP, every server message checked against the schema."""

from __future__ import annotations

import asyncio
import json
import stat
import sys
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import httpx
import pytest
from helpers.transports.http_peer import Peer, ServerProcess
from helpers.transports.stdio_peer import ROOT, StdioPeer
from helpers.wire import LEGACY, MODERN, check_server_message, meta

CALENDAR = "examples/calendar/server.py"
WEEK = "calendar://week"
ELICITATION = {"io.modelcontextprotocol/clientCapabilities": {"elicitation": {}}}


@pytest.fixture
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """What a new user has: a home folder, and no mcpkit variable set at all."""
    for name in ("MCPKIT_STATE_KEYS", "MCPKIT_DATA_DIR", "XDG_DATA_HOME"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    monkeypatch.setenv("CALENDAR_DB", str(tmp_path / "calendar.sqlite3"))
    return tmp_path / "home"


def tomorrow() -> str:
    return (datetime.now(UTC) + timedelta(days=1)).replace(microsecond=0).isoformat()


def create_event(title: str, *, caps: dict[str, Any] | None = None, **extra: Any
                 ) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {
        "name": "create_event", "arguments": {"title": title},
        "_meta": meta(**(ELICITATION if caps is None else caps)), **extra}}


READ_WEEK = {"jsonrpc": "2.0", "id": 1, "method": "resources/read",
             "params": {"uri": WEEK, "_meta": meta()}}


def week_of(reply: dict[str, Any]) -> list[dict[str, Any]]:
    events: list[dict[str, Any]] = json.loads(reply["result"]["contents"][0]["text"])
    return events


Exchange = Callable[[dict[str, Any]], Awaitable[dict[str, Any]]]


async def over_stdio(message: dict[str, Any]) -> dict[str, Any]:
    """One request to a fresh `mcpkit run` process, which then exits cleanly."""
    peer = await StdioPeer.start(CALENDAR)
    try:
        peer.send(message)
        reply = await peer.read(timeout=30)
        code, stderr = await peer.close()
        assert code == 0, stderr
        assert b"state keys" not in stderr  # nothing to warn about: the ring was kept
        return reply
    finally:
        await peer.kill()


async def over_http(message: dict[str, Any]) -> dict[str, Any]:
    """One request to a fresh `mcpkit run --http 127.0.0.1:0` process, stopped afterwards."""
    process = await asyncio.to_thread(ServerProcess.start, CALENDAR)
    try:
        async with httpx.AsyncClient(timeout=30) as client:
            reply = await Peer(process.url, client).post(message)
        assert "state keys" not in process.output()
        return reply.message
    finally:
        await asyncio.to_thread(process.stop)


@pytest.mark.parametrize("exchange", [over_stdio, over_http], ids=["stdio", "http"])
async def test_three_fresh_processes_ask_complete_and_read_with_no_configuration(
    home: Path, exchange: Exchange
) -> None:
    asked = (await exchange(create_event("Dentist")))["result"]
    assert asked["resultType"] == "input_required"
    assert asked["inputRequests"]["startsAt"]["method"] == "elicitation/create"
    retry = {"requestState": asked["requestState"],
             "inputResponses": {"startsAt": {"action": "accept",
                                             "content": {"startsAt": tomorrow()}}}}
    done = (await exchange(create_event("Dentist", **retry)))["result"]
    event = done["structuredContent"]
    assert event["title"] == "Dentist" and "isError" not in done
    assert [e["id"] for e in week_of(await exchange(READ_WEEK))] == [event["id"]]
    # The same retry again, to a fourth process: the answer counted once.
    replayed = await exchange(create_event("Dentist", **retry))
    assert replayed["error"]["code"] == -32602
    assert "already used" in replayed["error"]["message"]
    assert [e["id"] for e in week_of(await exchange(READ_WEEK))] == [event["id"]]
    ring = home / ".local" / "share" / "mcpkit" / "state-keys"
    assert stat.S_IMODE(ring.stat().st_mode) == 0o600
    assert len([line for line in ring.read_text().splitlines() if not line.startswith("#")]) == 1


@pytest.mark.parametrize("exchange", [over_stdio, over_http], ids=["stdio", "http"])
async def test_a_client_that_cannot_be_asked_gets_32021_and_no_event(
    home: Path, exchange: Exchange
) -> None:
    refused = await exchange(create_event("Dentist", caps={}))
    error = refused["error"]
    assert error["code"] == -32021
    assert set(error["data"]["requiredCapabilities"]) == {"elicitation"}
    assert "create_event" in error["message"]
    assert week_of(await exchange(READ_WEEK)) == []


# -- listening -----------------------------------------------------------------------------------


@asynccontextmanager
async def listening(server: str, era: str, count: int = 1
                    ) -> AsyncIterator[asyncio.subprocess.Process]:
    """`mcpkit listen SERVER --uri calendar://week --count COUNT`, running and acknowledged."""
    proc = await asyncio.create_subprocess_exec(
        sys.executable, "-m", "mcpkit", "listen", server, "--uri", WEEK, "--count", str(count),
        "--json", "--era", era, cwd=ROOT, stdin=asyncio.subprocess.DEVNULL,
        stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE,
    )
    try:
        assert proc.stderr is not None
        said = b""
        while b"listening for" not in said:
            line = await asyncio.wait_for(proc.stderr.readline(), 30)
            assert line, f"mcpkit listen ended before listening: {said.decode()}"
            said += line
        yield proc
    finally:
        if proc.returncode is None:
            proc.kill()
        await proc.wait()


async def heard(proc: asyncio.subprocess.Process, revision: str) -> dict[str, Any]:
    """The one notification the listener prints (--count 1), checked against the schema."""
    out, err = await asyncio.wait_for(proc.communicate(), 30)
    assert proc.returncode == 0, err.decode()
    note: dict[str, Any] = json.loads(out)
    check_server_message(revision, {"jsonrpc": "2.0", **note}, None)
    return note


def updated(note: dict[str, Any]) -> bool:
    return note["method"] == "notifications/resources/updated" and note["params"]["uri"] == WEEK


ERAS = [("modern", MODERN), ("legacy", LEGACY)]


@pytest.mark.parametrize(("era", "revision"), ERAS, ids=[e for e, _ in ERAS])
async def test_a_stdio_listener_hears_of_an_event_another_process_created(
    home: Path, era: str, revision: str
) -> None:
    async with listening(CALENDAR, era) as listener:
        done = await over_stdio(create_event("Gym", arguments={"title": "Gym",
                                                                "startsAt": tomorrow()}))
        assert done["result"]["structuredContent"]["title"] == "Gym"
        assert updated(await heard(listener, revision))


@pytest.mark.parametrize(("era", "revision"), ERAS, ids=[e for e, _ in ERAS])
async def test_an_http_listener_hears_of_an_event_another_client_created(
    home: Path, era: str, revision: str
) -> None:
    process = await asyncio.to_thread(ServerProcess.start, CALENDAR)
    try:
        async with listening(process.url, era) as listener, httpx.AsyncClient(timeout=30) as c:
            reply = await Peer(process.url, c).post(create_event(
                "Gym", arguments={"title": "Gym", "startsAt": tomorrow()}))
            assert reply.message["result"]["structuredContent"]["title"] == "Gym"
            assert updated(await heard(listener, revision))
    finally:
        await asyncio.to_thread(process.stop)



async def test_changes_coalesced_into_one_update_are_counted_so_listen_count_ends(
    home: Path,
) -> None:
    # Two events another process writes at once reach the listener's calendar process in one
    # look at the database: one resources/updated, saying it stands for two changes, so
    # `mcpkit listen --count 2` ends instead of waiting for a second notification.
    import sqlite3

    # (Modern only: the acknowledgement comes once the server watches. A legacy stdio session
    # starts watching after it answers initialize, so a write at once could come before.)
    async with listening(CALENDAR, "modern", count=2) as listener:
        with sqlite3.connect(home.parent / "calendar.sqlite3") as db:
            db.executemany("INSERT INTO events (id, title, starts_at) VALUES (?, ?, ?)",
                           [("e1", "Gym", tomorrow()), ("e2", "Swim", tomorrow())])
        note = await heard(listener, MODERN)
    assert updated(note)
    assert note["params"]["_meta"]["dev.mcpkit/changes"] == 2
