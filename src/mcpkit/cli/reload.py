"""`mcpkit run --http ... --reload`: serve, and start again when a source file changes.

For development only. This process never imports the server: it runs `mcpkit run` (without
`--reload`) as a child, watches the `.py` files of the target's folder, and on a change stops
the child and starts a new one on the same address, so the URL a client uses stays the same.
A port of 0 is settled once, up front, for that reason. A change that breaks the file (a
syntax error) is reported by the child as usual; the next change starts it again.

Watching is by modification time, polled: no extra dependency, and the same on every system.
"""

from __future__ import annotations

import contextlib
import os
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Final

__all__ = [
    "POLL_SECONDS",
    "root_of",
    "run_reloading",
    "snapshot",
    "watched_files",
]

POLL_SECONDS: Final = 0.3
"""How often the sources are looked at."""
_SKIP: Final = frozenset({".git", ".venv", "venv", "__pycache__", "node_modules", ".tox",
                          ".mypy_cache", ".pytest_cache", ".ruff_cache", "build", "dist"})
_MAX_FILES: Final = 5000
"""A folder with more sources than this is not walked further (a home directory, a checkout
with vendored packages): the first ones found are watched."""


def watched_files(root: Path) -> Iterator[Path]:
    """The `.py` files under `root`, skipping environments, caches and hidden folders."""
    found = 0
    for folder, dirs, files in os.walk(root):
        dirs[:] = [d for d in dirs if d not in _SKIP and not d.startswith(".")]
        for name in files:
            if name.endswith(".py"):
                found += 1
                if found > _MAX_FILES:
                    return
                yield Path(folder, name)


def snapshot(root: Path) -> dict[Path, int]:
    """Each watched file's modification time: two snapshots differ when a source changed."""
    out = {}
    for path in watched_files(root):
        with contextlib.suppress(OSError):
            out[path] = path.stat().st_mtime_ns
    return out


def _settled(address: str) -> str:
    """`address` with a port of 0 replaced by a free one, so every restart reuses it."""
    from mcpkit.transports.http_server.running import parse_address

    host, port, path = parse_address(address)
    if port:
        return address
    with socket.socket(socket.AF_INET6 if ":" in host else socket.AF_INET) as probe:
        probe.bind((host, 0))
        port = probe.getsockname()[1]
    shown = f"[{host}]" if ":" in host else host
    return f"{shown}:{port}{path}"


def root_of(target: str) -> Path:
    """The folder whose sources a file (or module) target is watched by."""
    where = target.rsplit(":", 1)[0] if target.count(":") == 1 else target
    path = Path(where)
    if path.suffix == ".py" or path.exists():
        return path.resolve().parent
    return Path.cwd()  # a module name: the folder it is imported from


def run_reloading(target: str, address: str, passed: list[str]) -> int:
    """Serve `target` on `address` in a child `mcpkit run`, restarting it on each change;
    `passed` are the other `mcpkit run` options, handed to every child."""
    address = _settled(address)
    root = root_of(target)
    command = [sys.executable, "-m", "mcpkit", "run", target, "--http", address, *passed]
    # A child that found MCPKIT_RELOAD (or MCPKIT_WORKERS) would supervise children itself.
    from mcpkit.cli.settings import by_name

    settings = by_name()
    own = {settings["reload"].env, settings["workers"].env}
    env = {name: value for name, value in os.environ.items() if name not in own}

    def stop(signum: int, frame: object) -> None:
        raise KeyboardInterrupt

    signal.signal(signal.SIGTERM, stop)
    print(f"mcpkit: reloading on changes to the .py files under {root}", file=sys.stderr,
          flush=True)
    child: subprocess.Popen[bytes] | None = None
    try:
        seen = snapshot(root)
        child = subprocess.Popen(command, env=env)
        while True:
            time.sleep(POLL_SECONDS)
            now = snapshot(root)
            if now == seen:
                continue
            changed = sorted({*now.items()} ^ {*seen.items()})
            seen = now
            name = os.path.relpath(changed[0][0], root) if changed else "a file"
            print(f"mcpkit: {name} changed; restarting", file=sys.stderr, flush=True)
            _end(child)
            child = subprocess.Popen(command, env=env)
    except KeyboardInterrupt:
        return 0
    finally:
        if child is not None:
            _end(child)


def _end(child: subprocess.Popen[bytes]) -> None:
    """Stop a child the way a user's Ctrl-C would, then harder if it lingers."""
    if child.poll() is not None:
        return
    child.terminate()
    try:
        child.wait(10)
    except subprocess.TimeoutExpired:
        child.kill()
        child.wait()
