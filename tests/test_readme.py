"""The README's code runs as written."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def python_blocks() -> list[str]:
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    return re.findall(r"```python\n(.*?)```", text, re.S)


def test_the_readme_server_is_the_quickstart_example() -> None:
    server = python_blocks()[0]
    assert server.strip() == (ROOT / "examples/quickstart/server.py").read_text().split('"""', 2)[2].strip()


def test_the_readme_client_runs_against_the_quickstart_server() -> None:
    client = next(b for b in python_blocks() if "Client(" in b)
    out = subprocess.run([sys.executable, "-c", client], cwd=ROOT, capture_output=True,
                         text=True, timeout=60)
    assert out.returncode == 0, out.stderr
    assert out.stdout.splitlines() == ["modern 2026-07-28 ['echo', 'add']", "{'sum': 5}"]
