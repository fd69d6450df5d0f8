"""Arguments are read against what the server declared: an unknown name is refused with the
parameters the tool or prompt takes, unless its schema allows extra properties; a model
parameter reads by its name in `mcpkit tools`."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from cli_run import ROOT, SERVER, checked, mcpkit

QUICKSTART = str(ROOT / "examples" / "quickstart" / "server.py")


@pytest.mark.parametrize("arguments", [("a=1", "b=2", "c=3"), ('{"a": 1, "b": 2, "c": 3}',)])
def test_an_unknown_argument_is_refused_with_the_tool_s_parameters(
    tmp_path: Path, arguments: tuple[str, ...]
) -> None:
    done = mcpkit(tmp_path, "call", checked(QUICKSTART), "add", *arguments)
    assert done.returncode == 2, done.stdout
    assert "the tool 'add' has no argument 'c'; it takes add(a: integer, b: integer)" \
        in done.stderr
    assert done.stdout == ""


def test_a_schema_that_allows_extra_properties_takes_them(tmp_path: Path) -> None:
    done = mcpkit(tmp_path, "call", checked(SERVER), "tag", "name=a", "colour=red")
    assert done.returncode == 0, done.stderr
    assert done.stdout == "colour=red,name=a\n"


def test_an_unknown_prompt_argument_is_refused_with_the_prompt_s_arguments(
    tmp_path: Path
) -> None:
    done = mcpkit(tmp_path, "prompt", checked(SERVER), "greet", "who=Ada", "bogus=2")
    assert done.returncode == 2
    assert "the prompt 'greet' has no argument 'bogus'; it takes who" in done.stderr
    good = mcpkit(tmp_path, "prompt", checked(SERVER), "greet", "who=Ada")
    assert good.returncode == 0 and "Say hello to Ada." in good.stdout


def test_tools_shows_a_model_parameter_by_its_name(tmp_path: Path) -> None:
    done = mcpkit(tmp_path, "tools", checked(SERVER))
    assert done.returncode == 0, done.stderr
    assert "  place(where: Point, label?: string)" in done.stdout.splitlines()
    assert ": any" not in done.stdout


def test_a_model_argument_is_passed_as_json(tmp_path: Path) -> None:
    done = mcpkit(tmp_path, "call", checked(SERVER), "place", 'where={"x": 1, "y": 2}',
                  "label=home", "--json")
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["content"][0]["text"] == "home@1,2"


def test_tools_shows_a_date_and_a_date_time_by_their_format(tmp_path: Path) -> None:
    done = mcpkit(tmp_path, "tools", checked(SERVER))
    assert done.returncode == 0, done.stderr
    assert "  book(day: date, at?: date-time | null, seats?: integer[] | null)" \
        in done.stdout.splitlines()


@pytest.mark.parametrize(("arguments", "says"), [
    (("day=2031-03-04", "seats=[1,99999999999999999999]"), "seats=[1,99999999999999999999]: "
     "the integer 99999999999999999999 is beyond the 64-bit range"),
    (('{"day": "2031-03-04", "seats": [-9223372036854775809]}',), "seats=[-9223372036854775809]"
     ": the integer -9223372036854775809 is beyond the 64-bit range"),
])
def test_an_integer_past_64_bits_is_refused_in_one_line_before_anything_is_sent(
    tmp_path: Path, arguments: tuple[str, ...], says: str
) -> None:
    done = mcpkit(tmp_path, "call", checked(SERVER), "book", *arguments)
    assert done.returncode == 2 and done.stdout == ""
    assert done.stderr.startswith(f"mcpkit call: {says}"), done.stderr
    assert "send it as a string" in done.stderr
    assert "Traceback" not in done.stderr and len(done.stderr.strip().splitlines()) == 1


def test_the_quickstart_refuses_a_big_integer_naming_the_argument(tmp_path: Path) -> None:
    done = mcpkit(tmp_path, "call", checked(QUICKSTART), "add", "a=99999999999999999999", "b=1")
    assert done.returncode == 2 and "Traceback" not in done.stderr
    assert done.stderr == ("mcpkit call: a=99999999999999999999: the integer 99999999999999999999"
                           " is beyond the 64-bit range a JSON integer can carry (-2**63 to "
                           "2**64-1), so it would not arrive as written; send it as a string "
                           'instead ("99999999999999999999"), if the tool takes one\n')


def test_a_big_integer_for_a_tool_that_takes_a_string_too_is_sent_as_written(
    tmp_path: Path,
) -> None:
    done = mcpkit(tmp_path, "call", checked(SERVER), "ident", "key=99999999999999999999")
    assert done.returncode == 0, done.stderr
    assert done.stdout == "str 99999999999999999999\n"
    small = mcpkit(tmp_path, "call", checked(SERVER), "ident", "key=7")
    assert small.stdout == "int 7\n"


@pytest.mark.parametrize(("command", "arguments", "says"), [
    ("call", ("day=2031-03-04", "day=2031-03-05"), "day is given twice (day=2031-03-04 "
     "day=2031-03-05): give it once; to send several values, give a JSON list once: "
     "day='[2031-03-04, 2031-03-05]'"),
    ("call", ('{"day": "2031-03-04", "day": "2031-03-05"}',),
     "the JSON repeats the key 'day'; give each key once"),
    ("prompt", ("who=Ada", "who=Bob"), "who is given twice (who=Ada who=Bob): give it once"),
])
def test_a_name_given_twice_is_refused_not_silently_the_last(
    tmp_path: Path, command: str, arguments: tuple[str, ...], says: str
) -> None:
    target = "book" if command == "call" else "greet"
    done = mcpkit(tmp_path, command, checked(SERVER), target, *arguments)
    assert done.returncode == 2 and done.stdout == ""
    assert done.stderr == f"mcpkit {command}: {says}\n"
