"""`mcpkit probe` against the MCP reference "everything" server over stdio (through npx, as
tests/e2e/test_server_everything.py runs it): legacy, found by `server/discover` → -32601, the
2025-11-25 handshake rules, 13/15/17 tools per capability set, and token counts equal to an
independent count of each tool's compact JSON and of the instructions."""

from __future__ import annotations

import json
import shlex
from pathlib import Path

import pytest
from helpers.everything_catalogue import COMMAND, npm_env
from helpers.everything_catalogue import installed as installed  # the fixture, shared
from probe_support import compact, mcpkit

from mcpkit.probe.catalogue import parse_caps
from mcpkit.probe.channels import Target
from mcpkit.probe.report import probe

pytestmark = pytest.mark.node



async def test_the_reference_server_is_legacy_with_13_15_17_tools_counted_exactly(
    installed: None, tap: object, independent: object
) -> None:
    target = Target("stdio", argv=tuple(shlex.split(COMMAND)), env=npm_env())
    report = await probe(target, parse_caps("none,elicitation,all"), tap=tap)  # type: ignore[arg-type]
    ident = report.identity
    assert (ident.era, ident.version) == ("legacy", "2025-11-25")
    assert ident.evidence == ("server/discover (2026-07-28) → -32601 Method not found → "
                              "initialize (2025-11-25) → 2025-11-25")
    assert ident.server_info is not None and ident.server_info["name"] == "mcp-servers/everything"
    statuses = {c.name: c.status for c in report.checks}
    assert {n for n, s in statuses.items() if s == "pass"} == {
        "unknown-method", "stdout-purity", "legacy-handshake", "legacy-version", "legacy-ping"}
    assert "fail" not in statuses.values()
    assert [len(c.tools) for c in report.catalogues] == [13, 15, 17]
    for catalogue, budget in zip(report.catalogues, report.budgets, strict=True):
        counted = {c.key: c.tokens for c in budget.of("tools")}
        assert counted == {t["name"]: independent(compact(t))  # type: ignore[operator]
                           for t in catalogue.tools}
        assert {c.key: c.tokens for c in budget.of("prompts")} == {
            p["name"]: independent(compact(p)) for p in catalogue.prompts}  # type: ignore[operator]
    assert ident.instructions
    assert report.budgets[0].instructions == independent(ident.instructions)  # type: ignore[operator]
    cl100k = await probe(target, parse_caps("none"), encoding="cl100k_base")
    assert {c.key: c.tokens for c in cl100k.budgets[0].of("tools")} == {
        t["name"]: independent(compact(t), "cl100k_base")  # type: ignore[operator]
        for t in cl100k.catalogues[0].tools}


def test_the_acceptance_command_line(installed: None, tmp_path: Path,
                                     report_schema: object) -> None:
    done = mcpkit("probe", COMMAND, "--caps", "none", env=npm_env())
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert lines[0] == "Everything Reference Server 2.0.0 · legacy 2025-11-25 · stdio"
    assert "-32601 Method not found → initialize (2025-11-25) → 2025-11-25" in lines[1]
    assert any(line.startswith("  tools ") and "(13)" in line for line in lines)
    as_json = mcpkit("probe", COMMAND, "--caps", "none,all", "--json", env=npm_env())
    doc = json.loads(as_json.stdout)
    assert not list(report_schema.iter_errors(doc))  # type: ignore[attr-defined]
    assert [b["counts"]["tools"] for b in doc["budgets"]] == [13, 17]
