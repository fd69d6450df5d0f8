"""A missing real part cannot pass unseen: where every real part is required (CI = 1, true or
yes in any case, or MCPKIT_REQUIRE_REAL_PARTS) a test that needs it fails naming it; elsewhere it
skips, and the run's last line counts what the part cost. Each case is a real pytest run of
the suite's own PostgreSQL tests in a subprocess, PostgreSQL hidden from it (no initdb on PATH,
MCPKIT_POSTGRES_LIB at an empty folder)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from helpers.real_parts import POSTGRES_LIB_VARIABLE, REQUIRE_VARIABLE, required
from helpers.wire import SPEC_DIR

ROOT = Path(__file__).resolve().parent.parent
SELECTED = ["tests/store/test_backends.py", "-k",
            "test_the_first_add_wins or test_an_expired_record_is_absent"]
"""Two tests per engine of the store suite: the PostgreSQL ones need the server."""


def without_postgres(tmp_path: Path, **extra: str) -> dict[str, str]:
    """This environment with PostgreSQL hidden, and neither CI nor the requirement set."""
    env = {k: v for k, v in os.environ.items()
           if k not in ("CI", REQUIRE_VARIABLE, "PYTEST_ADDOPTS")}
    folders = env.get("PATH", "").split(os.pathsep)
    env["PATH"] = os.pathsep.join(f for f in folders if not (Path(f) / "initdb").exists())
    empty = tmp_path / "no-postgresql"
    empty.mkdir(exist_ok=True)
    env[POSTGRES_LIB_VARIABLE] = str(empty)
    env["MCPKIT_SPEC_DIR"] = str(SPEC_DIR)
    env.update(extra)
    return env


def run_suite(env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "-q", *SELECTED],
        cwd=ROOT, env=env, capture_output=True, text=True, timeout=300)


def test_the_selection_runs_postgresql_tests_and_others() -> None:
    """What the cases below rely on: the selection holds tests of PostgreSQL and of engines
    that need no server (so "the others passed" means something)."""
    out = subprocess.run(
        [sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "-q", "--co", *SELECTED],
        cwd=ROOT, capture_output=True, text=True, timeout=300)
    ids = [line for line in out.stdout.splitlines() if "::" in line]
    assert any("postgresql" in i for i in ids) and any("memory" in i for i in ids), out.stdout


@pytest.mark.parametrize(("name", "value"), [
    ("CI", "1"), ("CI", "yes"), ("CI", "True"), (REQUIRE_VARIABLE, "1"),
])
def test_where_real_parts_are_required_a_hidden_postgresql_fails_the_run_naming_it(
        tmp_path: Path, name: str, value: str) -> None:
    out = run_suite(without_postgres(tmp_path, **{name: value}))
    assert out.returncode == pytest.ExitCode.TESTS_FAILED, out.stdout + out.stderr
    assert (f"real part missing: PostgreSQL; initdb, pg_ctl not found: install postgresql "
            f"(apt-get install postgresql). Every real part is required here ({name}={value})."
            ) in out.stdout
    last = out.stdout.rstrip().splitlines()[-1]
    assert last.startswith("real part missing: PostgreSQL: ") and "failed: it is required" in last
    assert " passed" in out.stdout  # the tests that need no server still ran


def test_elsewhere_a_hidden_postgresql_is_skipped_and_counted_in_the_last_line(
        tmp_path: Path) -> None:
    out = run_suite(without_postgres(tmp_path, CI="false"))
    assert out.returncode == pytest.ExitCode.OK, out.stdout + out.stderr
    skipped = [line for line in out.stdout.splitlines() if line.startswith("SKIPPED")]
    assert skipped and all("real part missing: PostgreSQL" in line for line in skipped)
    assert out.stdout.rstrip().splitlines()[-1] == (
        f"real part missing: PostgreSQL: {len(skipped)} tests skipped "
        "(install postgresql to run them)")


@pytest.mark.parametrize(("ci", "flag", "expected"), [
    ("1", "", True), ("YES", "", True), ("true", "", True), ("", "", False),
    ("0", "", False), ("false", "", False), ("", "1", True), ("", "no", False),
])
def test_one_function_decides_and_the_script_agrees(
        monkeypatch: pytest.MonkeyPatch, ci: str, flag: str, expected: bool) -> None:
    monkeypatch.setenv("CI", ci)
    monkeypatch.setenv(REQUIRE_VARIABLE, flag)
    assert required() is expected
    script = subprocess.run([sys.executable, str(ROOT / "tests" / "helpers" / "real_parts.py"), "required"],
                            env={**os.environ}, timeout=60)
    assert (script.returncode == 0) is expected
