"""`mcpkit run` over stdio, as a real subprocess."""

from __future__ import annotations

import asyncio
import subprocess
import sys
from collections.abc import AsyncIterator
from datetime import UTC, datetime
from pathlib import Path

import pytest
from helpers import HELPERS
from helpers.transports.stdio_peer import ROOT, StdioPeer, meta

QUICKSTART = "examples/quickstart/server.py"
NOISY = str(HELPERS / "transports" / "servers" / "noisy.py")


@pytest.fixture
async def quickstart() -> AsyncIterator[StdioPeer]:
    peer = await StdioPeer.start(QUICKSTART)
    yield peer
    await peer.kill()


async def test_discover_lists_both_eras_with_caching_hints(quickstart: StdioPeer) -> None:
    result = (await quickstart.request("server/discover"))["result"]
    assert result["resultType"] == "complete"
    assert {"2026-07-28", "2025-11-25"} <= set(result["supportedVersions"])
    assert result["_meta"]["io.modelcontextprotocol/serverInfo"]["name"] == "quickstart"
    assert isinstance(result["ttlMs"], int) and result["cacheScope"] in ("public", "private")


async def test_missing_meta_and_unknown_version_are_rejected(quickstart: StdioPeer) -> None:
    assert (await quickstart.request("tools/list", with_meta=False))["error"]["code"] == -32602
    quickstart.send({"jsonrpc": "2.0", "id": "v", "method": "tools/list", "params": {
        "_meta": meta(**{"io.modelcontextprotocol/protocolVersion": "2099-01-01"})}})
    reply = await quickstart.read()
    assert reply["error"]["code"] == -32022
    assert "2026-07-28" in reply["error"]["data"]["supported"]


async def test_add_returns_structured_sum(quickstart: StdioPeer) -> None:
    reply = await quickstart.request("tools/call", {"name": "add", "arguments": {"a": 2, "b": 3}})
    assert reply["result"]["structuredContent"] == {"sum": 5}


async def test_legacy_initialize_then_tools_call() -> None:
    peer = await StdioPeer.start(QUICKSTART)
    try:
        init = await peer.request("initialize", {
            "protocolVersion": "2025-11-25", "capabilities": {},
            "clientInfo": {"name": "old", "version": "1"}}, with_meta=False)
        assert init["result"]["protocolVersion"] == "2025-11-25"
        peer.send({"jsonrpc": "2.0", "method": "notifications/initialized"})
        reply = await peer.request("tools/call", {"name": "add", "arguments": {"a": 1, "b": 1}},
                                   with_meta=False)
        assert reply["result"] == {"content": [{"type": "text", "text": '{"sum":2}'}],
                                   "structuredContent": {"sum": 2}}
        code, _ = await peer.close()
        assert code == 0
    finally:
        await peer.kill()


async def test_output_of_user_code_never_reaches_stdout() -> None:
    peer = await StdioPeer.start(NOISY)
    try:
        reply = await peer.request("tools/call", {"name": "shout", "arguments": {"text": "hi"}})
        assert reply["result"]["content"][0]["text"] == "HI"
        code, stderr = await peer.close()
        assert code == 0
        for text in (b"printed at import", b"raw write to fd 1 at import", b"logged to sys.stdout",
                     b"printed in a tool", b"raw write in a tool", b"a warning in a tool"):
            assert text in stderr
    finally:
        await peer.kill()


async def test_requests_run_concurrently_and_cancel() -> None:
    peer = await StdioPeer.start(NOISY)
    try:
        peer.send({"jsonrpc": "2.0", "id": "slow", "method": "tools/call",
                   "params": {"name": "wait", "arguments": {"seconds": 60}, "_meta": meta()}})
        reply = await peer.request("tools/call", {"name": "wait", "arguments": {"seconds": 0}})
        assert reply["result"]["content"][0]["text"] == "waited 0.0"
        peer.send({"jsonrpc": "2.0", "method": "notifications/cancelled",
                   "params": {"requestId": "slow"}})
        # The very next message is the answer to the next request, and none follows it:
        # nothing is ever sent for "slow" (read() sees every message, request() would skip
        # a reply with another id).
        peer.ids += 1
        peer.send({"jsonrpc": "2.0", "id": peer.ids, "method": "server/discover",
                   "params": {"_meta": meta()}})
        reply = await peer.read()
        assert reply["id"] == peer.ids and reply["result"]["resultType"] == "complete"
        assert "2026-07-28" in reply["result"]["supportedVersions"]
        assert peer.proc.stdin is not None
        peer.proc.stdin.close()
        assert await peer.rest() == []
        code, _ = await peer.close()
        assert code == 0
    finally:
        await peer.kill()


async def test_malformed_and_oversized_lines_get_errors_and_serving_goes_on() -> None:
    peer = await StdioPeer.start(QUICKSTART)
    try:
        peer.send_raw(b"this is not json\n")
        assert (await peer.read())["error"]["code"] == -32700
        peer.send_raw(b'{"jsonrpc":"2.0","id":1,"method":"x","params":' + b"[" * 10 + b"\n")
        assert (await peer.read())["error"]["code"] == -32700
        big = b'{"jsonrpc":"2.0","id":"big","method":"tools/call","params":{"x":"' + b"a" * (5 * 1024 * 1024) + b'"}}\n'
        peer.send_raw(big)
        err = await peer.read()
        assert err["error"]["code"] == -32600 and "limit" in err["error"]["message"]
        assert (await peer.request("server/discover"))["result"]["resultType"] == "complete"
    finally:
        await peer.kill()


async def test_eof_on_stdin_exits_cleanly(quickstart: StdioPeer) -> None:
    assert (await quickstart.request("server/discover"))["result"]["resultType"] == "complete"
    code, _ = await quickstart.close()
    assert code == 0


@pytest.mark.parametrize(
    ("target", "words"),
    [
        ("no/such/file.py", "file not found"),
        ("examples/quickstart/server.py:nothing", "no attribute 'nothing'"),
        ("examples/quickstart/server.py:Sum", "not an mcpkit Server"),
        ("no_such_module_anywhere", "no module named"),
    ],
)
def test_bad_targets_print_one_line_and_exit_2(target: str, words: str) -> None:
    proc = subprocess.run([sys.executable, "-m", "mcpkit", "run", target], cwd=ROOT,
                          capture_output=True, text=True, timeout=30, stdin=subprocess.DEVNULL)
    assert proc.returncode == 2
    assert proc.stdout == ""
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1 and words in lines[0]


def test_version_flag() -> None:
    proc = subprocess.run([sys.executable, "-m", "mcpkit", "--version"], capture_output=True,
                          text=True, timeout=30)
    assert proc.returncode == 0 and proc.stdout.startswith("mcpkit ")


async def test_two_calendar_processes_share_one_database(tmp_path: Path) -> None:
    env = {"CALENDAR_DB": str(tmp_path / "cal.sqlite3")}
    first = await StdioPeer.start("examples/calendar/server.py", env=env)
    try:
        created = await first.request("tools/call", {"name": "create_event", "arguments": {
            "title": "Dentist", "startsAt": datetime.now(UTC).isoformat()}})
        event = created["result"]["structuredContent"]
        assert event["title"] == "Dentist" and event["id"]
    finally:
        await first.close()
    second = await StdioPeer.start("examples/calendar/server.py", env=env)
    try:
        read = await second.request("resources/read", {"uri": "calendar://week"})
        contents = read["result"]["contents"][0]
        assert contents["mimeType"] == "application/json"
        assert '"Dentist"' in contents["text"] and event["id"] in contents["text"]
        assert (read["result"]["ttlMs"], read["result"]["cacheScope"]) == (60000, "private")
        prompt = await second.request("prompts/get", {"name": "prepare_week", "arguments": {}})
        assert prompt["result"]["messages"][0]["content"]["text"] == (
            "Read calendar://week and draft a plan. Focus: balance.")
    finally:
        await second.close()


async def test_stdio_server_start_is_bounded() -> None:
    # Not a timing assertion: just that a spawned server answers within a generous bound.
    peer = await StdioPeer.start(QUICKSTART)
    try:
        await asyncio.wait_for(peer.request("server/discover"), 30)
    finally:
        await peer.kill()
