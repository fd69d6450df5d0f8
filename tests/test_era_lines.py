"""The 2025-11-25 era outside its rooms may only shrink: `scripts/era_lines.py` (the count
docs/testing.md quotes) still runs and finds no more lines than `CEILING`. A change that adds
era code outside `legacy/`, `client/legacy/`, `transports/legacy/` or `store/legacy/` fails
here; one that removes some lowers the ceiling."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
CEILING = 144
"""143 until the HTTP app's module was split by responsibility: `HTTPOptions` (options.py) and
`run_http`/`serve_http` (running.py) each import the era's `SessionLimits` they name, where the
one module imported it once; no era code was added."""


def test_the_era_outside_its_rooms_does_not_grow() -> None:
    done = subprocess.run([sys.executable, str(ROOT / "scripts" / "era_lines.py")],
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    total = re.search(r"^\s*(\d+) lines of the 2025-11-25 era outside its rooms$", done.stdout,
                      re.M)
    assert total is not None, done.stdout
    assert int(total.group(1)) <= CEILING, (
        f"{total.group(1)} lines of the era outside its rooms, more than {CEILING}:\n"
        + done.stdout)
