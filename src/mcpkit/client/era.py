"""Which era a server speaks: reading the `server/discover` probe, and remembering the answer.

`read_probe` is the decision table of the probing algorithm (VER-9 for stdio, VER-12 for HTTP)
as a pure function of what came back: a `DiscoverResult` means modern at the highest version
both sides speak; a recognised modern error (-32022, -32021, -32020) means modern, with a version
taken from `data.supported` when the server named some; anything else (-32601, -32602, any
other error, a result that is not a DiscoverResult, silence, an HTTP 4xx without a modern error
body) means legacy. The fallback is never keyed to one error code (VER-10).

`Era` is the one era type (`mcpkit.types.era`), importable from here as well.

`EraCache` remembers the decision per server (`Connector.key`): in this process always, and in
a small JSON file when given a path, so the next run skips a probe that is known to fail.

May import `mcpkit.types` and `mcpkit.errors`; does no I/O but the cache file.
"""

from __future__ import annotations

import contextlib
import json
import os
import tempfile
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from mcpkit.errors import MCPError
from mcpkit.types.constants import LEGACY_VERSIONS, MODERN_VERSION
from mcpkit.types.era import ERAS, LEGACY, MODERN, Era

__all__ = [
    "MODERN_ERROR_CODES",
    "Era",
    "EraCache",
    "NoCommonVersionError",
    "ProbeOutcome",
    "read_probe",
]

MODERN_ERROR_CODES = frozenset({-32020, -32021, -32022})
"""Errors only a modern server sends: receiving one proves the server is modern (VER-9 b)."""

MODERN_CLIENT_VERSIONS: tuple[str, ...] = (MODERN_VERSION,)
"""Modern versions this client speaks, newest first."""


class NoCommonVersionError(MCPError):
    """The server speaks no protocol version this client speaks (raised locally)."""


@dataclass(frozen=True, slots=True)
class ProbeOutcome:
    era: Era
    version: str | None
    """The modern version to use; None for legacy (initialize negotiates it)."""
    discover: dict[str, Any] | None = None
    """The DiscoverResult, when the probe got one for `version`."""
    retry: bool = False
    """Modern, but the probe must be sent again with `version` (it named another one)."""


def _is_discover_result(result: Any) -> bool:
    return (
        type(result) is dict
        and type(result.get("supportedVersions")) is list
        and type(result.get("capabilities")) is dict
    )


def _choose(supported: Sequence[Any], ours: Sequence[str], sent: str, origin: str) -> ProbeOutcome:
    common = sorted((v for v in supported if v in ours), reverse=True)
    if common:
        return ProbeOutcome(MODERN, common[0], retry=common[0] != sent)
    if any(v in LEGACY_VERSIONS for v in supported):
        return ProbeOutcome(LEGACY, None)
    raise NoCommonVersionError(
        f"server/discover: the server supports {', '.join(map(str, supported)) or 'no versions'} "
        f"({origin}); this client speaks {', '.join(ours)} and {', '.join(LEGACY_VERSIONS[:1])}"
    )


def read_probe(
    response: Mapping[str, Any] | None,
    sent: str,
    ours: Sequence[str] = MODERN_CLIENT_VERSIONS,
) -> ProbeOutcome:
    """Decide the era from the response to a `server/discover` sent with version `sent`.

    `response` is the JSON-RPC response message, or None when none came (a timeout, or an
    HTTP error without a JSON-RPC body).
    """
    if response is None:
        return ProbeOutcome(LEGACY, None)
    error = response.get("error")
    if type(error) is dict:
        code = error.get("code")
        if code not in MODERN_ERROR_CODES:
            return ProbeOutcome(LEGACY, None)
        data = error.get("data")
        supported = data.get("supported") if type(data) is dict else None
        if code == -32022 and type(supported) is list:
            outcome = _choose(supported, ours, sent, "as listed in its -32022 error")
            return ProbeOutcome(outcome.era, outcome.version, retry=outcome.era == MODERN)
        return ProbeOutcome(MODERN, sent)
    result = response.get("result")
    if not _is_discover_result(result):
        # Some legacy servers answer any method with an empty result (CONF note on VER).
        return ProbeOutcome(LEGACY, None)
    assert type(result) is dict
    outcome = _choose(result["supportedVersions"], ours, sent, "in its DiscoverResult")
    if outcome.era == MODERN and not outcome.retry:
        return ProbeOutcome(MODERN, outcome.version, discover=result)
    return outcome


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


PROCESS_ERAS = EraCache()
"""Decisions made in this process, shared by every Client (VER-13)."""
