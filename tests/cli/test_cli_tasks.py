"""`mcpkit call` on a tool the server runs as a task, and `mcpkit task get|wait|cancel|answer`,
as a user runs them: real `mcpkit` processes against a real server with the Tasks runtime
(tests/helpers/client/task_server.py), over HTTP so a task outlives the command that started it, and
over stdio behind the schema-checking relay for a whole call in one command."""

from __future__ import annotations

import json
import re
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from cli_run import ROOT, checked, environ, mcpkit
from helpers import HELPERS
from helpers.transports.http_peer import ServerProcess

TASK_SERVER = str(HELPERS / "client" / "task_server.py")


@pytest.fixture(scope="module")
def url() -> Iterator[str]:
    server = ServerProcess.start(TASK_SERVER)
    yield server.url
    server.stop()


def detach(tmp_path: Path, url: str, *call: str) -> str:
    done = mcpkit(tmp_path, "call", url, *call, "--detach")
    assert done.returncode == 0, done.stderr
    task_id = done.stdout.strip()
    assert task_id and "mcpkit task wait" in done.stderr
    return task_id


def state(tmp_path: Path, url: str, task_id: str) -> dict[str, object]:
    got = mcpkit(tmp_path, "task", "get", url, task_id, "--json")
    assert got.returncode == 0, got.stderr
    return json.loads(got.stdout)  # type: ignore[no-any-return]


def parked(tmp_path: Path, url: str, task_id: str) -> dict[str, object]:
    for _ in range(100):  # bounded: the task asks 0.1 s after it starts
        now = state(tmp_path, url, task_id)
        if now["status"] == "input_required":
            return now
    raise AssertionError(f"task {task_id} never asked: {now}")


def test_a_call_that_becomes_a_task_shows_its_status_and_result(tmp_path: Path) -> None:
    done = mcpkit(tmp_path, "call", checked(TASK_SERVER), "slow", "seconds=0.4")
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "slept 0.4"
    lines = [line for line in done.stderr.splitlines() if line.startswith("task ")]
    assert lines and "working" in lines[0] and lines[-1].endswith("completed")
    assert any("sleeping" in line for line in lines)


def test_detach_then_wait_for_the_result(tmp_path: Path, url: str) -> None:
    task_id = detach(tmp_path, url, "slow", "seconds=0.3")
    waited = mcpkit(tmp_path, "task", "wait", url, task_id, "--json")
    assert waited.returncode == 0, waited.stderr
    assert json.loads(waited.stdout)["content"][0]["text"] == "slept 0.3"
    assert state(tmp_path, url, task_id)["status"] == "completed"


def test_a_question_mid_task_is_answered_with_field_pairs(tmp_path: Path, url: str) -> None:
    task_id = detach(tmp_path, url, "confirm")
    asked = parked(tmp_path, url, task_id)
    assert list(asked["inputRequests"]) == ["confirm"]  # type: ignore[call-overload]
    shown = mcpkit(tmp_path, "task", "get", url, task_id)
    assert "asks confirm" in shown.stdout and "Go on?" in shown.stdout
    answered = mcpkit(tmp_path, "task", "answer", url, task_id, "ok=true")
    assert answered.returncode == 0, answered.stderr
    assert "answered confirm" in answered.stdout
    waited = mcpkit(tmp_path, "task", "wait", url, task_id)
    assert waited.returncode == 0 and waited.stdout.strip() == "confirmed=True"


def test_a_question_mid_task_is_answered_with_json(tmp_path: Path, url: str) -> None:
    task_id = detach(tmp_path, url, "confirm")
    parked(tmp_path, url, task_id)
    responses = json.dumps({"confirm": {"action": "accept", "content": {"ok": False}}})
    answered = mcpkit(tmp_path, "task", "answer", url, task_id, responses, "--json")
    assert answered.returncode == 0, answered.stderr
    assert json.loads(answered.stdout) == {"taskId": task_id, "answered": ["confirm"]}
    waited = mcpkit(tmp_path, "task", "wait", url, task_id)
    assert waited.stdout.strip() == "confirmed=False"


def test_bad_answers_are_refused_before_anything_is_sent(tmp_path: Path, url: str) -> None:
    task_id = detach(tmp_path, url, "confirm")
    parked(tmp_path, url, task_id)
    for bad, says in (("ok=perhaps", "ok"), ("{not json", "not JSON"), ("plain", "FIELD=VALUE")):
        refused = mcpkit(tmp_path, "task", "answer", url, task_id, bad)
        assert refused.returncode == 2 and says in refused.stderr, refused.stderr
    assert state(tmp_path, url, task_id)["status"] == "input_required"
    mcpkit(tmp_path, "task", "cancel", url, task_id)


def test_a_cancelled_task_ends_the_wait_with_status_1(tmp_path: Path, url: str) -> None:
    task_id = detach(tmp_path, url, "slow", "seconds=60")
    cancelled = mcpkit(tmp_path, "task", "cancel", url, task_id)
    assert cancelled.returncode == 0 and task_id in cancelled.stdout
    waited = mcpkit(tmp_path, "task", "wait", url, task_id)
    assert waited.returncode == 1 and "was cancelled" in waited.stderr


def test_an_unknown_task_is_the_servers_error(tmp_path: Path, url: str) -> None:
    got = mcpkit(tmp_path, "task", "get", url, "no-such-task-0123456789ab")
    assert got.returncode == 1 and "-32602" in got.stderr


def test_ctrl_c_without_a_terminal_leaves_the_task_running(tmp_path: Path, url: str) -> None:
    proc = subprocess.Popen([sys.executable, "-m", "mcpkit", "call", url, "slow", "seconds=60"],
                            stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, cwd=ROOT, env=environ(tmp_path))
    assert proc.stderr is not None
    first = ""
    for line in proc.stderr:  # the first status line: the task exists
        if line.startswith("task "):
            first = line
            break
    proc.send_signal(signal.SIGINT)
    _, err = proc.communicate(timeout=30)
    assert proc.returncode == 130, err
    task_id = first.split()[1]
    assert f"task {task_id} is still running" in err
    assert f"mcpkit task wait {url} {task_id}" in err
    assert "Traceback" not in err and "never awaited" not in err  # the stream closed cleanly
    assert state(tmp_path, url, task_id)["status"] == "working"  # left running
    mcpkit(tmp_path, "task", "cancel", url, task_id)


def read_until(fd: int, wanted: str, seen: str = "", limit: float = 30.0) -> str:
    """What the terminal shows, read from its master side until `wanted` appears."""
    import os
    import select

    deadline = time.monotonic() + limit
    while wanted not in seen:
        left = deadline - time.monotonic()
        assert left > 0, f"never showed {wanted!r}: {seen!r}"
        ready, _, _ = select.select([fd], [], [], left)
        if ready:
            try:
                chunk = os.read(fd, 4096)
            except OSError:  # the process closed its side
                break
            seen += chunk.decode(errors="replace")
    return seen


def test_ctrl_c_at_a_terminal_asks_and_can_cancel(tmp_path: Path, url: str) -> None:
    import os
    import pty

    master, slave = pty.openpty()
    proc = subprocess.Popen([sys.executable, "-m", "mcpkit", "call", url, "slow", "seconds=60"],
                            stdin=slave, stdout=subprocess.PIPE, stderr=slave, text=True,
                            cwd=ROOT, env=environ(tmp_path))
    os.close(slave)
    try:
        shown = read_until(master, "sleeping (")  # the live line, drawn on the terminal
        assert "\r\x1b[2K" in shown and "[" in shown  # redrawn in place, with a bar
        proc.send_signal(signal.SIGINT)
        shown = read_until(master, "(l)eave it running? [l] ", shown)
        task_id = shown.split("task ", 1)[1].split()[0]
        os.write(master, b"c\n")
        shown = read_until(master, "asked the server to cancel", shown)
        assert proc.wait(timeout=30) == 130
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
        os.close(master)
    for _ in range(100):  # cooperative: the server settles it soon after
        if state(tmp_path, url, task_id)["status"] == "cancelled":
            break
    assert state(tmp_path, url, task_id)["status"] == "cancelled"


# -- ids that start with '-' -------------------------------------------------------------------

def test_task_ids_never_look_like_an_option() -> None:
    from mcpkit.ext.tasks.runtime import new_task_id

    ids = {new_task_id() for _ in range(2000)}  # one in 64 started with '-' in base64url
    assert len(ids) == 2000
    assert all(re.fullmatch(r"[0-9a-f]{48}", task_id) for task_id in ids)


@pytest.fixture(scope="module")
def dash_url() -> Iterator[str]:
    server = ServerProcess.start(str(ROOT / "tests" / "cli" / "dash_id_server.py"))
    yield server.url
    server.stop()


def test_every_task_command_takes_an_id_that_starts_with_a_dash(
    tmp_path: Path, dash_url: str
) -> None:
    done = mcpkit(tmp_path, "call", dash_url, "confirm", "--detach")
    assert done.returncode == 0, done.stderr
    task_id = done.stdout.strip()
    assert task_id.startswith("-SZ6")
    # The resume hint is a command that works as printed.
    assert f"resume with: mcpkit task wait {dash_url} -- {task_id}" in done.stderr
    asked = parked(tmp_path, dash_url, task_id)
    assert asked["taskId"] == task_id
    shown = mcpkit(tmp_path, "task", "get", "--json", dash_url, task_id)  # options first
    assert shown.returncode == 0 and json.loads(shown.stdout)["taskId"] == task_id, shown.stderr
    answered = mcpkit(tmp_path, "task", "answer", dash_url, task_id, "ok=true")
    assert answered.returncode == 0, answered.stderr
    waited = mcpkit(tmp_path, "task", "wait", dash_url, "--timeout=30", "--", task_id)
    assert waited.returncode == 0 and waited.stdout.strip() == "confirmed=True", waited.stderr
    # A header option and an id that starts with its letter stay apart.
    other = detach(tmp_path, dash_url, "slow", "seconds=60")
    cancelled = mcpkit(tmp_path, "task", "cancel", dash_url, other, "-H", "X-Test: 1")
    assert cancelled.returncode == 0 and other in cancelled.stdout, cancelled.stderr
