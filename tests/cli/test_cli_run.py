"""`mcpkit run` for development and for more than one process: a description in --help, a
taken port in one line, --dev showing an exception's text, --store sqlite: making a retry
single-use across processes, --reload serving the new code after a change."""

from __future__ import annotations

import asyncio
import socket
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import httpx
import pytest
from cli_run import HERE, ROOT, SERVER, environ, mcpkit
from helpers.services import free_port
from helpers.transports.http_peer import ServerProcess, checked_transport
from helpers.transports.stdio_peer import StdioPeer, meta
from helpers.wire import LEGACY, check_server_message

from mcpkit.client import Client, ClientOptions
from mcpkit.server.sealing import new_state_key


def test_run_help_describes_the_command(tmp_path: Path) -> None:
    done = mcpkit(tmp_path, "run", "--help")
    assert done.returncode == 0
    assert "Serve the Server object a Python file or module defines" in done.stdout
    for flag in ("--dev", "--store", "--reload"):
        assert flag in done.stdout


def test_a_taken_port_is_one_line_and_exit_1(tmp_path: Path) -> None:
    with socket.create_server(("127.0.0.1", 0)) as taken:
        port = taken.getsockname()[1]
        done = mcpkit(tmp_path, "run", SERVER, "--http", f"127.0.0.1:{port}")
    assert done.returncode == 1
    assert done.stderr.count("\n") == 1, done.stderr
    assert done.stderr.startswith(f"mcpkit run: cannot serve on 127.0.0.1:{port}: ")
    assert "in use" in done.stderr and "--http 127.0.0.1:PORT" in done.stderr


@pytest.mark.parametrize("value", ["redis:x", "postgres:db", "sqlite:", "sqlite://host/x",
                                   "disk", "mysql://db"])
def test_a_bad_store_is_one_line_naming_the_accepted_forms(tmp_path: Path, value: str) -> None:
    done = mcpkit(tmp_path, "run", SERVER, "--store", value)
    assert done.returncode == 2
    assert done.stderr.count("\n") == 1, done.stderr
    assert f"--store {value!r}" in done.stderr
    if value == "sqlite:":
        assert "name the file" in done.stderr
    elif value.startswith("sqlite://"):
        assert "has no host" in done.stderr
    else:
        assert "memory, sqlite:///PATH" in done.stderr and "postgresql://" in done.stderr


async def _called(url: str, tool: str, **arguments: Any) -> dict[str, Any]:
    async with Client(checked_transport(url, check_server=True),
                      options=ClientOptions(era="modern")) as client:
        return await client.call_tool(tool, arguments)


@pytest.mark.parametrize("dev", [False, True])
async def test_dev_shows_the_exception_s_type_and_message(dev: bool) -> None:
    server = await asyncio.to_thread(ServerProcess.start, SERVER, *(["--dev"] if dev else []))
    try:
        result = await _called(server.url, "crash")
        text = result["content"][0]["text"]
        assert result["isError"] is True
        assert ("RuntimeError: the secret reason is boom" in text) is dev
        assert server.url.startswith("http://127.0.0.1:")  # --dev opens no other address
        logged = server.output()
    finally:
        await asyncio.to_thread(server.stop)
    # --dev: the debug log goes to stderr
    assert ("DEBUG first_hour: about to crash on purpose" in logged) is dev


def _confirm(request_id: int, **extra: Any) -> dict[str, Any]:
    capable = {"io.modelcontextprotocol/clientCapabilities": {"elicitation": {}}}
    return {"jsonrpc": "2.0", "id": request_id, "method": "tools/call", "params": {
        "name": "confirm", "arguments": {"what": "deploy"}, "_meta": meta(**capable), **extra}}


async def _exchange(env: dict[str, str], message: dict[str, Any], *run: str) -> dict[str, Any]:
    """One request to a fresh `mcpkit run SERVER ...` process over stdio."""
    peer = await StdioPeer.start(SERVER, *run, env=env)
    try:
        peer.send(message)
        reply = await peer.read()
        code, stderr = await peer.close()
        assert code == 0, stderr
        return reply
    finally:
        await peer.kill()


@pytest.mark.parametrize("store", ["sqlite", "default", "memory"])
async def test_a_retry_is_single_use_across_processes_unless_the_store_is_memory(
    tmp_path: Path, store: str
) -> None:
    """Three processes, one after the other: the one that asks, the one that redeems, and one
    the same retry is replayed to. With `--store sqlite:...`, and with no store at all (the
    records then live beside the key ring in the user's data folder), the replay is refused;
    `--store memory` opts out, and each process remembers only its own."""
    done_file = tmp_path / "done.txt"
    env = {**environ(tmp_path), "MCPKIT_STATE_KEYS": new_state_key(),
           "FIRST_HOUR_DONE": str(done_file), "MCPKIT_DATA_DIR": str(tmp_path / "data")}
    run = {"sqlite": ("--store", f"sqlite:{tmp_path / 'state.db'}"), "default": (),
           "memory": ("--store", "memory")}[store]
    asked = (await _exchange(env, _confirm(1), *run))["result"]
    assert asked["resultType"] == "input_required"
    retry = {"inputResponses": {"ok": {"action": "accept", "content": {"ok": True}}},
             "requestState": asked["requestState"]}
    first = await _exchange(env, _confirm(2, **retry), *run)
    assert first["result"]["content"][0]["text"] == "did deploy"
    replayed = await _exchange(env, _confirm(3, **retry), *run)
    if store != "memory":  # the third process sees the second one's record in the file
        assert replayed["error"]["code"] == -32602, replayed
        assert "already used" in replayed["error"]["message"]
        assert done_file.read_text() == "deploy\n"
    else:  # each process remembers only its own retries: the replay is done again
        assert done_file.read_text() == "deploy\ndeploy\n"
    assert ((tmp_path / "data" / "single-use.sqlite3").exists()) is (store == "default")


async def test_reload_serves_the_new_code_after_the_file_changes(tmp_path: Path) -> None:
    source = tmp_path / "growing.py"
    source.write_text((HERE / "reload_server.py").read_text())
    port = free_port()
    log = tmp_path / "reload.log"
    with open(log, "wb") as out:
        proc = subprocess.Popen(
            [sys.executable, "-m", "mcpkit", "run", str(source), "--http", f"127.0.0.1:{port}",
             "--reload"], cwd=ROOT, stdout=out, stderr=out, stdin=subprocess.DEVNULL,
            env=environ(tmp_path))
    url = f"http://127.0.0.1:{port}/mcp"
    try:
        assert await _tool_names(url, log) == ["first"]
        text = source.read_text().replace("# more tools here",
                                          "@server.tool()\ndef second() -> str:\n"
                                          "    return 'two'\n")
        source.write_text(text)
        names: list[str] = []
        for _ in range(200):  # at most about 20 s
            names = await _tool_names(url, log)
            if "second" in names:
                break
            await asyncio.sleep(0.1)
        assert names == ["first", "second"], log.read_text()
        assert "growing.py changed; restarting" in log.read_text()
    finally:
        proc.terminate()
        try:
            proc.wait(15)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


async def _tool_names(url: str, log: Path) -> list[str]:
    """The served tools' names; [] while no server answers (it is restarting), for at most
    about 20 s before the test fails."""
    for _ in range(200):
        try:
            async with Client(checked_transport(url, check_server=True),
                              options=ClientOptions(era="modern", timeout=10)) as client:
                return sorted(t["name"] for t in await client.list_tools(fresh=True))
        except Exception:
            await asyncio.sleep(0.1)
    raise AssertionError(f"no server answered at {url}: {log.read_text()}")



@pytest.mark.parametrize("value", ["0", "-5", "soon", "inf"])
def test_a_bad_session_idle_is_one_line(tmp_path: Path, value: str) -> None:
    done = mcpkit(tmp_path, "run", SERVER, "--http", "127.0.0.1:0", f"--session-idle={value}")
    assert done.returncode == 2
    assert "--session-idle: expected seconds above zero" in done.stderr
    assert "Traceback" not in done.stderr


def test_session_idle_needs_http(tmp_path: Path) -> None:
    done = mcpkit(tmp_path, "run", SERVER, "--session-idle", "60")
    assert done.returncode == 2 and done.stderr.count("\n") == 1, done.stderr
    assert "add --http" in done.stderr


def test_session_idle_ends_a_legacy_session_left_unused() -> None:
    server = ServerProcess.start(SERVER, "--session-idle", "0.5")
    try:
        accept = {"accept": "application/json, text/event-stream",
                  "content-type": "application/json"}
        with httpx.Client(timeout=30) as http:
            opened = http.post(server.url, headers=accept, json={
                "jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
                    "protocolVersion": "2025-11-25", "capabilities": {},
                    "clientInfo": {"name": "idle-test", "version": "1"}}})
            assert opened.status_code == 200, opened.text
            check_server_message(LEGACY, opened.json(), "initialize")
            session = {**accept, "mcp-session-id": opened.headers["mcp-session-id"],
                       "mcp-protocol-version": "2025-11-25"}
            ping = {"jsonrpc": "2.0", "id": 2, "method": "ping"}
            answered = http.post(server.url, headers=session, json=ping)
            assert answered.status_code == 200
            check_server_message(LEGACY, answered.json(), "ping")
            time.sleep(2)  # unused for well over its idle time (load only makes it later)
            assert http.post(server.url, headers=session, json=ping).status_code == 404
    finally:
        server.stop()
