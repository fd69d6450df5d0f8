"""The README's code runs as written."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path
from typing import Any

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


def test_each_shell_command_calls_a_tool_the_server_at_its_address_has(
    tmp_path: Path, monkeypatch: Any
) -> None:
    # The shell lines name servers by address: each address is served by a `mcpkit run ...
    # --http` line of the README, and the tool a line calls is one that server registers.
    from mcpkit.cli.target import load_server

    monkeypatch.setenv("CALENDAR_DB", str(tmp_path / "calendar.sqlite3"))
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    lines = [line for block in re.findall(r"```sh\n(.*?)```", text, re.S)
             for line in block.splitlines()]
    served: dict[str, str] = {}
    for line in lines:
        for target, address in re.findall(r"mcpkit run (\S+\.py) --http (\S+)", line):
            served[address.rsplit(":", 1)[-1]] = target
    calls = [(port, tool) for line in lines for port, tool in re.findall(
        r"mcpkit call http://127\.0\.0\.1:(\d+)/mcp (\w+)", line)]
    assert calls, "the README's shell lines call no server by address"
    for port, tool in calls:
        assert port in served, f"nothing in the README serves port {port} (for {tool})"
        server = load_server(str(ROOT / served[port]))
        assert tool in server.tools, f"{served[port]} (port {port}) has no tool {tool!r}"
