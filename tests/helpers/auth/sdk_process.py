"""The official MCP SDK clients as the interop tests run them: each pinned version installed
once into .cache/sdk-clients (a virtualenv per Python SDK, npm for the TypeScript ones, as
the benchmark and the conformance suite install theirs), and one run of a client script
(`sdk_clients/python_client.py`, `sdk_clients/ts_client.mjs`) driven line by line: when it
asks for a sign-in, the user's browser (`proxy_walk.Walk`) walks the URL to its redirect URI
and hands that back. `python tests/helpers/auth/sdk_process.py --install` installs them all."""

from __future__ import annotations

import asyncio
import json
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlsplit

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[2]
CACHE = ROOT / ".cache" / "sdk-clients"
SCRIPTS = HERE / "sdk_clients"
PYTHON_SDKS = ("2.3.0", "1.30.0")
"""mcp 2.x speaks 2026-07-28; 1.x is a 2025-11-25 client."""
TS_SDKS = {"@modelcontextprotocol/client": "2.4.0", "@modelcontextprotocol/sdk": "1.32.2"}
WAIT_S = 90.0
__all__ = ["PYTHON_SDKS", "TS_SDKS", "install_python", "install_typescript", "run_client"]


def install_python(version: str) -> Path:
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


async def run_client(argv: list[str], walk: Any, *, cwd: Path | None = None
                     ) -> list[dict[str, Any]]:
    """Run one client script to its end; every line it printed. Each `{"authorize": URL}`
    is walked by `walk` (`proxy_walk.Walk`) to the URL's redirect URI, which the script gets
    back as `{"callback": URL}`."""
    process = await asyncio.create_subprocess_exec(
        *argv, cwd=cwd, stdin=asyncio.subprocess.PIPE, stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE, env={**_environ(), "NO_PROXY": "127.0.0.1"})
    assert process.stdin is not None and process.stdout is not None
    said: list[dict[str, Any]] = []
    try:
        async with asyncio.timeout(WAIT_S):
            while line := await process.stdout.readline():
                if not line.startswith(b"{"):
                    continue
                message = json.loads(line)
                said.append(message)
                if "authorize" in message:
                    url = message["authorize"]
                    stop = parse_qs(urlsplit(url).query)["redirect_uri"][0]
                    back = await asyncio.to_thread(walk.to, url, stop)
                    process.stdin.write(json.dumps({"callback": back}).encode() + b"\n")
                    await process.stdin.drain()
            status = await process.wait()
    finally:
        if process.returncode is None:
            process.kill()
            await process.wait()
    assert process.stderr is not None
    errors = (await process.stderr.read()).decode(errors="replace")
    assert status == 0, f"{argv[1]} failed ({status}): {errors[-3000:]}"
    return said


def _environ() -> dict[str, str]:
    import os

    return {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "VIRTUAL_ENV")}


if __name__ == "__main__" and sys.argv[1:] == ["--install"]:
    for version in PYTHON_SDKS:
        print(f"mcp {version}: {install_python(version)}")
    print(f"TypeScript SDKs: {install_typescript()}")
