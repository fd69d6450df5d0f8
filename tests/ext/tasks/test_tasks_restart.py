"""A real server process over real HTTP: killed with SIGKILL while a task runs, then started
again on the same SQLite file; and the Mcp-Name rule for the task methods (TASK-15)."""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from helpers.services import free_port
from helpers.wire import MODERN, check_server_message

from mcpkit.ext.tasks.wire import check_create_task_result, check_get_task_result
from mcpkit.protocol.extensions import TASKS
from mcpkit.types.constants import CLIENT_CAPABILITIES_KEY, PROTOCOL_VERSION_KEY

SERVER = Path(__file__).with_name("restart_server.py")
META = {PROTOCOL_VERSION_KEY: "2026-07-28", CLIENT_CAPABILITIES_KEY: {"extensions": {TASKS: {}}},
        "io.modelcontextprotocol/clientInfo": {"name": "restart-test", "version": "1"}}


class Process:
    """The server subprocess: started, waited for, killed."""

    def __init__(self, db: Path) -> None:
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}/mcp"
        self.proc = subprocess.Popen([sys.executable, str(SERVER), str(self.port), str(db)],
                                     stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        for _ in range(300):
            try:
                socket.create_connection(("127.0.0.1", self.port), timeout=0.2).close()
                return
            except OSError:
                if self.proc.poll() is not None:
                    raise AssertionError(self.proc.stderr.read().decode()) from None  # type: ignore[union-attr]
                time.sleep(0.05)
        raise AssertionError("the server did not start listening")

    def kill(self) -> None:
        if self.proc.poll() is None:
            os.kill(self.proc.pid, signal.SIGKILL)
        self.proc.wait(10)
        if self.proc.stderr is not None:
            self.proc.stderr.close()


@pytest.fixture
def processes(tmp_path: Path) -> Iterator[list[Process]]:
    started: list[Process] = []
    yield started
    for p in started:
        p.kill()


def post(url: str, method: str, params: dict[str, Any], name: str | None = None,
         **headers: str) -> tuple[int, dict[str, Any]]:
    body = {"jsonrpc": "2.0", "id": 1, "method": method, "params": {**params, "_meta": META}}
    sent = {"content-type": "application/json", "accept": "application/json, text/event-stream",
            "mcp-protocol-version": "2026-07-28", "mcp-method": method, **headers}
    if name is not None:
        sent.setdefault("mcp-name", name)
    reply = httpx.post(url, json=body, headers=sent, timeout=10)
    text = reply.text
    if reply.headers.get("content-type", "").startswith("text/event-stream"):
        text = [line[5:] for line in text.splitlines() if line.startswith("data:")][-1]
    message = json.loads(text)
    check_server_message(MODERN, message, method)
    return reply.status_code, message


def get_task(url: str, task_id: str) -> dict[str, Any]:
    status, reply = post(url, "tasks/get", {"taskId": task_id}, task_id)
    assert status == 200 and "result" in reply, reply
    check_get_task_result(reply["result"])
    return reply["result"]  # type: ignore[no-any-return]


def test_a_killed_process_leaves_failed_tasks_and_kept_results(tmp_path: Path,
                                                              processes: list[Process]) -> None:
    db = tmp_path / "tasks.sqlite3"
    first = Process(db)
    processes.append(first)
    _, done = post(first.url, "tools/call", {"name": "quick", "arguments": {"word": "kept"}}, "quick")
    check_create_task_result(done["result"])
    finished = done["result"]["taskId"]
    for _ in range(200):
        if get_task(first.url, finished)["status"] == "completed":
            break
        time.sleep(0.02)
    _, running = post(first.url, "tools/call", {"name": "sleepy", "arguments": {"seconds": 600}},
                      "sleepy")
    check_create_task_result(running["result"])
    interrupted = running["result"]["taskId"]
    assert get_task(first.url, interrupted)["status"] == "working"
    first.kill()

    second = Process(db)
    processes.append(second)
    kept = get_task(second.url, finished)
    assert kept["status"] == "completed" and kept["result"]["content"][0]["text"] == "done: kept"
    for _ in range(300):  # its lease (1 s) lapses; the sweeper or this get fails it
        got = get_task(second.url, interrupted)
        if got["status"] != "working":
            break
        time.sleep(0.05)
    assert got["status"] == "failed", got
    assert "stopped before it finished" in got["statusMessage"]
    assert got["error"]["code"] == -32603


def test_mcp_name_must_be_the_task_id(tmp_path: Path, processes: list[Process]) -> None:
    server = Process(tmp_path / "tasks.sqlite3")
    processes.append(server)
    _, created = post(server.url, "tools/call", {"name": "quick", "arguments": {"word": "x"}},
                      "quick")
    task_id = created["result"]["taskId"]
    assert get_task(server.url, task_id)["taskId"] == task_id
    for method in ("tasks/get", "tasks/cancel"):
        status, reply = post(server.url, method, {"taskId": task_id}, "another-task-id")
        assert status == 400 and reply["error"]["code"] == -32020, (method, reply)
    status, reply = post(server.url, "tasks/update", {"taskId": task_id, "inputResponses": {}},
                         "another-task-id")
    assert status == 400 and reply["error"]["code"] == -32020
