"""A failure whose report meets CPython 3.11's AST depth error (`failure_reports`) is reported
as a failure with its traceback and the run goes on; any other error of the report still
stops the run. Each case is a real pytest run in a subprocess, of a test file whose items
raise the error while their failure is formatted."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
from helpers.failure_reports import MISMATCH

HERE = Path(__file__).resolve().parent

BROKEN_REPORT = '''
import pytest

RAISE = {error!r}


@pytest.hookimpl(tryfirst=True)
def pytest_runtest_makereport(item, call):
    if call.excinfo is not None and item.config.option.tbstyle != "native":
        raise SystemError(RAISE)
'''

TESTS = '''
def test_fails():
    assert 1 + 1 == 3, "the arithmetic is off"


def test_passes():
    pass


def test_after():
    pass
'''


def run(tmp_path: Path, error: str,
        plugins: tuple[str, ...] = ("helpers.failure_reports",)) -> subprocess.CompletedProcess[str]:
    (tmp_path / "conftest.py").write_text(
        f"pytest_plugins = {plugins!r}\n" + BROKEN_REPORT.format(error=error))
    (tmp_path / "test_it.py").write_text(TESTS)
    return subprocess.run(
        [sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "-p", "no:randomly", "-q",
         "test_it.py", "--rootdir", str(tmp_path)],
        cwd=tmp_path, env={"PYTHONPATH": str(HERE), "PATH": "/usr/bin:/bin"},
        capture_output=True, text=True, timeout=120)


def test_the_depth_mismatch_is_reported_as_the_failure_and_the_run_goes_on(
        tmp_path: Path) -> None:
    out = run(tmp_path, f"{MISMATCH} (before=78, after=133)")
    assert out.returncode == pytest.ExitCode.TESTS_FAILED, out.stdout + out.stderr
    assert "INTERNALERROR" not in out.stdout + out.stderr
    assert "1 failed, 2 passed" in out.stdout, out.stdout
    assert "the arithmetic is off" in out.stdout  # the failure's own traceback
    assert "written natively after" in out.stdout


def test_without_the_plugin_the_depth_mismatch_stops_the_run(tmp_path: Path) -> None:
    """What the plugin is for: pytest alone ends the whole run there."""
    out = run(tmp_path, f"{MISMATCH} (before=78, after=133)", plugins=())
    assert out.returncode == pytest.ExitCode.INTERNAL_ERROR, out.stdout + out.stderr


def test_another_system_error_still_stops_the_run(tmp_path: Path) -> None:
    out = run(tmp_path, "something else broke")
    assert out.returncode == pytest.ExitCode.INTERNAL_ERROR, out.stdout + out.stderr
    assert "something else broke" in out.stdout + out.stderr
