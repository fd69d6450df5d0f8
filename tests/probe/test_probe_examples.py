"""`mcpkit probe` against mcpkit's own examples, over stdio and over a real `mcpkit run --http`
on 127.0.0.1: modern, and every rule that applies passes."""

from __future__ import annotations

import sys
from collections.abc import Iterator

import pytest
from helpers.transports.http_peer import ServerProcess
from probe_support import ROOT

from mcpkit.probe.catalogue import parse_caps
from mcpkit.probe.channels import Target
from mcpkit.probe.report import probe

QUICKSTART = str(ROOT / "examples" / "quickstart" / "server.py")
CALENDAR = str(ROOT / "examples" / "calendar" / "server.py")
STDIO_ONLY = {"stdout-purity"}
HTTP_ONLY = {"header-mismatch", "evil-origin", "status-codes"}
LEGACY_ONLY = {"legacy-handshake", "legacy-version", "legacy-ping"}


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    server = ServerProcess.start(QUICKSTART)
    yield server.url
    server.stop()


def _statuses(report: object) -> dict[str, str]:
    return {c.name: c.status for c in report.checks}  # type: ignore[attr-defined]


@pytest.mark.parametrize("example", [QUICKSTART, CALENDAR], ids=["quickstart", "calendar"])
async def test_an_example_over_stdio_is_modern_and_passes_every_rule(
    example: str, tap: object, tmp_path: object, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("CALENDAR_DB", str(tmp_path) + "/calendar.sqlite3")
    target = Target("stdio", argv=(sys.executable, "-m", "mcpkit", "run", example))
    report = await probe(target, parse_caps("none,all"), tap=tap)  # type: ignore[arg-type]
    assert report.identity.era == "modern"
    assert report.identity.evidence.startswith("server/discover (2026-07-28) → DiscoverResult:")
    statuses = _statuses(report)
    assert {n for n, s in statuses.items() if s == "pass"} == (
        set(statuses) - HTTP_ONLY - LEGACY_ONLY - {"call"})
    assert {n for n, s in statuses.items() if s == "n/a"} == HTTP_ONLY | LEGACY_ONLY | {"call"}
    # As `mcpkit probe --strict` reads it: every parameter described, nothing to lint.
    assert report.findings == [], [(f.rule, f.subject, f.detail) for f in report.findings]


async def test_the_quickstart_over_http_passes_every_rule_http_included(
    served: str, tap: object
) -> None:
    report = await probe(Target("http", url=served), parse_caps("none"),  # type: ignore[arg-type]
                         tap=tap, call=("add", {"a": 2, "b": 3}))
    statuses = _statuses(report)
    assert report.identity.era == "modern"
    assert report.identity.server_info == {"name": "quickstart", "version": "1.0.0"}
    assert {n for n, s in statuses.items() if s == "pass"} == (
        set(statuses) - STDIO_ONLY - LEGACY_ONLY)
    checks = {c.name: c for c in report.checks}
    assert checks["evil-origin"].got == "HTTP 403"
    assert "origin: http://evil.example" in checks["evil-origin"].sent
    assert checks["header-mismatch"].got.count("HTTP 400 -32020") == 2
    assert checks["unknown-method"].got.startswith("HTTP 404 -32601")
    assert report.called is not None and report.called["result"]["structuredContent"] == {"sum": 5}
    assert [c.key for c in report.budgets[0].of("tools")] == ["echo", "add"]
