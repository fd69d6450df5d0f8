"""JSON files only their owner may read: the client's tokens and the CLI's sign-ins.

Both hold credentials, so both are refused when others may read them (reported, never fixed
silently: someone may already have read them) and written whole and at once (a crash mid-write
leaves the old file, never half a new one). The standard library only.
"""

from __future__ import annotations

import contextlib
import json
import os
import tempfile
from pathlib import Path
from typing import Any, Final

__all__ = [
    "read_private_json",
    "write_private_json",
]

_POSIX: Final = os.name == "posix"


def read_private_json(path: Path, unsafe: type[Exception], what: str) -> Any:
    """The JSON value in `path` (None when there is no file).

    Raises `unsafe(message)` when others may read the file or it is not JSON; `what` names
    the file in the message ("token file", "sign-in file").
    """
    try:
        with open(path, "rb") as handle:
            if _POSIX and os.fstat(handle.fileno()).st_mode & 0o077:
                raise unsafe(f"{path}: other users may read this {what}; make it private "
                             f"(chmod 600 {path}) or remove it")
            raw = handle.read()
    except FileNotFoundError:
        return None
    try:
        return json.loads(raw)
    except ValueError as exc:
        raise unsafe(f"{path}: not JSON ({exc}); remove the file to sign in again") from None


def write_private_json(path: Path, value: Any) -> None:
    """Write `value` to `path` as JSON, mode 0600, in a folder of mode 0700, atomically."""
    path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}-", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as handle:
            if _POSIX:
                os.fchmod(handle.fileno(), 0o600)
            json.dump(value, handle, indent=1, sort_keys=True)
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise
