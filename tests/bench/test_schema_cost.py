"""`bench/schema_cost.py` runs and reports both schema walks at every size asked for (no timing
is asserted: the tests of the walks count their work instead)."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]


def test_the_schema_cost_bench_reports_each_walk_at_each_size() -> None:
    proc = subprocess.run(
        [sys.executable, str(REPO / "bench" / "schema_cost.py"), "--rounds", "1",
         "--sizes", "2,4"],
        cwd=REPO, capture_output=True, text=True, timeout=60, check=False,
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    rows = re.findall(r"^\| (.+?) \| (\d+) \| ([\d.]+) \|$", proc.stdout, re.M)
    assert [(label.split(",")[0], size) for label, size, _ in rows] == [
        ("x-mcp-header walk", "2"), ("x-mcp-header walk", "4"),
        ("structure check", "2"), ("structure check", "4"),
    ], proc.stdout
    assert all(float(ms) >= 0 for _, _, ms in rows)
