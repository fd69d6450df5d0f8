"""A run with no terminal: any stdin that is not one (/dev/null, a pipe, a file) behaves as
`--no-input` unless `--answers-from-stdin` says it holds the answers, and a question the
command cannot answer ends it naming the question and the `--answer` that answers it."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from cli_run import CALENDAR, checked, mcpkit

WHEN = "2031-03-04T09:30:00+00:00"


@pytest.mark.parametrize("era", ["auto", "legacy"])
@pytest.mark.parametrize("how", ["devnull", "no-input", "pipe"])
def test_a_question_with_no_input_ends_the_call_naming_it_and_how_to_answer(
    tmp_path: Path, era: str, how: str
) -> None:
    extra = ("--no-input",) if how == "no-input" else ()
    # A pipe holding what would answer the question is still no input without the opt-in.
    done = mcpkit(tmp_path, "call", checked(CALENDAR), "create_event", "title=Dev", "--era",
                  era, *extra, devnull=how == "devnull",
                  stdin=f"a\n{WHEN}\ns\n" if how == "pipe" else "")
    assert done.returncode == 2, done.stderr
    assert done.stdout == ""
    assert 'calendar asked: When should "Dev" start?' in done.stderr
    assert "--answer startsAt=" in done.stderr
    assert "(a)nswer" not in done.stderr  # nothing was asked
    assert "No event created" not in done.stdout + done.stderr  # nor a decline sent
    assert "Traceback" not in done.stderr


def test_answer_fills_the_question_without_a_terminal(tmp_path: Path) -> None:
    done = mcpkit(tmp_path, "call", checked(CALENDAR), "create_event", "title=Dev",
                  f"--answer=startsAt={WHEN}", "--json", devnull=True)
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["structuredContent"]["startsAt"] == WHEN
    assert f'answers (from --answer): {{"startsAt": "{WHEN}"}}' in done.stderr


def test_an_answer_that_does_not_fit_the_field_is_one_line(tmp_path: Path) -> None:
    done = mcpkit(tmp_path, "call", checked(CALENDAR), "create_event", "title=Dev",
                  "--answer", "startsAt=tomorrow", devnull=True)
    assert done.returncode == 2
    assert "--answer startsAt='tomorrow'" in done.stderr and "Traceback" not in done.stderr


def test_answers_piped_on_stdin_are_read_when_asked_to(tmp_path: Path) -> None:
    # As docs/cli.md writes it: one line per field, the menu and the send step implied.
    done = mcpkit(tmp_path, "call", checked(CALENDAR), "create_event", "title=Piped", "--json",
                  "--answers-from-stdin", stdin=f"{WHEN}\n")
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["structuredContent"]["startsAt"] == WHEN


def test_an_empty_pipe_is_no_answer_not_a_decline(tmp_path: Path) -> None:
    done = mcpkit(tmp_path, "call", checked(CALENDAR), "create_event", "title=Dev",
                  "--answers-from-stdin", stdin="")
    assert done.returncode == 2
    assert "stdin ended before an answer" in done.stderr
    assert "No event created" not in done.stdout


def test_an_answer_given_twice_is_refused_not_silently_the_last() -> None:
    from mcpkit.cli.given_answers import parse_given
    from mcpkit.cli.usage import UsageError

    with pytest.raises(UsageError, match=r"--answer ok is given twice \(ok=yes and ok=no\)"):
        parse_given(["ok=yes", "ok=no"])


ANSWERING = ("--answer", "--no-input", "--answers-from-stdin")


@pytest.mark.parametrize(("command", "asks"), [
    (("discover",), False), (("tools",), False), (("listen",), False),
    (("task", "get"), False), (("task", "cancel"), False),
    (("call",), True), (("read",), True), (("prompt",), True),
    (("task", "wait"), True), (("task", "answer"), True),
])
def test_only_commands_that_may_meet_a_question_take_the_answering_options(
    command: tuple[str, ...], asks: bool
) -> None:
    import contextlib
    import io

    from mcpkit.cli.main import main

    shown = io.StringIO()
    with contextlib.redirect_stdout(shown), pytest.raises(SystemExit):
        main([*command, "--help"])
    offered = [option for option in ANSWERING if option in shown.getvalue()]
    assert offered == (list(ANSWERING) if asks else []), shown.getvalue()


def test_an_answering_option_on_a_command_that_never_asks_is_a_usage_error(
    tmp_path: Path,
) -> None:
    done = mcpkit(tmp_path, "tools", CALENDAR, "--no-input")
    assert done.returncode == 2
    assert "unrecognized arguments: --no-input" in done.stderr
