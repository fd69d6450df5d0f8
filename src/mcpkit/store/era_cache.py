"""What a client remembers of a server's era between connections: `EraCache`.

A client decides a server's era by probing it (`mcpkit.client.era`); `EraCache` keeps that
decision per server key, in this process always and in a small JSON file when given a path, so
the next run skips a probe that is known to fail. The file is advisory: a wrong or unreadable
entry costs a re-probe, never a wrong answer, so every failure to read or write it is ignored.

Here, below `client/`, because it is state kept for later and needs nothing of the client but
the era names (`mcpkit.types.era`). It reads the wall clock only to date an entry. The standard
library and `mcpkit.types` only.
"""

from __future__ import annotations

import contextlib
import json
import os
import tempfile
import time
from dataclasses import dataclass
from typing import Any

from mcpkit.types.era import ERAS, Era

__all__ = [
    "EraCache",
    "Remembered",
]


@dataclass(frozen=True, slots=True)
class Remembered:
    era: Era
    version: str | None


class EraCache:
    """The decided era per server key: in memory, and in a JSON file when `path` is given.

    The file is small (at most `limit` servers, the most recent kept), rewritten atomically,
    and never trusted blindly: a wrong entry only costs a re-probe, and a file that cannot be
    read or written is ignored.
    """

    def __init__(self, path: str | os.PathLike[str] | None = None, *, limit: int = 200) -> None:
        self.path = os.fspath(path) if path is not None else None
        self.limit = limit
        self._entries: dict[str, dict[str, Any]] = {}
        self._loaded = False

    def _load(self) -> None:
        if self._loaded:
            return
        self._loaded = True
        if self.path is None:
            return
        try:
            with open(self.path, encoding="utf-8") as f:
                data = json.load(f)
        except (OSError, ValueError):
            return
        if type(data) is dict:
            for key, entry in data.items():
                if type(entry) is dict and entry.get("era") in ERAS:
                    self._entries[str(key)] = entry

    def get(self, key: str) -> Remembered | None:
        self._load()
        entry = self._entries.get(key)
        if entry is None:
            return None
        version = entry.get("version")
        return Remembered(entry["era"], version if type(version) is str else None)

    def put(self, key: str, era: Era, version: str | None) -> None:
        self._load()
        old = self._entries.get(key)
        if old is not None and old.get("era") == era and old.get("version") == version:
            return
        self._entries.pop(key, None)
        self._entries[key] = {"era": era, "version": version, "at": int(time.time())}
        while len(self._entries) > self.limit:
            self._entries.pop(next(iter(self._entries)))
        self._save()

    def forget(self, key: str) -> None:
        self._load()
        if self._entries.pop(key, None) is not None:
            self._save()

    def clear(self) -> None:
        """Forget every server (and empty the file, when there is one)."""
        self._loaded = True
        self._entries.clear()
        self._save()

    def _save(self) -> None:
        if self.path is None:
            return
        directory = os.path.dirname(os.path.abspath(self.path))
        try:
            os.makedirs(directory, exist_ok=True)
            fd, tmp = tempfile.mkstemp(prefix=".eras-", dir=directory)
            with os.fdopen(fd, "w", encoding="utf-8") as f:
                json.dump(self._entries, f, indent=1, sort_keys=True)
            os.replace(tmp, self.path)
        except OSError:
            with contextlib.suppress(OSError, UnboundLocalError):
                os.unlink(tmp)
