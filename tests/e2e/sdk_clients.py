"""The official MCP SDK clients as the composition interop test runs them: each pinned version
installed once into .cache/sdk-clients (a virtualenv for the Python SDK, npm for the
TypeScript ones), and one run of a client script (`sdk_clients/compose_client.py`,
`sdk_clients/compose_client.mjs`) whose JSON line is returned.
`python tests/e2e/sdk_clients.py --install` installs them."""

from __future__ import annotations

import asyncio
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
CACHE = HERE.parent.parent / ".cache" / "sdk-clients"
SCRIPTS = HERE / "sdk_clients"
PYTHON_SDK = "2.3.0"
"""mcp 2.x speaks 2026-07-28, and 2025-11-25 in its legacy mode."""
TS_SDKS = {"@modelcontextprotocol/client": "2.4.0", "@modelcontextprotocol/sdk": "1.32.2"}
"""The 2.x client negotiates 2026-07-28 when asked to; 1.x is a 2025-11-25 client."""
WAIT_S = 90.0
__all__ = ["PYTHON_SDK", "TS_SDKS", "install_python", "install_typescript", "run_client"]


def install_python(version: str = PYTHON_SDK) -> Path:
    """The interpreter of a virtualenv holding `mcp==version` (made once)."""
    folder = CACHE / f"py-{version}"
    python = folder / "bin" / "python"
    stamp = folder / ".installed"
    if stamp.exists() and stamp.read_text() == version:
        return python
    subprocess.run([sys.executable, "-m", "venv", "--clear", str(folder)], check=True,
                   timeout=300)
    done = subprocess.run([str(python), "-m", "pip", "install", "-q", "--disable-pip-version-check",
                           f"mcp=={version}"], capture_output=True, text=True, timeout=900)
    assert done.returncode == 0, f"pip install mcp=={version} failed: {done.stderr[-2000:]}"
    stamp.write_text(version)
    return python


def install_typescript() -> Path:
    """The folder whose node_modules hold the pinned TypeScript SDK packages (npm, once)."""
    folder = CACHE / "ts"
    wanted = json.dumps(TS_SDKS, sort_keys=True)
    stamp = folder / ".installed"
    if stamp.exists() and stamp.read_text() == wanted:
        return folder
    npm = shutil.which("npm")
    assert npm is not None and shutil.which("node") is not None, (
        "the TypeScript SDK clients need Node.js and npm on PATH")
    folder.mkdir(parents=True, exist_ok=True)
    done = subprocess.run([npm, "install", "--prefix", str(folder), "--no-audit", "--no-fund",
                           "--loglevel=error", *(f"{p}@{v}" for p, v in TS_SDKS.items())],
                          capture_output=True, text=True, timeout=900)
    assert done.returncode == 0, f"npm install of the TypeScript SDKs failed: {done.stderr[-2000:]}"
    stamp.write_text(wanted)
    return folder


async def run_client(argv: list[str], *, cwd: Path | None = None) -> dict[str, Any]:
    """Run one client script to its end; the JSON line it printed."""
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "VIRTUAL_ENV")}
    process = await asyncio.create_subprocess_exec(
        *argv, cwd=cwd, stdin=asyncio.subprocess.DEVNULL, stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE, env={**env, "NO_PROXY": "127.0.0.1"})
    try:
        out, err = await asyncio.wait_for(process.communicate(), WAIT_S)
    finally:
        if process.returncode is None:
            process.kill()
            await process.wait()
    assert process.returncode == 0, f"{argv[1]} failed ({process.returncode}): {err[-3000:]!r}"
    said = [json.loads(line) for line in out.splitlines() if line.startswith(b"{")]
    assert len(said) == 1, out
    result: dict[str, Any] = said[0]
    return result


if __name__ == "__main__" and sys.argv[1:] == ["--install"]:
    print(f"mcp {PYTHON_SDK}: {install_python()}")
    print(f"TypeScript SDKs: {install_typescript()}")
