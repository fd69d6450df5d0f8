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


LISTING = """\
Server scenarios (test against a server):
  - ping [2025-06-18,2025-11-25]
  - tools-list [2025-06-18,2025-11-25,2026-07-28]
  - server-session-lifecycle
"""
"""What the suite's `list --server --spec-version 2025-06-18` prints, in its layout."""


def listing(tmp_path: Path, text: str = LISTING) -> str:
    path = tmp_path / "listed.txt"
    path.write_text(text)
    return str(path)


def test_a_listing_is_read_as_the_suite_prints_it(tmp_path: Path) -> None:
    assert summarize.read_listing(Path(listing(tmp_path))) == [
        "ping", "tools-list", "server-session-lifecycle"]


def test_all_mode_judges_every_listed_scenario_and_any_other_that_left_results(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    save(tmp_path / "o", "server-ping", ["SUCCESS"])
    save(tmp_path / "o", "server-tools-list", ["FAILURE"])
    save(tmp_path / "o", "server-server-session-lifecycle", ["SUCCESS"])
    save(tmp_path / "o", "server-unlisted", ["SUCCESS"])
    assert summarize.main(["all", "server 2025-06-18", str(tmp_path / "o"),
                           listing(tmp_path)]) == 1
    out = capsys.readouterr().out.splitlines()
    assert out[-1] == "conformance server 2025-06-18: 3 passed, 1 failed"


def test_all_mode_fails_a_listed_scenario_that_crashed_without_results(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    save(tmp_path / "o", "server-ping", ["SUCCESS"])
    save(tmp_path / "o", "server-tools-list", ["SUCCESS"])
    assert summarize.main(["all", "server 2025-06-18", str(tmp_path / "o"),
                           listing(tmp_path)]) == 1
    out = capsys.readouterr().out
    assert "FAILED server-session-lifecycle" in out and "left no results" in out
    assert out.splitlines()[-1] == "conformance server 2025-06-18: 2 passed, 1 failed"
    assert summarize.main(["all", "server 2025-06-18", str(tmp_path / "empty"),
                           listing(tmp_path)]) == 1


@pytest.mark.parametrize("text", ["", "Server scenarios (test against a server):\n"],
                         ids=["empty", "no-scenarios"])
def test_all_mode_without_a_listed_scenario_is_an_error(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], text: str
) -> None:
    save(tmp_path / "o", "server-ping", ["SUCCESS"])
    assert summarize.main(["all", "server 2025-06-18", str(tmp_path / "o"),
                           listing(tmp_path, text)]) == 2
    assert "lists no scenario" in capsys.readouterr().out
    assert summarize.main(["all", "server 2025-06-18", str(tmp_path / "o"),
                           str(tmp_path / "missing.txt")]) == 2


def test_each_verdict_is_written_where_the_variable_says(
    tmp_path: Path, files: tuple[Path, Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    req, expected = files
    verdicts = tmp_path / "verdicts.tsv"
    monkeypatch.setenv("MCPKIT_CONFORMANCE_VERDICTS", str(verdicts))
    save(tmp_path / "a", "auth/one", ["FAILURE"])
    save(tmp_path / "a", "gamma", ["SUCCESS"])
    save(tmp_path / "o", "server-ping", ["SUCCESS"])
    assert required("client", "2025-11-25", tmp_path / "a", req, expected) == 0
    assert summarize.main(["all", "server 2025-06-18", str(tmp_path / "o"),
                           listing(tmp_path)]) == 1
    assert verdicts.read_text().splitlines() == [
        "client 2025-11-25\tauth/one\texpected failure",
        "client 2025-11-25\tgamma\tpassed",
        "server 2025-06-18\tping\tpassed",
        "server 2025-06-18\tserver-session-lifecycle\tfailed",
        "server 2025-06-18\ttools-list\tfailed",
    ]


def required(leg: str, revision: str, out: Path, req: Path, expected: Path) -> int:
    return summarize.main(["required", leg, revision, str(out), str(req), str(expected)])


@pytest.mark.parametrize("statuses", [["SKIPPED"], ["INFO", "SKIPPED"], ["WARNING"], []],
                         ids=repr)
def test_a_scenario_where_no_check_succeeded_counts_as_failed(
    tmp_path: Path, files: tuple[Path, Path], capsys: pytest.CaptureFixture[str],
    statuses: list[str],
) -> None:
    req, expected = files
    save(tmp_path / "out", "server-alpha", statuses)
    save(tmp_path / "out", "server-beta", ["SUCCESS", "INFO"])
    assert required("server", "2026-07-28", tmp_path / "out", req, expected) == 1
    out = capsys.readouterr().out
    assert out.splitlines()[-1] == "conformance server 2026-07-28: 1 passed, 1 failed"
    assert "FAILED alpha" in out and "no check succeeded" in out


def test_an_expected_failure_where_no_check_succeeded_is_still_failing_not_stale(
    tmp_path: Path, files: tuple[Path, Path], capsys: pytest.CaptureFixture[str]
) -> None:
    req, expected = files
    save(tmp_path / "a", "auth/one", ["INFO", "SKIPPED"])
    save(tmp_path / "a", "gamma", ["SUCCESS"])
    assert required("client", "2025-11-25", tmp_path / "a", req, expected) == 0
    out = capsys.readouterr().out
    assert "STALE" not in out
    assert out.splitlines()[-1].endswith("1 passed, 0 failed, 1 expected failures "
                                         "(needs authorization)")


def test_all_mode_fails_a_scenario_that_only_skipped(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    save(tmp_path / "o", "server-ping", ["SUCCESS"])
    save(tmp_path / "o", "server-tools-list", ["SKIPPED"])
    save(tmp_path / "o", "server-server-session-lifecycle", ["SUCCESS"])
    assert summarize.main(["all", "server 2025-06-18", str(tmp_path / "o"),
                           listing(tmp_path)]) == 1
    assert capsys.readouterr().out.splitlines()[-1] == (
        "conformance server 2025-06-18: 2 passed, 1 failed")


@pytest.mark.parametrize("entry", ["auth/typo", "delta", "alpha"],
                         ids=["unknown", "not-scored", "other-leg"])
def test_an_expected_failure_naming_no_scored_scenario_of_the_revision_is_an_error(
    tmp_path: Path, files: tuple[Path, Path], capsys: pytest.CaptureFixture[str], entry: str,
) -> None:
    req, expected = files
    expected.write_text(f"# needs authorization\nclient:\n  - auth/one\n  - {entry}\n")
    save(tmp_path / "a", "auth/one", ["FAILURE"])
    save(tmp_path / "a", "gamma", ["SUCCESS"])
    assert required("client", "2025-11-25", tmp_path / "a", req, expected) == 1
    out = capsys.readouterr().out
    assert (f"ERROR expected failure {entry} names no scored client scenario of 2025-11-25"
            in out)
    assert out.splitlines()[-1] == (
        "conformance client 2025-11-25: 1 passed, 0 failed, 1 expected failures (needs "
        "authorization), 1 error in the expected-failures file")


def test_an_expected_failure_may_be_held_to_one_revision(
    tmp_path: Path, files: tuple[Path, Path], capsys: pytest.CaptureFixture[str]
) -> None:
    req, expected = files
    expected.write_text("client:\n  - auth/one  # needs authorization\n"
                        "client 2026-07-28:\n  - gamma  # new at 2026-07-28\n")
    assert summarize.read_expected_failures(expected, "client", "2026-07-28") == {
        "auth/one": "needs authorization", "gamma": "new at 2026-07-28"}
    assert summarize.read_expected_failures(expected, "client", "2025-11-25") == {
        "auth/one": "needs authorization"}
    save(tmp_path / "a", "auth/one", ["FAILURE"])
    save(tmp_path / "a", "gamma", ["FAILURE"])
    assert required("client", "2026-07-28", tmp_path / "a", req, expected) == 0
    assert capsys.readouterr().out.splitlines()[-1] == (
        "conformance client 2026-07-28: 0 passed, 0 failed, 2 expected failures "
        "(needs authorization; new at 2026-07-28)")
    save(tmp_path / "b", "auth/one", ["FAILURE"])
    save(tmp_path / "b", "gamma", ["SUCCESS"])
    assert required("client", "2025-11-25", tmp_path / "b", req, expected) == 0


@pytest.mark.parametrize("section", ["clients", "client 2026", "server-2026-07-28"])
def test_an_unknown_section_in_the_expected_failures_file_is_an_error(
    tmp_path: Path, files: tuple[Path, Path], capsys: pytest.CaptureFixture[str], section: str,
) -> None:
    req, expected = files
    expected.write_text(f"client:\n  - auth/one\n{section}:\n  - gamma\n")
    save(tmp_path / "a", "auth/one", ["FAILURE"])
    save(tmp_path / "a", "gamma", ["SUCCESS"])
    assert required("client", "2025-11-25", tmp_path / "a", req, expected) == 2
    last = capsys.readouterr().out.splitlines()[-1]
    assert last.startswith("conformance client 2025-11-25: error: ")
    assert f"line 3: unknown section {section!r}" in last


@pytest.mark.parametrize("content", ['{"id": "c0", "status": "SUCCESS"}', '[1, "SUCCESS"]',
                                     "[{]"], ids=["object", "not-checks", "not-json"])
def test_results_that_are_not_a_list_of_checks_fail_the_scenario_with_the_reason(
    tmp_path: Path, files: tuple[Path, Path], capsys: pytest.CaptureFixture[str], content: str,
) -> None:
    req, expected = files
    save(tmp_path / "out", "server-alpha", ["SUCCESS"])
    save(tmp_path / "out", "server-beta", ["SUCCESS"])
    next((tmp_path / "out").glob("server-beta-*/checks.json")).write_text(content)
    assert required("server", "2026-07-28", tmp_path / "out", req, expected) == 1
    out = capsys.readouterr().out
    assert "FAILED beta" in out and "[unreadable-results]" in out
    assert out.splitlines()[-1] == "conformance server 2026-07-28: 1 passed, 1 failed"


def test_the_projects_expected_failures_file_reads_at_both_revisions() -> None:
    path = Path(summarize.__file__).with_name("expected-failures.yml")
    for leg in ("server", "client"):
        modern = summarize.read_expected_failures(path, leg, "2026-07-28")
        legacy = summarize.read_expected_failures(path, leg, "2025-11-25")
        assert set(legacy) <= set(modern)
    assert "auth/iss-supported" not in summarize.read_expected_failures(path, "client",
                                                                        "2025-11-25")
