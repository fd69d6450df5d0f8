"""`mcpkit proxy UPSTREAM --http 127.0.0.1:PORT/mcp` as a real process, for the command line,
end-to-end and replica tests: started, its URL read from the line it announces, stopped with
SIGTERM (SIGKILL for a crash), its stderr kept for the failure message."""

from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

import httpx

ROOT = Path(__file__).resolve().parents[3]
UPSTREAM_SERVER = str(Path(__file__).resolve().parent / "upstream_server.py")
SERVING = re.compile(r"mcpkit: serving .* at (http://127\.0\.0\.1:\d+/\S*)")
START_S = 90.0
"""Bound on the proxy's start (npx starting an installed package on a loaded machine)."""


def python_upstream(*extra: str) -> str:
    """The command line of the test upstream server over stdio."""
    return " ".join([sys.executable, "-m", "mcpkit", "run", UPSTREAM_SERVER, *extra])


class ProxyProcess:
    """One `mcpkit proxy` process serving HTTP; see the module docstring."""

    def __init__(self, upstream: str, *flags: str, port: int = 0,
                 env: dict[str, str] | None = None) -> None:
        self.upstream = upstream
        self.flags = flags
        self.port = port
        self.env = {**os.environ, **(env or {})}
        self.url = ""
        self.proc: subprocess.Popen[bytes] | None = None
        self.log = Path(tempfile.mkstemp(prefix="mcpkit-proxy-", suffix=".log")[1])
        self._lines: list[str] = []
        self._served = threading.Event()

    def start(self) -> ProxyProcess:
        self._served.clear()
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "mcpkit", "proxy", self.upstream, "--http",
             f"127.0.0.1:{self.port}/mcp", *self.flags],
            cwd=ROOT, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE, env=self.env)
        threading.Thread(target=self._read, daemon=True).start()
        if not self._served.wait(START_S):
            self.stop()
            raise AssertionError(f"mcpkit proxy did not start:\n{self.output()}")
        self.wait_ready()
        return self

    def _read(self) -> None:
        assert self.proc is not None and self.proc.stderr is not None
        with open(self.log, "ab") as out:
            for raw in self.proc.stderr:
                out.write(raw)
                out.flush()
                line = raw.decode(errors="replace")
                self._lines.append(line)
                found = SERVING.search(line)
                if found:
                    self.url = found.group(1)
                    self.port = int(self.url.split(":")[2].split("/")[0])
                    self._served.set()

    def wait_ready(self, timeout: float = START_S) -> None:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            assert self.proc is not None
            if self.proc.poll() is not None:
                raise AssertionError(f"mcpkit proxy exited:\n{self.output()}")
            try:
                if httpx.get(f"http://127.0.0.1:{self.port}/readyz", timeout=2).status_code == 200:
                    return
            except httpx.HTTPError:
                pass
            time.sleep(0.05)
        raise AssertionError(f"mcpkit proxy not ready:\n{self.output()}")

    @property
    def running(self) -> bool:
        return self.proc is not None and self.proc.poll() is None

    def kill(self) -> None:
        """SIGKILL: a crash, nothing cleaned up."""
        if self.running:
            assert self.proc is not None
            self.proc.kill()
            self.proc.wait(10)

    def stop(self) -> None:
        if self.running:
            assert self.proc is not None
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(20)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()

    def output(self) -> str:
        return self.log.read_text(errors="replace") if self.log.exists() else "".join(self._lines)

    def __enter__(self) -> ProxyProcess:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()
        self.log.unlink(missing_ok=True)
