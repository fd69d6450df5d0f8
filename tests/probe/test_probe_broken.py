"""`mcpkit probe` against a server that breaks the rules on purpose (broken_server.py): every
broken rule is a failed row with its evidence, and every lint finding is reported by name."""

from __future__ import annotations

import json
import sys

import pytest
from probe_support import BROKEN, compact, mcpkit

from mcpkit.probe.catalogue import parse_caps
from mcpkit.probe.channels import Target
from mcpkit.probe.report import probe

TARGET = Target("stdio", argv=(sys.executable, BROKEN))


@pytest.fixture
async def report(tap: object) -> object:
    return await probe(TARGET, parse_caps("none"), timeout=5.0, tap=tap)  # type: ignore[arg-type]


async def test_each_broken_rule_fails_with_its_evidence(report: object) -> None:
    checks = {c.name: c for c in report.checks}  # type: ignore[attr-defined]
    assert report.identity.era == "modern"  # type: ignore[attr-defined]
    failed = {n for n, c in checks.items() if c.status == "fail"}
    assert failed == {"missing-meta", "unsupported-version", "result-type", "caching-hints",
                      "unknown-method", "stdout-purity"}
    assert checks["missing-meta"].got == "DiscoverResult: 2026-07-28"
    assert checks["unsupported-version"].got.startswith("-32602 bad version 1900-01-01")
    assert checks["result-type"].got == "no resultType on mcpkit/probe-unknown-method, tools/list"
    assert checks["caching-hints"].got.endswith("invalid on server/discover, tools/list")
    assert checks["stdout-purity"].got.startswith("2 lines are no JSON-RPC message")
    assert "'broken server starting'" in checks["stdout-purity"].got
    assert {n for n, c in checks.items() if c.status == "n/a"} == {
        "header-mismatch", "evil-origin", "status-codes", "legacy-handshake", "legacy-version",
        "legacy-ping", "call"}


async def test_each_lint_finding_is_reported_by_rule_and_tool(report: object) -> None:
    found = {(f.rule, f.subject) for f in report.findings}  # type: ignore[attr-defined]
    assert found == {
        ("steering-text", "tool fetch"),
        ("calls-other-tool", "tool fetch"),
        ("url-in-description", "tool fetch"),
        ("bidi-unicode", "tool send_data"),
        ("hidden-unicode", "tool send_data"),
        ("accepts-anything", "tool send_data"),
        ("missing-description", "tool nodesc"),
        ("parameter-without-description", "tool nodesc"),
        ("strict-client-refuses", "tool notobject"),
        ("overlong-description", "tool long"),
        ("accepts-anything", "tool anyparam"),
    }
    details = {(f.rule, f.subject): f.detail for f in report.findings}  # type: ignore[attr-defined]
    assert details[("bidi-unicode", "tool send_data")] == "U+202E"
    assert details[("hidden-unicode", "tool send_data")] == "U+200B"
    assert details[("calls-other-tool", "tool fetch")] == "'call the send_data'"
    assert details[("url-in-description", "tool fetch")] == "https://evil.example/docs"
    assert details[("accepts-anything", "tool anyparam")] == "the parameter 'value' takes any value"
    assert "type" in details[("strict-client-refuses", "tool notobject")]


async def test_the_budget_counts_the_compact_json_of_each_tool(report: object,
                                                              independent: object) -> None:
    catalogue = report.catalogues[0]  # type: ignore[attr-defined]
    budget = report.budgets[0]  # type: ignore[attr-defined]
    tools = {c.key: c.tokens for c in budget.of("tools")}
    assert tools == {t["name"]: independent(compact(t)) for t in catalogue.tools}  # type: ignore[operator]
    assert budget.instructions == independent("Use these tools for everything.")  # type: ignore[operator]
    long = next(c for c in budget.of("tools") if c.key == "long")
    assert long.weight["description"] == independent(compact("Does one thing. " * 100))  # type: ignore[operator]


def test_the_cli_exits_1_and_the_json_follows_the_documented_schema(report_schema: object) -> None:
    done = mcpkit("probe", f"{sys.executable} {BROKEN}", "--json", "--caps", "none,all")
    assert done.returncode == 1, done.stderr
    doc = json.loads(done.stdout)
    errors = list(report_schema.iter_errors(doc))  # type: ignore[attr-defined]
    assert not errors, errors[:3]
    assert [b["capset"] for b in doc["budgets"]] == ["none", "all"]
    assert {f["rule"] for f in doc["lint"]} >= {"steering-text", "bidi-unicode"}


def test_strict_exits_1_on_lint_alone_and_bad_caps_is_one_line() -> None:
    done = mcpkit("probe", f"{sys.executable} {BROKEN}", "--caps", "everything")
    assert done.returncode == 2
    assert done.stderr.strip().splitlines() == [
        "mcpkit probe: --caps: unknown capability set 'everything'; use none, roots, sampling,"
        " elicitation, all (comma-separated) or a JSON object"]
    gone = mcpkit("probe", "/nonexistent/server --stdio")
    assert gone.returncode == 2
    assert gone.stderr.startswith("mcpkit probe: could not start '/nonexistent/server --stdio'")
