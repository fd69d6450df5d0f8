"""The suite's Hypothesis profiles (tests/helpers/hypothesis_profiles.py) as a run gets them: derandomized
outside CI; under CI a fresh seed each run, printed with its replay command, that replays the
same draw when given back; a time budget after which the properties still to run draw fewer
examples; rule-based state machines inheriting all of it; failing examples kept in the example
database and tried first on the next run. Each case is a real pytest run in a subprocess of a
small module that records what Hypothesis drew."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
from helpers.hypothesis_profiles import CI_EXAMPLES, LOCAL_EXAMPLES
from helpers.real_parts import REQUIRE_VARIABLE

TESTS = Path(__file__).resolve().parent

DRAWS = '''
import json, os
from hypothesis import given, strategies as st
from hypothesis.stateful import RuleBasedStateMachine, rule

def record(kind, value):
    with open(os.environ["DRAWN"], "a") as f:
        f.write(json.dumps([kind, value]) + "\\n")

@given(st.integers())
def test_a_property(n):
    record("property", n)

class Counter(RuleBasedStateMachine):
    def __init__(self):
        super().__init__()
        record("machine", 0)

    @rule(n=st.integers())
    def add(self, n):
        pass

TestCounter = Counter.TestCase


class ByHand(RuleBasedStateMachine):
    def __init__(self):
        super().__init__()
        record("by hand", 0)

    @rule(n=st.integers())
    def add(self, n):
        record("by hand step", n)


def test_a_machine_run_from_a_plain_function():
    from hypothesis import settings
    from hypothesis.stateful import run_state_machine_as_test

    run_state_machine_as_test(ByHand, settings=settings(stateful_step_count=5))
'''

FAILING = '''
import json, os
from hypothesis import given, strategies as st

@given(st.integers())
def test_no_big_numbers(n):
    with open(os.environ["DRAWN"], "a") as f:
        f.write(json.dumps(["property", n]) + "\\n")
    assert n < 1000
'''


SLOW = '''
import time
from hypothesis import strategies as st


def test_slower_than_the_per_test_bound():
    time.sleep(1.5)  # the subject here: a test longer than the ini's 1 s
'''


def run(tmp_path: Path, module: str, ini: str = "", **env_extra: str) -> tuple[subprocess.CompletedProcess[str],
                                                                  list[list[object]]]:
    """`module` as test_drawn.py under its own ini, the suite's profiles as its plugin."""
    (tmp_path / "pytest.ini").write_text("[pytest]\n" + ini, encoding="utf-8")
    (tmp_path / "test_drawn.py").write_text(module, encoding="utf-8")
    drawn = tmp_path / "drawn.jsonl"
    drawn.unlink(missing_ok=True)
    env = {k: v for k, v in os.environ.items() if k not in (
        "CI", REQUIRE_VARIABLE, "HYPOTHESIS_SEED", "HYPOTHESIS_PROFILE", "PYTEST_ADDOPTS",
        "MCPKIT_HYPOTHESIS_BUDGET_S")}
    env.update(PYTHONPATH=str(TESTS), DRAWN=str(drawn),
               MCPKIT_HYPOTHESIS_DB=str(tmp_path / "examples"), **env_extra)
    out = subprocess.run(
        [sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "-p", "helpers.hypothesis_profiles",
         "test_drawn.py"], cwd=tmp_path, env=env, capture_output=True, text=True, timeout=300)
    lines = drawn.read_text().splitlines() if drawn.exists() else []
    return out, [json.loads(line) for line in lines]


def seed_of(out: subprocess.CompletedProcess[str]) -> str:
    found = re.findall(r"hypothesis: profile 'ci', seed (\d+) .*replay: HYPOTHESIS_SEED=(\d+) "
                       r"scripts/test tests/fuzz", out.stdout)
    assert len(found) == 2, out.stdout  # the header, and the summary again
    assert {a for a, b in found} == {b for a, b in found}
    return str(found[0][0])


def of(kind: str, drawn: list[list[object]]) -> list[object]:
    return [value for k, value in drawn if k == kind]


def test_outside_ci_every_run_draws_the_same_examples(tmp_path: Path) -> None:
    first, drawn = run(tmp_path, DRAWS)
    again, redrawn = run(tmp_path, DRAWS)
    assert first.returncode == again.returncode == 0, first.stdout + first.stderr
    assert "hypothesis: profile 'local', derandomized" in first.stdout
    assert "seed" not in first.stdout.split("hypothesis: profile", 1)[1].splitlines()[0]
    assert of("property", drawn) == of("property", redrawn)
    assert len(of("property", drawn)) == LOCAL_EXAMPLES


@pytest.mark.parametrize("ci", ["1", "true", "YES"])
def test_under_ci_each_run_draws_from_a_fresh_printed_seed(tmp_path: Path, ci: str) -> None:
    first, drawn = run(tmp_path, DRAWS, CI=ci)
    again, redrawn = run(tmp_path, DRAWS, CI=ci)
    assert first.returncode == again.returncode == 0, first.stdout + first.stderr
    assert seed_of(first) != seed_of(again)
    assert of("property", drawn) != of("property", redrawn)
    assert len(of("property", drawn)) > LOCAL_EXAMPLES  # the ci count, not the local one


def test_the_printed_seed_replays_the_same_draw(tmp_path: Path) -> None:
    first, drawn = run(tmp_path, DRAWS, CI="1")
    replay, redrawn = run(tmp_path, DRAWS, HYPOTHESIS_SEED=seed_of(first))
    assert replay.returncode == 0, replay.stdout + replay.stderr
    assert seed_of(replay) == seed_of(first)
    assert of("property", redrawn) == of("property", drawn)
    assert of("by hand step", redrawn) == of("by hand step", drawn)  # seeded as much
    _, other = run(tmp_path, DRAWS, CI="1")
    assert of("by hand step", other) != of("by hand step", drawn)


def test_state_machines_inherit_the_profile_and_the_budget(tmp_path: Path) -> None:
    _, local = run(tmp_path, DRAWS)
    ci_run, ci = run(tmp_path, DRAWS, CI="1")
    spent, budgeted = run(tmp_path, DRAWS, CI="1", MCPKIT_HYPOTHESIS_BUDGET_S="0")
    # A machine may be started for a run Hypothesis then throws away (one that drew past its
    # size): a few more starts than examples, never the ci count's hundreds.
    assert LOCAL_EXAMPLES <= len(of("machine", local)) < 2 * LOCAL_EXAMPLES
    assert len(of("machine", ci)) >= CI_EXAMPLES > 2 * LOCAL_EXAMPLES
    assert LOCAL_EXAMPLES <= len(of("machine", budgeted)) < 2 * LOCAL_EXAMPLES
    assert len(of("property", budgeted)) == LOCAL_EXAMPLES
    # A machine run from a plain test function: settings made as it runs inherit as much.
    assert len(of("by hand", ci)) >= CI_EXAMPLES
    assert LOCAL_EXAMPLES <= len(of("by hand", budgeted)) < 2 * LOCAL_EXAMPLES
    assert (f"0 Hypothesis tests at up to {CI_EXAMPLES} examples, 3 at {LOCAL_EXAMPLES} once "
            "the budget of 0 s was spent") in spent.stdout
    assert f"3 Hypothesis tests at up to {CI_EXAMPLES} examples (" in ci_run.stdout


def test_a_failing_example_is_kept_and_tried_first_next_time(tmp_path: Path) -> None:
    first, _ = run(tmp_path, FAILING, CI="1")
    assert first.returncode == pytest.ExitCode.TESTS_FAILED, first.stdout + first.stderr
    assert "test_no_big_numbers(\n    n=1000,\n)" in first.stdout
    kept = [p for p in (tmp_path / "examples").rglob("*") if p.is_file()]
    assert kept, "the shrunk example is in the database"
    # Another fresh seed: the first example it tries is the one the database kept.
    again, drawn = run(tmp_path, FAILING, CI="1")
    assert again.returncode == pytest.ExitCode.TESTS_FAILED
    assert seed_of(again) != seed_of(first)
    assert of("property", drawn)[0] == 1000


def test_under_ci_a_module_using_hypothesis_gets_three_times_the_per_test_bound(
        tmp_path: Path) -> None:
    local, _ = run(tmp_path, SLOW, ini="timeout = 1\n")
    assert local.returncode == pytest.ExitCode.TESTS_FAILED and "Timeout" in local.stdout
    ci, _ = run(tmp_path, SLOW, ini="timeout = 1\n", CI="1")
    assert ci.returncode == pytest.ExitCode.OK, ci.stdout + ci.stderr
