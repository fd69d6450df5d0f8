"""Running `mcpkit` as a user does, for the first-hour tests: a real process, its own caches,
the server behind the schema-checking relay (tests/helpers/client/checked_relay.py) so every message
the command sends and every one the server answers is checked against the official schema."""

from __future__ import annotations

import os
import shlex
import subprocess
import sys
from pathlib import Path
from typing import IO, Any

from helpers import HELPERS

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[1]
SERVER = str(HERE / "first_hour_server.py")
CALENDAR = str(ROOT / "examples" / "calendar" / "server.py")
RELAY = str(HELPERS / "client" / "checked_relay.py")


def checked(target: str, *run_args: str) -> str:
    """SERVER for a command: `mcpkit run target` behind the checking relay."""
    return shlex.join([sys.executable, RELAY, sys.executable, "-m", "mcpkit", "run", target,
                       *run_args])


def environ(tmp_path: Path, **extra: str) -> dict[str, str]:
    """The environment of a command: caches, data and the calendar in `tmp_path`."""
    return {**os.environ, "XDG_CACHE_HOME": str(tmp_path / "cache"),
            "XDG_DATA_HOME": str(tmp_path / "data"), "HOME": str(tmp_path / "home"),
            "CALENDAR_DB": str(tmp_path / "calendar.sqlite3"), **extra}


def mcpkit(tmp_path: Path, *args: str, stdin: str | None = "", devnull: bool = False,
           env: dict[str, str] | None = None, timeout: float = 60
           ) -> subprocess.CompletedProcess[str]:
    """`mcpkit ARGS` to completion; stdin is the text given, or /dev/null with `devnull`."""
    source: int | IO[Any] | None = subprocess.DEVNULL if devnull else None
    return subprocess.run([sys.executable, "-m", "mcpkit", *args],
                          input=None if devnull else stdin, stdin=source,
                          capture_output=True, text=True, cwd=ROOT, timeout=timeout,
                          env={**environ(tmp_path), **(env or {})})


