"""Supervising a stdio server process: stderr, death, shutdown, and junk on stdout."""

from __future__ import annotations

import sys
import textwrap
from pathlib import Path

import pytest
from helpers.client.schema_tap import RAW_SERVER

from mcpkit.client import Client, ClientOptions
from mcpkit.errors import TransportError
from mcpkit.transports.stdio.client import StdioServer


def script(tmp_path: Path, body: str) -> list[str]:
    path = tmp_path / "server.py"
    path.write_text(textwrap.dedent(body))
    return [sys.executable, str(path)]


MODERN_ECHO = """
    import json, sys
    for line in sys.stdin:
        msg = json.loads(line)
        if "id" not in msg:
            continue
        result = {"resultType": "complete", "supportedVersions": ["2026-07-28"],
                  "capabilities": {"tools": {}}, "ttlMs": 0, "cacheScope": "public"}
        if msg["method"] == "tools/list":
            result = {"resultType": "complete", "tools": [], "ttlMs": 0, "cacheScope": "public"}
        print(json.dumps({"jsonrpc": "2.0", "id": msg["id"], "result": result}), flush=True)
"""


async def test_a_server_that_dies_fails_the_call_with_its_stderr_then_restarts(
    tmp_path: Path,
) -> None:
    argv = script(tmp_path, MODERN_ECHO.replace(
        'if msg["method"] == "tools/list":',
        'if msg["method"] == "tools/call":\n'
        '            sys.stderr.write("boom: out of cheese\\n"); sys.exit(7)\n'
        '        if msg["method"] == "tools/list":'))
    async with Client(StdioServer(argv, stderr="capture")) as client:
        with pytest.raises(TransportError, match=r"(?s)exited with status 7.*out of cheese"):
            await client.call_tool("anything")
        assert await client.list_tools() == [], "the next call starts the server again"


async def test_non_protocol_lines_on_stdout_are_ignored(tmp_path: Path) -> None:
    argv = script(tmp_path, MODERN_ECHO.replace(
        "        result = {", '        print("hello from a careless print", flush=True)\n'
        "        result = {", 1))
    async with Client(StdioServer(argv, stderr="discard")) as client:
        assert client.era == "modern"
        assert await client.list_tools() == []


async def test_a_server_that_ignores_stdin_eof_and_sigterm_is_killed(tmp_path: Path) -> None:
    argv = script(tmp_path, """
        import json, signal, sys, time
        signal.signal(signal.SIGTERM, signal.SIG_IGN)
        line = sys.stdin.readline()
        msg = json.loads(line)
        print(json.dumps({"jsonrpc": "2.0", "id": msg["id"], "result": {
            "resultType": "complete", "supportedVersions": ["2026-07-28"], "capabilities": {},
            "ttlMs": 0, "cacheScope": "public"}}), flush=True)
        while True:
            time.sleep(0.05)
    """)
    client = Client(StdioServer(argv, stderr="discard", shutdown_timeout=0.3))
    await client.connect()
    transport = client.transport
    await client.close()
    assert transport.proc.returncode is not None  # type: ignore[union-attr]


async def test_a_missing_program_is_reported_with_a_hint() -> None:
    client = Client(StdioServer("no-such-program-mcpkit --flag"))
    with pytest.raises(TransportError, match=r"could not start the server.*on PATH"):
        await client.connect()


async def test_a_command_line_string_is_split_like_a_shell(tmp_path: Path) -> None:
    spec = StdioServer(f'{sys.executable} "{RAW_SERVER}" modern')
    assert spec.argv == [sys.executable, RAW_SERVER, "modern"]
    assert spec.key == f"stdio:{sys.executable} {RAW_SERVER} modern"
    async with Client(spec, options=ClientOptions(era="modern")) as client:
        assert (await client.call_tool("plain"))["structuredContent"]["arguments"] is None


async def test_arguments_that_are_not_json_are_refused_by_name() -> None:
    async with Client(StdioServer([sys.executable, RAW_SERVER, "modern"]),
                      options=ClientOptions(era="modern")) as client:
        with pytest.raises(TypeError, match=r"tools/call: cannot be sent as JSON"):
            await client.call_tool("plain", {"n": {1, 2}})
        assert (await client.call_tool("plain", {"n": 1}))["structuredContent"]["arguments"] == {
            "n": 1}
