"""`bench/breakdown.py` runs and reports every piece of the HTTP request path (no timing is
asserted: only that each row has a positive figure)."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]


def test_the_breakdown_reports_every_piece_of_the_request_path() -> None:
    proc = subprocess.run(
        [sys.executable, str(REPO / "bench" / "breakdown.py"), "--rounds", "1", "--n", "200"],
        cwd=REPO, capture_output=True, text=True, timeout=120, check=False,
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    rows = re.findall(r"^\| (.+?) \| ([\d.]+) \|$", proc.stdout, re.M)
    labels = [label.strip() for label, _ in rows]
    assert len(rows) == 10, proc.stdout
    assert labels[0].startswith("bare ASGI floor") and labels[1].startswith("mcpkit, async")
    assert all(float(value) > 0 for _, value in rows)
    assert "no state keys" not in proc.stderr
