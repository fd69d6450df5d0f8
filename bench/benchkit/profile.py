"""Where mcpkit's stdio server spends its time under load: py-spy samples the server while the
driver keeps 32 `tools/call` requests in flight; the collapsed stacks are summed into the top
frames by own time and by total time."""

from __future__ import annotations

import asyncio
import contextlib
import shutil
import subprocess
import sys
import tempfile
import threading
from collections import Counter
from pathlib import Path
from typing import Any

from benchkit import servers
from benchkit.procs import ServerFailed
from benchkit.stdio import pipelined, sequential
from benchkit.suite import Config, http_load, http_open, http_server, open_peer, stdio_server


def _py_spy() -> str | None:
    found = shutil.which("py-spy")
    if found:
        return found
    candidate = Path(sys.executable).parent / "py-spy"
    return str(candidate) if candidate.exists() else None


def _short(frame: str) -> str:
    """'handle (mcpkit/server/server.py:120)' -> 'handle (mcpkit/server/server.py)'."""
    name, _, where = frame.partition(" (")
    where = where.rstrip(")")
    path = where.rsplit(":", 1)[0]
    for marker in ("site-packages/", "/src/", "/lib/python3"):
        if marker in path:
            path = path.split(marker, 1)[1]
            break
    return f"{name} ({path})" if path else name


# Entry frames every stack passes through: left out of the "total" ranking, which would
# otherwise open with a dozen rows of 100%.
_ENTRY = ("(<frozen runpy>)", "(asyncio/runners.py)", "(threading.py)", "(mcpkit/__main__.py)",
          "(mcpkit/cli/main.py)", "(asyncio/base_events.py)", "(asyncio/events.py)")  # fmt: skip


def summarize(collapsed: str, top: int = 20) -> dict[str, Any]:
    own: Counter[str] = Counter()
    total: Counter[str] = Counter()
    samples = 0
    for line in collapsed.splitlines():
        stack, _, count_s = line.rpartition(" ")
        if not stack or not count_s.isdigit():
            continue
        count = int(count_s)
        frames = [_short(f) for f in stack.split(";") if f]
        if not frames:
            continue
        samples += count
        own[frames[-1]] += count
        for frame in set(frames):
            if not frame.endswith(_ENTRY):
                total[frame] += count

    def table(counter: Counter[str]) -> list[dict[str, Any]]:
        return [
            {"frame": f, "samples": c, "share": c / samples if samples else 0.0}
            for f, c in counter.most_common(top)
        ]

    return {"samples": samples, "top_own": table(own), "top_total": table(total)}


def record(spy: str, pid: int, seconds: float, out: Path, drive: Any, gil: bool = True) -> str | None:
    """Sample `pid` for `seconds` while `drive()` keeps it busy; None on success, else the error.

    With `gil`, only the thread holding the GIL is sampled (where Python spends its time);
    without, every thread that is not idle (the whole process: worker threads too)."""
    argv = [spy, "record", "--pid", str(pid), "--duration", str(int(seconds)), "--rate", "500",
            *(["--gil"] if gil else []), "--format", "raw", "--output", str(out),
            "--nonblocking"]  # fmt: skip
    spy_proc = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    load = threading.Thread(target=drive, daemon=True)
    load.start()
    try:
        _, err = spy_proc.communicate(timeout=seconds + 60)
    finally:
        if spy_proc.poll() is None:
            spy_proc.kill()
    load.join(timeout=seconds + 30)
    if spy_proc.returncode != 0 or not out.exists():
        return f"py-spy failed: {err.decode(errors='replace')[-500:]}"
    return None


def _print(title: str, result: dict[str, Any]) -> None:
    if "error" in result:
        print(f"  {title}: {result['error']}")
        return
    print(f"  {title}: {result['samples']} samples; top frames by own time:")
    for row in result["top_own"][:12]:
        print(f"    {row['share'] * 100:5.1f}%  {row['frame']}")


def profile_mcpkit(cfg: Config, seconds: float) -> dict[str, Any]:
    """Profile mcpkit's stdio server (32 in flight) and its HTTP server (c=32)."""
    spy = _py_spy()
    if spy is None:
        return {"error": "py-spy is not installed (it is in bench/requirements.txt)"}
    impl = next(i for i in servers.IMPLS if i.name == "mcpkit")
    print(f"profiling mcpkit for {seconds:.0f} s per transport with py-spy")
    out: dict[str, Any] = {}
    with tempfile.TemporaryDirectory(prefix="mcpkit-bench-prof-") as tmp:
        stacks = Path(tmp) / "stdio.txt"
        try:
            with stdio_server(impl, cfg, "profile") as peer:
                open_peer(peer)
                sequential(peer, "tools/call", 500, 2.0)
                err = record(spy, peer.child.pid, seconds, stacks,
                              lambda: pipelined(peer, 32, 10_000_000, seconds + 1.5))  # fmt: skip
            out["stdio"] = {"error": err} if err else summarize(stacks.read_text())
        except (ServerFailed, OSError) as exc:
            out["stdio"] = {"error": str(exc)}
        out["stdio"]["load"] = "stdio, 32 tools/call in flight"
        stacks = Path(tmp) / "http.txt"
        try:
            with http_server(impl, cfg, "profile-http") as (child, port):
                era, session = asyncio.run(http_open(child, port))
                http_load(cfg, port, era, session, 8, 1.0, 5_000)
                err = record(spy, child.pid, seconds, stacks,
                              lambda: http_load(cfg, port, era, session, 32, seconds + 1.5, 10_000_000))  # fmt: skip
            out["http"] = {"error": err} if err else summarize(stacks.read_text())
        except (ServerFailed, OSError, TimeoutError, ConnectionError) as exc:
            out["http"] = {"error": str(exc)}
        out["http"]["load"] = f"Streamable HTTP, c=32 ({'wrk' if cfg.wrk else 'asyncio client'})"
    for key in ("stdio", "http"):
        out[key]["seconds"] = seconds
        with contextlib.suppress(Exception):
            _print(key, out[key])
    return out
