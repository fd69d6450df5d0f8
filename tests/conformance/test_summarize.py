"""The verdicts `scripts/conformance` prints: counted from the suite's saved checks, with the
expected failures held to failing."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import summarize

REQUIREMENTS = """\
# comment
server:
  - alpha
  - beta

client:
  - auth/one
  - gamma

not_scored:
  - scenario: delta
    leg: client
    reason: extension
"""


def save(root: Path, name: str, statuses: list[str]) -> None:
    folder = root / f"{name}-2026-07-28T10-11-12-131Z"
    folder.mkdir(parents=True)
    checks = [{"id": f"c{i}", "status": s, "description": s} for i, s in enumerate(statuses)]
    (folder / "checks.json").write_text(json.dumps(checks))


@pytest.fixture
def files(tmp_path: Path) -> tuple[Path, Path]:
    req = tmp_path / "req.yaml"
    req.write_text(REQUIREMENTS)
    expected = tmp_path / "expected.yml"
    expected.write_text("# needs authorization\nclient:\n  - auth/one\n")
    return req, expected


def test_requirements_lists_are_read_per_leg(files: tuple[Path, Path]) -> None:
    req, _ = files
    assert summarize.read_requirements(req, "server") == ["alpha", "beta"]
    assert summarize.read_requirements(req, "client") == ["auth/one", "gamma"]


def test_a_failure_check_fails_the_scenario_and_warnings_do_not(
    tmp_path: Path, files: tuple[Path, Path], capsys: pytest.CaptureFixture[str]
) -> None:
    req, expected = files
    save(tmp_path / "out", "server-alpha", ["SUCCESS", "WARNING"])
    save(tmp_path / "out", "server-beta", ["SUCCESS", "FAILURE"])
    code = summarize.main(["required", "server", "2026-07-28", str(tmp_path / "out"), str(req),
                           str(expected)])
    out = capsys.readouterr().out
    assert code == 1
    assert out.splitlines()[-1] == "conformance server 2026-07-28: 1 passed, 1 failed"
    assert "FAILED beta" in out


def test_a_scenario_without_results_counts_as_failed(
    tmp_path: Path, files: tuple[Path, Path], capsys: pytest.CaptureFixture[str]
) -> None:
    req, expected = files
    save(tmp_path / "out", "server-alpha", ["SUCCESS"])
    assert summarize.main(["required", "server", "2026-07-28", str(tmp_path / "out"), str(req),
                           str(expected)]) == 1
    assert "FAILED beta" in capsys.readouterr().out


def test_expected_failures_are_counted_apart_and_a_stale_one_fails_the_run(
    tmp_path: Path, files: tuple[Path, Path], capsys: pytest.CaptureFixture[str]
) -> None:
    req, expected = files
    save(tmp_path / "a", "auth/one", ["FAILURE"])
    save(tmp_path / "a", "gamma", ["SUCCESS"])
    assert summarize.main(["required", "client", "2025-11-25", str(tmp_path / "a"), str(req),
                           str(expected)]) == 0
    last = capsys.readouterr().out.splitlines()[-1]
    assert last == ("conformance client 2025-11-25: 1 passed, 0 failed, "
                    "1 expected failures (needs authorization)")
    save(tmp_path / "b", "auth/one", ["SUCCESS"])
    save(tmp_path / "b", "gamma", ["SUCCESS"])
    assert summarize.main(["required", "client", "2025-11-25", str(tmp_path / "b"), str(req),
                           str(expected)]) == 1
    assert "STALE expected failure auth/one" in capsys.readouterr().out


def test_not_scored_scenarios_are_reported_without_a_verdict(
    tmp_path: Path, files: tuple[Path, Path], capsys: pytest.CaptureFixture[str]
) -> None:
    req, expected = files
    assert summarize.read_not_scored(req, "client") == [("delta", "extension")]
    save(tmp_path / "a", "auth/one", ["FAILURE"])
    save(tmp_path / "a", "gamma", ["SUCCESS"])
    save(tmp_path / "a", "delta", ["FAILURE"])
    assert summarize.main(["required", "client", "2026-07-28", str(tmp_path / "a"), str(req),
                           str(expected)]) == 0
    assert "reported, not scored (client 2026-07-28): delta x (extension)" in capsys.readouterr().out


def test_all_mode_judges_every_scenario_that_left_results(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    save(tmp_path / "o", "server-ping", ["SUCCESS"])
    save(tmp_path / "o", "server-tools-list", ["FAILURE"])
    assert summarize.main(["all", "server 2025-06-18", str(tmp_path / "o")]) == 1
    out = capsys.readouterr().out.splitlines()
    assert out[-1] == "conformance server 2025-06-18: 1 passed, 1 failed"
    assert summarize.main(["all", "server 2025-06-18", str(tmp_path / "empty")]) == 1
