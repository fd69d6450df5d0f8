"""Running a command at a real terminal, as a person does: its stdin is a pseudo-terminal
holding the lines the person types, queued before the command starts, then the end of input
(Ctrl-D, as many times as a command might read again). Echo is off, so nothing but the command
itself writes to the terminal; stdout and stderr are pipes, read whole when it ends.

A command sees a terminal (`isatty()`), asks its questions there and reads one typed line per
answer: the dialogue a pipe no longer stands in for (piped lines are `--answers-from-stdin`'s
answers, one per field).
"""

from __future__ import annotations

import os
import pty
import subprocess
import termios
from collections.abc import Sequence
from pathlib import Path

__all__ = ["at_terminal"]

_END_OF_INPUT = "\x04" * 4
"""Ctrl-D at the start of a line: one end of input per read that meets it."""


def at_terminal(argv: Sequence[str], typed: Sequence[str], *, cwd: Path | str,
                env: dict[str, str], timeout: float = 60) -> subprocess.CompletedProcess[str]:
    """`argv` run to its end at a terminal where `typed` lines were typed."""
    leader, follower = pty.openpty()
    try:
        attrs = termios.tcgetattr(follower)
        attrs[3] &= ~termios.ECHO
        termios.tcsetattr(follower, termios.TCSANOW, attrs)
        os.write(leader, ("".join(f"{line}\n" for line in typed) + _END_OF_INPUT).encode())
        return subprocess.run(list(argv), stdin=follower, capture_output=True, text=True,
                              cwd=cwd, env=env, timeout=timeout)
    finally:
        os.close(follower)
        os.close(leader)
