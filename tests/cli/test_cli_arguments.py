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
