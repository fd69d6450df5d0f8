"""`mcpkit call` answering a server's questions at the terminal, as a person runs it: a real
`mcpkit` process, answers typed on its stdin, the server a real process too."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from schema_tap import ROOT

from mcpkit.cli.answers import parse_answer, shown
from mcpkit.client import read_form

HERE = Path(__file__).resolve().parent
FORM_SERVER = str(HERE / "form_server.py")
URL_SERVER = str(HERE / "url_elicit_server.py")
BROWSER = f"{sys.executable} {HERE / 'visit_page.py'} %s"


def mcpkit(tmp_path: Path, *args: str, stdin: str = "",
           env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    environ = {**os.environ, "XDG_CACHE_HOME": str(tmp_path)}
    environ.pop("BROWSER", None)  # a page is only ever "opened" by the tests' own visitor
    environ.update(env or {})
    return subprocess.run([sys.executable, "-m", "mcpkit", *args], input=stdin,
                          capture_output=True, text=True, cwd=ROOT, timeout=60, env=environ)


def lines(*answers: str) -> str:
    return "".join(f"{a}\n" for a in answers)


# name, email, age, plan, newsletter, topics, starts; each bad answer is asked again.
SESSION = lines("a", "A", "Ada", "ada at example", "ada@example.com", "twelve", "12", "36",
                "gold", "2", "", "mcp, go", "mcp,python", "2031-02-30", "", "s")
EXPECTED = {"name": "Ada", "email": "ada@example.com", "age": 36, "plan": "pro",
            "newsletter": False, "topics": ["mcp", "python"]}


@pytest.mark.parametrize("era", ["auto", "legacy"])
def test_bad_answers_are_asked_again_with_the_reason_and_only_a_valid_form_is_sent(
    tmp_path: Path, era: str
) -> None:
    done = mcpkit(tmp_path, "call", FORM_SERVER, "register", "--json", "--era", era,
                  stdin=SESSION)
    assert done.returncode == 0, done.stderr
    content = json.loads(json.loads(done.stdout)["content"][0]["text"])
    assert content == EXPECTED
    for reason in ("must be at least 2 characters long",
                   "expected an email address like ada@example.com",
                   "expected an integer, got 'twelve'", "must be at least 18",
                   "'gold' is not a choice (choose one of free, pro)",
                   "'go' is not a choice (choose from mcp, python, rust)",
                   "expected a date like 2031-03-04"):
        assert f"    {reason}" in done.stderr
    assert "  Name (string): " in done.stderr and "  age (integer 18..130): " in done.stderr
    assert "  plan (1=Free/2=Pro): " in done.stderr
    assert "  newsletter (boolean, optional) [false]: " in done.stderr
    assert "form-tests asks: Your profile, please." in done.stderr


def test_a_field_answered_badly_too_often_cancels_the_form(tmp_path: Path) -> None:
    done = mcpkit(tmp_path, "call", FORM_SERVER, "register",
                  stdin=lines("a", "Ada", "ada@example.com", *["x"] * 5, "40"))
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "no profile (cancel)"
    assert "no valid answer for age after 5 tries; cancelled" in done.stderr
    assert done.stderr.count("expected an integer, got 'x'") == 5


def test_end_of_input_cancels_rather_than_sending_a_partial_form(tmp_path: Path) -> None:
    done = mcpkit(tmp_path, "call", FORM_SERVER, "register", stdin=lines("a", "Ada"))
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "no profile (cancel)"


def test_a_legacy_32042_page_declined_at_the_terminal_exits_1_naming_the_host(
    tmp_path: Path,
) -> None:
    done = mcpkit(tmp_path, "call", f"{sys.executable} {URL_SERVER} notify", "connect",
                  stdin=lines("n"))
    assert done.returncode == 1
    assert "url-elicit asks you to open a page: Connect your Example account." in done.stderr
    assert "  host: 127.0.0.1" in done.stderr
    assert "error -32042: tools/call 'connect': the server needs the user to complete a page " \
           "on 127.0.0.1 first (-32042); the user declined opening http://127.0.0.1:" in done.stderr
    assert "Traceback" not in done.stderr


def test_a_legacy_32042_page_opened_at_the_terminal_is_completed_and_the_call_retried(
    tmp_path: Path,
) -> None:
    done = mcpkit(tmp_path, "call", f"{sys.executable} {URL_SERVER} notify", "connect",
                  stdin=lines("y"), env={"BROWSER": BROWSER})
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "connected"
    assert "open it in your browser? [y/N]" in done.stderr


@pytest.mark.parametrize(("schema", "line", "value"), [
    ({"type": "boolean"}, "Yes", True),
    ({"type": "boolean"}, "0", False),
    ({"type": "integer"}, "-7", -7),
    ({"type": "integer"}, "3.0", 3),
    ({"type": "integer"}, "3.5", 3.5),  # parsed, then refused by the field's check
    ({"type": "number"}, "2", 2),
    ({"type": "number"}, "2.5e1", 25.0),
    ({"type": "string", "oneOf": [{"const": "p", "title": "Pro"}]}, "pro", "p"),
    ({"type": "string", "enum": ["x", "y"]}, "2", "y"),
    ({"type": "array", "items": {"type": "string", "enum": ["a", "b"]}}, "b, 1,", ["b", "a"]),
    ({"type": "string"}, "  spaced  ", "  spaced  "),
])
def test_a_typed_line_becomes_the_fields_value(schema: dict[str, Any], line: str,
                                               value: Any) -> None:
    field = read_form({"type": "object", "properties": {"f": schema}}, "t").fields[0]
    assert parse_answer(line, field) == value


@pytest.mark.parametrize(("schema", "line", "reason"), [
    ({"type": "boolean"}, "maybe", "answer yes or no"),
    ({"type": "integer"}, "ten", "expected an integer, got 'ten'"),
    ({"type": "number"}, "nan", "expected a finite number"),
    ({"type": "number"}, "inf", "expected a finite number"),
])
def test_a_line_that_is_no_value_says_what_to_type(schema: dict[str, Any], line: str,
                                                   reason: str) -> None:
    field = read_form({"type": "object", "properties": {"f": schema}}, "t").fields[0]
    with pytest.raises(ValueError, match=reason):
        parse_answer(line, field)


def test_server_text_cannot_drive_the_terminal() -> None:
    assert shown("Name\x1b[2J\x07\u202e") == "Name\\x1b[2J\\x07\\u202e"
    assert shown("two\nlines") == "two\nlines"
