"""Where the state of legacy (2025-11-25) HTTP sessions lives between requests: the
`SessionStore` interface and its bounded in-memory implementation.

A store keeps each session's state by its `Mcp-Session-Id`, never looking into it (for the HTTP
endpoint, a small serialisable `mcpkit.legacy.session.LegacyState`), so a shared backend can
hold it for several instances. The clock is passed in. The standard library only.
"""

from __future__ import annotations

import time
from collections import OrderedDict
from collections.abc import Callable
from typing import Generic, Protocol, TypeVar

__all__ = ["MemorySessionStore", "SessionStore"]

S = TypeVar("S")


class SessionStore(Protocol[S]):
    """Where sessions' state (a legacy session's `LegacyState`) lives between requests."""

    async def create(self, session_id: str, state: S) -> None: ...

    async def load(self, session_id: str) -> S | None:
        """The session's state, or None when it never existed, ended or expired."""

    async def save(self, session_id: str, state: S) -> None: ...

    async def delete(self, session_id: str) -> bool:
        """End the session; False when there was none."""


class MemorySessionStore(Generic[S]):
    """Sessions in this process: bounded in number (least recently used go first) and ended
    after `idle_s` without a request, so abandoned sessions cannot pile up."""

    def __init__(self, max_sessions: int = 10_000, idle_s: float = 3600.0,
                 clock: Callable[[], float] = time.monotonic) -> None:
        self.max_sessions = max_sessions
        self.idle_s = idle_s
        self._clock = clock
        self._sessions: OrderedDict[str, tuple[S, float]] = OrderedDict()

    async def create(self, session_id: str, state: S) -> None:
        sessions = self._sessions
        now = self._clock()
        while sessions:
            oldest, (_, seen) = next(iter(sessions.items()))
            if len(sessions) < self.max_sessions and now - seen < self.idle_s:
                break
            del sessions[oldest]
        sessions[session_id] = (state, now)

    async def load(self, session_id: str) -> S | None:
        entry = self._sessions.get(session_id)
        if entry is None:
            return None
        now = self._clock()
        if now - entry[1] >= self.idle_s:
            del self._sessions[session_id]
            return None
        self._sessions[session_id] = (entry[0], now)
        self._sessions.move_to_end(session_id)
        return entry[0]

    async def save(self, session_id: str, state: S) -> None:
        if session_id in self._sessions:
            self._sessions[session_id] = (state, self._clock())

    async def delete(self, session_id: str) -> bool:
        return self._sessions.pop(session_id, None) is not None

    def __len__(self) -> int:
        return len(self._sessions)
