"""`bench/breakdown.py --otel` measures the request path with an SDK tracer provider set, and
shows that spans were really made (no timing is asserted)."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]


def test_the_breakdown_with_a_provider_set_makes_a_span_per_request() -> None:
    proc = subprocess.run(
        [sys.executable, str(REPO / "bench" / "breakdown.py"), "--rounds", "1", "--n", "200",
         "--otel"],
        cwd=REPO, capture_output=True, text=True, timeout=120, check=False,
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert "OpenTelemetry SDK provider set" in proc.stdout
    rows = re.findall(r"^\| (.+?) \| ([\d.]+) \|$", proc.stdout, re.M)
    assert len(rows) == 10 and all(float(value) > 0 for _, value in rows), proc.stdout
    exported = re.search(r"^spans exported: ([\d,]+)$", proc.stdout, re.M)
    assert exported is not None, proc.stdout
    # Four rows serve whole requests (the async and plain apps, serve, the Exchange), each
    # 2,200 times (warm-up and one round): one SERVER span each.
    assert int(exported.group(1).replace(",", "")) >= 4 * 2200
