"""The benchmark's bookkeeping for the TypeScript SDK's server, without starting any server: the
target that compares mcpkit's stdio CPU per request with it, and the "not available" row it gets
where Node or its pinned packages are missing."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import pytest
from benchkit import report, servers, suite

BENCH = Path(__file__).resolve().parents[2] / "bench"
TS_TARGET = "stdio server CPU per request vs TypeScript SDK"


def _stdio_cpu(**cpu_us: float) -> dict[str, Any]:
    return {
        "servers": {name: {"family": "x"} for name in cpu_us},
        "stdio": {name: {"seq": {"server_cpu_us_per_req": us}} for name, us in cpu_us.items()},
    }


def _target(results: dict[str, Any]) -> dict[str, Any]:
    found = [t for t in report.targets(results) if t["target"] == TS_TARGET]
    assert len(found) == 1, [t["target"] for t in report.targets(results)]
    row: dict[str, Any] = found[0]
    return row


def test_the_typescript_target_is_mcpkits_cpu_per_request_over_the_ts_sdks() -> None:
    row = _target(_stdio_cpu(**{"floor": 15.0, "mcpkit": 30.0, "ts-sdk": 60.0}))
    assert row["required"] == "< 1.00x"
    assert row["measured"] == pytest.approx(0.5)
    assert row["met"] is True
    assert row["floor"] == pytest.approx(0.25)
    assert "ts-sdk 60.0" in row["detail"]


def test_the_typescript_target_is_not_met_when_mcpkit_spends_as_much_cpu() -> None:
    row = _target(_stdio_cpu(**{"floor": 15.0, "mcpkit": 60.0, "ts-sdk": 60.0}))
    assert row["measured"] == pytest.approx(1.0)
    assert row["met"] is False


def test_the_typescript_target_reads_not_measured_without_a_ts_sdk_figure() -> None:
    row = _target(_stdio_cpu(floor=15.0, mcpkit=30.0))
    assert row["measured"] is None
    assert row["met"] is None
    assert "not measured" in row["detail"]


def test_the_ts_sdk_is_not_available_with_the_reason_when_its_packages_are_missing(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(servers, "NODE_MODULES", tmp_path / "node_modules")
    impl = next(i for i in servers.IMPLS if i.name == "ts-sdk")
    reason = impl.problem()
    assert reason is not None
    # Node itself (where this machine has none recent enough) or the pinned SDK package is named,
    # with the way to get it.
    assert "@modelcontextprotocol/server@2.4.0 not installed" in reason or "no Node" in reason
    assert "bench/run.py" in reason

    cfg = suite.Config.make(True, sys.executable, "asyncio", None, (), tmp_path)
    results = suite.run_all([impl], cfg)
    for transport in ("stdio", "http"):
        state = results["servers"]["ts-sdk"][transport]
        assert state["available"] is False
        assert state["error"] == reason
    table = report.markdown(results)
    assert "| ts-sdk | not available: " in table


def test_the_ts_sdk_takes_the_tool_count_and_the_port_as_arguments() -> None:
    impl = next(i for i in servers.IMPLS if i.name == "ts-sdk")
    stdio = impl.stdio_argv(sys.executable, n_tools=100)
    assert stdio[1:] == [str(servers.SERVERS_DIR / "ts_echo.mjs"), "--tools", "100"]
    http = impl.http_argv(sys.executable, 8123, "asyncio")
    assert http[1:] == [str(servers.SERVERS_DIR / "ts_echo.mjs"), "--port", "8123"]
    assert impl.generate(1000, BENCH) == impl.path  # no generated copy: --tools N instead
    assert impl.sessions is False  # stateless legacy serving: no Mcp-Session-Id to hold
