"""The schema checks cannot switch themselves off unseen: under CI a run without the official
schemas stops before any test, elsewhere it passes but its summary counts the checks made (0,
naming MCPKIT_SPEC_DIR). Each case is a real pytest run in a subprocess, since the schema folder
is read once, when tests/helpers/wire.py is imported."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from helpers.real_parts import REQUIRE_VARIABLE
from helpers.wire import SPEC_DIR, SPEC_MISSING, spec_available

TESTS = Path(__file__).resolve().parent
ROOT = TESTS.parent

# A tiny test module: three checks of values, then one server message (two checks: the
# JSON-RPC envelope and the result type of the method it answers).
TINY = '''
from helpers.wire import MODERN, check, check_server_message


def test_a_few_checks() -> None:
    check(MODERN, "EmptyResult", {"resultType": "complete"})
    check(MODERN, "TextContent", {"type": "text", "text": "hi"})
    check(MODERN, "Root", {"uri": "file:///tmp"})
    check_server_message(MODERN, {"jsonrpc": "2.0", "id": 1, "result": {"resultType": "complete"}},
                         "ping")
'''


def run_pytest(
    args: list[str], *, spec_dir: Path, ci: bool, cwd: Path = ROOT
) -> subprocess.CompletedProcess[str]:
    """pytest in a subprocess with MCPKIT_SPEC_DIR set and CI set or unset as asked."""
    env = {k: v for k, v in os.environ.items()
           if k not in ("CI", REQUIRE_VARIABLE, "PYTEST_ADDOPTS")}
    env["MCPKIT_SPEC_DIR"] = str(spec_dir)
    if ci:
        env["CI"] = "true"
    return subprocess.run(
        [sys.executable, "-m", "pytest", "-p", "no:cacheprovider", *args],
        cwd=cwd, env=env, capture_output=True, text=True, timeout=600,
    )


def tiny_run(tmp_path: Path, *, spec_dir: Path, ci: bool, plugin: bool = True
             ) -> subprocess.CompletedProcess[str]:
    """TINY under its own empty ini, with tests/helpers/wire.py as its plugin (`-p helpers.wire`) if asked."""
    (tmp_path / "pytest.ini").write_text(
        "[pytest]\nasyncio_default_fixture_loop_scope = function\n", encoding="utf-8")
    (tmp_path / "test_tiny.py").write_text(TINY, encoding="utf-8")
    args = ["-p", "helpers.wire"] if plugin else []
    return run_pytest([*args, "test_tiny.py"], spec_dir=spec_dir, ci=ci, cwd=tmp_path)


def test_under_ci_the_suite_refuses_to_run_without_the_schemas(tmp_path: Path) -> None:
    absent = tmp_path / "no-spec-here"
    out = run_pytest(["tests/protocol", "-q"], spec_dir=absent, ci=True)
    assert out.returncode == pytest.ExitCode.USAGE_ERROR, out.stdout + out.stderr
    assert "MCPKIT_SPEC_DIR" in out.stderr and str(absent) in out.stderr
    assert "passed" not in out.stdout


def test_under_ci_each_schema_check_fails_without_the_schemas(tmp_path: Path) -> None:
    """Even where the plugin is not loaded (a peer process importing tests/helpers/wire.py)."""
    absent = tmp_path / "no-spec-here"
    out = tiny_run(tmp_path, spec_dir=absent, ci=True, plugin=False)
    assert out.returncode == pytest.ExitCode.TESTS_FAILED, out.stdout + out.stderr
    assert "MCPKIT_SPEC_DIR" in out.stdout and str(absent) in out.stdout


def test_without_ci_the_run_passes_and_its_summary_says_nothing_was_checked(
    tmp_path: Path,
) -> None:
    absent = tmp_path / "no-spec-here"
    out = tiny_run(tmp_path, spec_dir=absent, ci=False)
    assert out.returncode == pytest.ExitCode.OK, out.stdout + out.stderr
    assert (f"0 schema checks of wire messages: the official MCP schemas were not found in "
            f"{absent}; set MCPKIT_SPEC_DIR") in out.stdout
    assert f"WARNING: the official MCP schemas were not found in {absent}" in out.stdout


@pytest.mark.skipif(not spec_available(), reason=SPEC_MISSING)
def test_the_summary_counts_every_schema_check(tmp_path: Path) -> None:
    out = tiny_run(tmp_path, spec_dir=SPEC_DIR, ci=True)
    assert out.returncode == pytest.ExitCode.OK, out.stdout + out.stderr
    assert f"5 schema checks of wire messages against the official schemas in {SPEC_DIR}" in (
        out.stdout)


@pytest.mark.skipif(not spec_available(), reason=SPEC_MISSING)
def test_the_suite_loads_the_checks_plugin_and_counts_its_checks() -> None:
    """tests/conftest.py carries the hooks: a run of one official example counts its check."""
    out = run_pytest(
        ["tests/protocol/test_official_examples.py", "-q",
         "-k", "test_example_validates_against_its_schema_type and call-tool-request.json"],
        spec_dir=SPEC_DIR, ci=True,
    )
    assert out.returncode == pytest.ExitCode.OK, out.stdout + out.stderr
    assert "1 passed" in out.stdout
    assert f"1 schema check of wire messages against the official schemas in {SPEC_DIR}" in (
        out.stdout)
