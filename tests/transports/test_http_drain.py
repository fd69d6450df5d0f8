"""SIGTERM is a drain: a real `mcpkit run --http --grace 1.5` process is told to stop while it
serves requests of every kind and runs tasks of both kinds, then started again on the same
task store.

- a request that finishes within the grace gets its result;
- one still running when the grace ends gets a retryable answer: HTTP 503 with Retry-After
  and a JSON-RPC error (-32603, data.unavailable "stopping"), never a bare 500; on an SSE
  stream the same error is its last event, and a 2025-11-25 session's request gets it on its
  stream (legacy errors travel with 200);
- the listener takes no new connection meanwhile;
- a task that finishes within the grace completes; a non-resumable one still running ends
  `failed`, its message saying the server shut down before it finished; a resumable one is
  handed back at once and resumed by the next process.

Every server message is schema-checked (`Peer`).
"""

from __future__ import annotations

import asyncio
import contextlib
import signal
import time
from pathlib import Path
from typing import Any

import httpx
import pytest
from helpers import HELPERS
from helpers.transports.http_peer import Peer, ServerProcess

SERVER = str(HELPERS / "transports" / "servers" / "drain_server.py")
GRACE = "1.5"
TASKS = "io.modelcontextprotocol/tasks"
CAPS = {"io.modelcontextprotocol/clientCapabilities": {"extensions": {TASKS: {}}}}
JSON_ONLY = {"Accept": "application/json"}


async def until(predicate: Any, what: str, timeout: float = 20.0) -> None:
    async with asyncio.timeout(timeout):
        while not predicate():
            await asyncio.sleep(0.02)
    assert predicate(), what


def marked(marks: Path, *lines: str) -> bool:
    seen = marks.read_text().splitlines() if marks.exists() else []
    return all(any(s.startswith(line) for s in seen) for line in lines)


async def start_task(peer: Peer, tool: str, seconds: float, tag: str) -> str:
    created = await peer.post(peer.request_message("tools/call", {
        "name": tool, "arguments": {"seconds": seconds, "tag": tag}}, **CAPS))
    result = created.message["result"]
    assert result["resultType"] == "task", result
    task_id: str = result["taskId"]
    return task_id


async def get_task(peer: Peer, task_id: str) -> dict[str, Any]:
    reply = await peer.post(peer.request_message("tasks/get", {"taskId": task_id}, **CAPS),
                            {"Mcp-Name": task_id})
    assert reply.status == 200, reply.body
    found: dict[str, Any] = reply.message["result"]
    return found


@pytest.fixture
def env(tmp_path: Path) -> dict[str, str]:
    return {"TASKS_DB": str(tmp_path / "tasks.sqlite3"), "MARKS": str(tmp_path / "marks"),
            "MCPKIT_DATA_DIR": str(tmp_path / "data"), "MCPKIT_STORE": ""}


async def test_sigterm_finishes_what_it_can_and_answers_the_rest_retryably(
        env: dict[str, str], tmp_path: Path) -> None:
    marks = tmp_path / "marks"
    first = ServerProcess.start(SERVER, "--grace", GRACE, env=env)
    try:
        async with httpx.AsyncClient(timeout=30) as http:
            peer = Peer(first.url, http)
            stuck = await start_task(peer, "batch", 600, "B1")
            handed = await start_task(peer, "relay", 600, "R1")
            legacy = Peer(first.url, http)
            await legacy.initialize()
            await until(lambda: marked(marks, "batch B1", "relay R1"), "the tasks run")

            def hold(on: Peer, seconds: float, tag: str, **meta: Any) -> dict[str, Any]:
                return on.request_message("tools/call", {
                    "name": "hold", "arguments": {"seconds": seconds, "tag": tag}},
                    with_meta=on is peer, **meta)

            holding = hold(peer, 600, "json")
            held = asyncio.ensure_future(peer.post(holding, JSON_ONLY))
            quick = asyncio.ensure_future(peer.post(hold(peer, 0.8, "quick"), JSON_ONLY))
            streamed = asyncio.ensure_future(peer.post(hold(
                peer, 600, "stream", progressToken="p1")))
            on_session = asyncio.ensure_future(legacy.post(hold(legacy, 600, "legacy"),
                                                           mirror=False))
            finishing = await start_task(peer, "batch", 0.8, "B2")
            await until(lambda: marked(marks, "hold json", "hold quick", "hold stream",
                                       "hold legacy", "batch B2"), "the requests run")
            first.proc.send_signal(signal.SIGTERM)

            refused = (await held)
            assert refused.status == 503 and refused.headers["retry-after"] == "1"
            error = refused.message["error"]
            assert refused.message["id"] == holding["id"]
            assert error["code"] == -32603 and error["data"] == {
                "unavailable": "stopping", "retryAfterS": 1}
            assert f"within its grace period of {GRACE} s" in error["message"]
            assert "send it again" in error["message"]
            assert (await quick).message["result"]["content"][0]["text"] == "held quick"
            stream = await streamed
            assert stream.media == "text/event-stream"
            assert stream.messages[0]["method"] == "notifications/progress"
            assert stream.messages[-1]["error"]["data"]["unavailable"] == "stopping"
            session_reply = await on_session
            assert session_reply.status == 200  # a 2025-11-25 error travels with 200
            assert session_reply.messages[-1]["error"]["code"] == -32603
            with pytest.raises(httpx.ConnectError):  # the listener is closed
                await http.post(first.url, json={})
        deadline = time.monotonic() + 30
        while first.proc.poll() is None and time.monotonic() < deadline:
            await asyncio.sleep(0.05)
        assert first.proc.returncode in (0, -signal.SIGTERM), first.output()
        assert "Traceback" not in first.output(), first.output()
    finally:
        first.stop()

    again = ServerProcess.start(SERVER, "--grace", GRACE, env=env)
    try:
        async with httpx.AsyncClient(timeout=30) as http:
            peer = Peer(again.url, http)
            failed = await get_task(peer, stuck)
            assert failed["status"] == "failed", failed
            assert "shut down before it finished" in failed["statusMessage"]
            assert "grace period of 1.5 s" in failed["statusMessage"]
            assert "not resumable" in failed["statusMessage"]
            assert failed["error"]["code"] == -32603
            assert failed["error"]["data"] == {"stopped": "shutdown"}
            done = await get_task(peer, finishing)
            assert done["status"] == "completed", done
            assert done["result"]["content"][0]["text"] == "batch B2 done"
            await until(lambda: marked(marks, f"relay R1 {again.proc.pid}"),
                        "the handed-back task runs in the new process")
            resumed = await get_task(peer, handed)
            assert resumed["status"] == "working", resumed
            assert resumed["statusMessage"] == \
                "resumed after the server process running it stopped"
    finally:
        again.stop()
    with contextlib.suppress(FileNotFoundError):
        assert marks.read_text().count("batch B1") == 1  # a failed task is never run again
