"""`mcpkit discover|tools|call|read|prompt|listen` as a person runs them: real processes."""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from helpers.at_terminal import at_terminal
from helpers.client.schema_tap import ROOT
from helpers.transports.http_peer import ServerProcess

QUICKSTART = "examples/quickstart/server.py"
CALENDAR = "examples/calendar/server.py"
CLI_SERVER = str(Path(__file__).resolve().parent / "cli_server.py")
WHEN = "2031-03-04T09:30:00+00:00"


def mcpkit(*args: str, stdin: str = "", timeout: float = 60) -> subprocess.CompletedProcess[str]:
    """`mcpkit ARGS`; with `stdin`, its lines typed at a terminal (tests/helpers/at_terminal.py)."""
    argv = [sys.executable, "-m", "mcpkit", *args]
    if stdin:
        return at_terminal(argv, stdin.splitlines(), cwd=ROOT, env=dict(os.environ),
                           timeout=timeout)
    return subprocess.run(argv, input=stdin, capture_output=True, text=True, cwd=ROOT,
                          timeout=timeout, env=dict(os.environ))


@pytest.fixture(scope="module")
def calendar_url(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    db = tmp_path_factory.mktemp("cli") / "calendar.sqlite3"
    old = os.environ.get("CALENDAR_DB")
    os.environ["CALENDAR_DB"] = str(db)
    try:
        server = ServerProcess.start(CALENDAR)
    finally:
        if old is None:
            os.environ.pop("CALENDAR_DB", None)
        else:
            os.environ["CALENDAR_DB"] = old
    yield server.url
    server.stop()


def test_call_prints_the_sum_and_names_the_era() -> None:
    done = mcpkit("call", QUICKSTART, "add", "a=2", "b=3")
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout) == {"sum": 5}
    assert "# quickstart 1.0.0 · modern 2026-07-28" in done.stderr


def test_call_with_json_prints_the_result_object() -> None:
    done = mcpkit("call", QUICKSTART, "add", "a=2", "b=3", "--json")
    assert done.returncode == 0, done.stderr
    result = json.loads(done.stdout)
    assert result["resultType"] == "complete"
    assert result["structuredContent"] == {"sum": 5}
    assert result["content"] == [{"type": "text", "text": '{"sum":5}'}]


def test_call_takes_one_json_object_too() -> None:
    done = mcpkit("call", QUICKSTART, "echo", '{"text": "a=b c"}')
    assert done.returncode == 0, done.stderr
    assert done.stdout == "a=b c\n"


def test_tools_and_discover_show_era_and_version_in_both_eras() -> None:
    done = mcpkit("tools", QUICKSTART, "--era", "legacy")
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert lines[0] == "quickstart 1.0.0 · legacy 2025-11-25 · 2 tools"
    assert "  add(a: integer, b: integer)" in lines
    about = mcpkit("discover", QUICKSTART)
    assert about.stdout.splitlines()[:2] == ["quickstart 1.0.0 · modern 2026-07-28",
                                             "supported versions: 2026-07-28, 2025-11-25"]
    assert "instructions: Echo text and add numbers." in about.stdout


def test_the_calendar_over_http_by_url(calendar_url: str) -> None:
    done = mcpkit("call", calendar_url, "create_event", "title=Dentist", f"startsAt={WHEN}",
                  "--json")
    assert done.returncode == 0, done.stderr
    event = json.loads(done.stdout)["structuredContent"]
    assert (event["title"], event["startsAt"]) == ("Dentist", WHEN)
    human = mcpkit("call", calendar_url, "create_event", "title=Gym", f"startsAt={WHEN}")
    assert json.loads(human.stdout)["title"] == "Gym"
    assert "· modern 2026-07-28" in human.stderr
    week = mcpkit("read", calendar_url, "calendar://week")
    assert week.returncode == 0, week.stderr
    json.loads(week.stdout)
    prompt = mcpkit("prompt", calendar_url, "prepare_week", "focus=health")
    assert prompt.returncode == 0 and "user:" in prompt.stdout and "health" in prompt.stdout


@pytest.mark.parametrize("era", ["auto", "legacy"])
def test_the_server_s_question_is_asked_at_the_terminal(era: str) -> None:
    done = mcpkit("call", CALENDAR, "create_event", "title=Asked", "--json", "--era", era,
                  stdin=f"a\n{WHEN}\ns\n")
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["structuredContent"]["startsAt"] == WHEN
    assert 'calendar asks: When should "Asked" start?' in done.stderr
    assert f'answers: {{"startsAt": "{WHEN}"}}' in done.stderr


@pytest.mark.parametrize("answers", ["d\n", f"a\n{WHEN}\nd\n", "c\n", "a\n"])
def test_declining_or_cancelling_the_question_is_the_tools_error(answers: str) -> None:
    done = mcpkit("call", CALENDAR, "create_event", "title=Declined", stdin=answers)
    assert done.returncode == 1
    assert "No event created" in done.stdout


def test_arguments_are_typed_from_the_schema_and_is_error_exits_1() -> None:
    done = mcpkit("call", CLI_SERVER, "refuse", "flag=false", "ratio=2", 'tags=["a","b"]')
    assert done.returncode == 1
    assert "refused flag=False ratio=2.0 tags=['a', 'b']" in done.stdout


def test_progress_is_drawn_on_stderr() -> None:
    done = mcpkit("call", CLI_SERVER, "slow_count", "to=3")
    assert done.returncode == 0, done.stderr
    assert done.stdout == "counted to 3\n"
    assert "progress [##########" in done.stderr and "3/3 counted 3" in done.stderr


@pytest.mark.parametrize(("args", "message"), [
    (("call", QUICKSTART, "nope", "x=1"), "has no tool 'nope' (its tools: add, echo)"),
    (("call", QUICKSTART, "add", "a=two", "b=3"), "a='two': expected integer"),
    (("call", QUICKSTART, "add", "a"), "must be key=value"),
    (("tools", "missing/server.py"), "file not found: missing/server.py"),
    (("call", QUICKSTART, "add", "{not json"), "not valid JSON"),
])
def test_usage_errors_are_one_line_and_exit_2(args: tuple[str, ...], message: str) -> None:
    done = mcpkit(*args)
    assert done.returncode == 2, done.stderr
    assert message in done.stderr and "Traceback" not in done.stderr


def test_a_server_error_exits_1_with_its_code() -> None:
    done = mcpkit("read", QUICKSTART, "file:///nothing")
    assert done.returncode == 1
    assert "error -32601" in done.stderr and "Traceback" not in done.stderr


async def test_listen_prints_changes_until_the_count() -> None:
    server = ServerProcess.start(CLI_SERVER)
    listener = await asyncio.create_subprocess_exec(
        sys.executable, "-m", "mcpkit", "listen", server.url, "--tools", "--count", "1",
        cwd=ROOT, stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE)
    try:
        assert listener.stderr is not None and listener.stdout is not None
        ready = await asyncio.wait_for(listener.stderr.readline(), 30)
        assert b"listening for toolsListChanged" in ready
        grow = await asyncio.to_thread(mcpkit, "call", server.url, "grow", "name=sprout")
        assert grow.returncode == 0, grow.stderr
        out = await asyncio.wait_for(listener.stdout.read(), 30)
        assert out == b"tools/list_changed\n"
        assert await asyncio.wait_for(listener.wait(), 30) == 0
    finally:
        if listener.returncode is None:
            listener.kill()
            await listener.wait()
        server.stop()
