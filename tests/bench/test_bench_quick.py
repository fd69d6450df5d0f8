"""The benchmark works: `bench/run.py --quick` runs mcpkit and the floors end to end.

No timing is asserted: only that every measurement ran, produced throughput, and saw no errors.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

REPO = Path(__file__).resolve().parents[2]
RUN = REPO / "bench" / "run.py"
TIMEOUT_S = 240


@pytest.fixture(scope="module")
def quick(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    out = tmp_path_factory.mktemp("bench") / "quick.json"
    proc = subprocess.run(
        [sys.executable, str(RUN), "--quick", "--docs", "no", "--json", str(out)],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=TIMEOUT_S,
        check=False,
    )
    assert out.exists(), (
        f"no JSON written (exit {proc.returncode}):\n{proc.stdout[-3000:]}\n{proc.stderr[-3000:]}"
    )
    data: dict[str, Any] = json.loads(out.read_text())
    data["_exit"] = proc.returncode
    data["_output"] = proc.stdout[-3000:] + proc.stderr[-3000:]
    return data


def test_structure(quick: dict[str, Any]) -> None:
    for key in (
        "meta",
        "servers",
        "stdio",
        "http",
        "cold_start",
        "import",
        "growth",
        "sessions",
        "targets",
        "errors",
    ):
        assert key in quick, key
    assert quick["meta"]["mode"] == "quick"
    assert quick["meta"]["machine"]["nproc"] >= 1
    assert set(quick["servers"]) == {"floor", "mcpkit"}
    for target in quick["targets"]:
        assert {"target", "required", "measured", "met", "detail"} <= set(target)


def test_no_harness_errors(quick: dict[str, Any]) -> None:
    assert quick["errors"] == [], quick["_output"]
    assert quick["_exit"] == 0, quick["_output"]


@pytest.mark.parametrize("name", ["floor", "mcpkit"])
def test_stdio(quick: dict[str, Any], name: str) -> None:
    state = quick["servers"][name]["stdio"]
    assert state["available"] is True, state
    assert state["era"] == "modern"
    entry = quick["stdio"][name]
    for mode in ("seq", "pipelined"):
        assert entry[mode]["rps"] > 0, (mode, entry[mode])
        assert entry[mode]["requests"] > 0
        assert entry[mode]["errors"] == 0, entry[mode]["first_error"]
        assert entry[mode]["p50_us"] > 0
    assert entry["peak_rss_kb"] > 0


@pytest.mark.parametrize("name", ["floor", "mcpkit"])
def test_http(quick: dict[str, Any], name: str) -> None:
    state = quick["servers"][name]["http"]
    assert state["available"] is True, state
    assert state["era"] == "modern"
    entry = quick["http"][name]
    for conc in ("c1", "c32"):
        assert entry[conc]["rps"] > 0, entry[conc]
        assert entry[conc]["errors"] == 0, entry[conc]
    assert entry["validation"]["requests"] > 0
    assert entry["validation"]["errors"] == 0, entry["validation"]["first_error"]


@pytest.mark.parametrize("name", ["floor", "mcpkit"])
def test_cold_start(quick: dict[str, Any], name: str) -> None:
    entry = quick["cold_start"][name]
    assert entry["discover_ms"] > 0
    assert entry["tools_call_ms"] > 0


def test_import(quick: dict[str, Any]) -> None:
    entry = quick["import"]["mcpkit"]
    assert entry["module"] == "mcpkit"
    assert entry["importtime_ms"] > 0
    assert entry["wall_ms"] > 0


@pytest.mark.parametrize("name", ["floor", "mcpkit"])
def test_tool_count_growth(quick: dict[str, Any], name: str) -> None:
    growth = quick["growth"][name]
    assert set(growth) == {"1", "100"}
    for n, entry in growth.items():
        assert entry["errors"] == 0, (n, entry["first_error"])
        assert entry["list_p50_us"] > 0
        assert entry["call_p50_us"] > 0


def test_legacy_sessions(quick: dict[str, Any]) -> None:
    entry = quick["sessions"]["mcpkit"]
    assert "error" not in entry, entry
    assert entry["sessions"] > 0
    assert entry["errors"] == 0
