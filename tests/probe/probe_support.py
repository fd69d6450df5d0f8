"""What the probe test modules import: where things are, the compact JSON the docs define, and
`mcpkit` run as a process. (The fixtures are in this folder's conftest.py.)"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
BROKEN = str(Path(__file__).resolve().parent / "broken_server.py")
DOCS = ROOT / "docs" / "probe.md"


def compact(value: Any) -> str:
    """The compact JSON the docs define, written by the standard library (not by mcpkit)."""
    return json.dumps(value, separators=(",", ":"), ensure_ascii=False)


def mcpkit(*args: str, env: dict[str, str] | None = None, timeout: float = 120
           ) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "mcpkit", *args], capture_output=True,
                          text=True, cwd=ROOT, timeout=timeout, stdin=subprocess.DEVNULL,
                          env={**os.environ, "NO_COLOR": "1", **(env or {})})
