"""`bench/store_latency.py` measures every call on every backend against the run's real
PostgreSQL and Redis (no timing is asserted: only that each row has a positive figure, the
calls having answered what they should, which the bench asserts as it goes)."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]


def test_the_store_bench_reports_each_call_on_each_backend(postgres_url: str,
                                                           redis_url: str) -> None:
    import psycopg

    schema = f"bench{os.urandom(4).hex()}"
    with psycopg.connect(postgres_url, autocommit=True) as conn:
        conn.execute(f"CREATE SCHEMA {schema}")
    proc = subprocess.run(
        [sys.executable, str(REPO / "bench" / "store_latency.py"), "--n", "30",
         "--postgres", f"{postgres_url}?options=-csearch_path%3D{schema}",
         "--redis", f"{redis_url}?prefix={schema}:"],
        cwd=REPO, capture_output=True, text=True, timeout=300, check=False,
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    rows = re.findall(r"^\| (.+?) \| (\w+) \| (\d+) \| (\d+) \| ([+-]?\d*) \| ?(\d*) \| ?([+-]?\d*) \|$",
                      proc.stdout, re.M)
    assert [(call, backend) for call, backend, *_ in rows] == [
        (call, backend) for call in ("single-use retry", "legacy session request",
                                     "plain modern tools/call (no state)",
                                     "task save (TaskStore.save)")
        for backend in ("memory", "default", "postgresql", "redis")], proc.stdout
    assert all(int(median) > 0 and int(p90) >= int(median) for _, _, median, p90, *_ in rows)
    # this process's CPU per call, beside the elapsed time, for the calls made through the app
    assert all(int(cpu) > 0 for call, _, _, _, _, cpu, _ in rows if not call.startswith("task"))
