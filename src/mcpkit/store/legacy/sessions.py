"""Where the state of legacy (2025-11-25) HTTP sessions lives between requests: the
`SessionStore` interface and its bounded in-memory implementation.

A store keeps each session's state by its `Mcp-Session-Id`, never looking into it (for the HTTP
endpoint, a small serialisable `mcpkit.legacy.session.LegacyState`), so a shared backend can
hold it for several instances. The clock is passed in. The standard library only.

Opening a session is unauthenticated, so a store is also where a flood of them must not push
out the sessions of real users. Each session has a `SessionOwner` (the authenticated principal,
or the client's address), and `create` applies one policy, atomically (a shared store does it
in one transaction, so instances cannot race past it):

- an owner at its limit of live sessions (`owner_limit`) makes room by ending its own least
  recently used session, never someone else's;
- a full store makes room by ending the least recently used anonymous session; an
  authenticated owner's create may end an authenticated one when no anonymous one is left; an
  anonymous create never ends an authenticated session;
- when nothing may be ended, the create is refused (`create` returns False).
"""

from __future__ import annotations

import time
from collections import OrderedDict
from collections.abc import Callable
from dataclasses import dataclass
from typing import Final, Generic, Protocol, TypeVar

__all__ = [
    "ANONYMOUS",
    "MemorySessionStore",
    "SessionOwner",
    "SessionStore",
]

S = TypeVar("S")


@dataclass(frozen=True, slots=True)
class SessionOwner:
    """Who opened a session: `key` names the principal or the client's address, and
    `authenticated` says which (authenticated sessions are never ended for anonymous ones)."""

    key: str
    authenticated: bool = False


ANONYMOUS: Final = SessionOwner("anonymous")
"""The owner of a session created without one."""


class SessionStore(Protocol[S]):
    """Where sessions' state (a legacy session's `LegacyState`) lives between requests.

    `create` is the seam a shared store (PostgreSQL, Redis) implements with the policy above;
    a store written before owners existed (`create(session_id, state)` returning None) still
    works, without the per-owner limit or the eviction policy."""

    async def create(self, session_id: str, state: S, owner: SessionOwner = ANONYMOUS,
                     owner_limit: int | None = None) -> bool:
        """Keep a new session for `owner`, ending others as the policy allows to make room;
        False (nothing kept) when the store is full and none may be ended."""

    async def load(self, session_id: str) -> S | None:
        """The session's state, or None when it never existed, ended or expired."""

    async def save(self, session_id: str, state: S) -> None: ...

    async def delete(self, session_id: str) -> bool:
        """End the session; False when there was none."""


class _Entry(Generic[S]):
    __slots__ = ("owner", "seen", "state")

    def __init__(self, state: S, seen: float, owner: SessionOwner) -> None:
        self.state = state
        self.seen = seen
        self.owner = owner


class MemorySessionStore(Generic[S]):
    """Sessions in this process: bounded in number (`max_sessions`, made room for by the
    policy above) and ended after `idle_s` without a request, so abandoned sessions cannot
    pile up."""

    def __init__(self, max_sessions: int = 10_000, idle_s: float = 3600.0,
                 clock: Callable[[], float] = time.monotonic) -> None:
        self.max_sessions = max_sessions
        self.idle_s = idle_s
        self._clock = clock
        self._sessions: dict[str, _Entry[S]] = {}
        self._recent: dict[bool, OrderedDict[str, None]] = {False: OrderedDict(),
                                                             True: OrderedDict()}
        """Anonymous (False) and authenticated (True) sessions, least recently used first."""
        self._owned: dict[str, OrderedDict[str, None]] = {}
        """Each owner's sessions, least recently used first."""

    async def create(self, session_id: str, state: S, owner: SessionOwner = ANONYMOUS,
                     owner_limit: int | None = None) -> bool:
        now = self._clock()
        self._expire(now)
        mine = self._owned.get(owner.key)
        while owner_limit is not None and mine and len(mine) >= owner_limit:
            self._drop(next(iter(mine)))
        if len(self._sessions) >= self.max_sessions:
            victims = self._recent[False] or (self._recent[True] if owner.authenticated
                                              else None)
            if not victims:
                return False
            self._drop(next(iter(victims)))
        self._sessions[session_id] = _Entry(state, now, owner)
        self._recent[owner.authenticated][session_id] = None
        self._owned.setdefault(owner.key, OrderedDict())[session_id] = None
        return True

    async def load(self, session_id: str) -> S | None:
        entry = self._sessions.get(session_id)
        if entry is None:
            return None
        now = self._clock()
        if now - entry.seen >= self.idle_s:
            self._drop(session_id)
            return None
        self._touch(session_id, entry, now)
        return entry.state

    async def save(self, session_id: str, state: S) -> None:
        entry = self._sessions.get(session_id)
        if entry is not None:
            entry.state = state
            self._touch(session_id, entry, self._clock())

    async def delete(self, session_id: str) -> bool:
        return self._drop(session_id)

    def owned(self, owner: SessionOwner) -> int:
        """How many sessions `owner` has (expired ones included until they are swept)."""
        return len(self._owned.get(owner.key, ()))

    def __len__(self) -> int:
        return len(self._sessions)

    def _touch(self, session_id: str, entry: _Entry[S], now: float) -> None:
        entry.seen = now
        self._recent[entry.owner.authenticated].move_to_end(session_id)
        self._owned[entry.owner.key].move_to_end(session_id)

    def _expire(self, now: float) -> None:
        """End the sessions idle for `idle_s`: the least recently used come first."""
        for recent in self._recent.values():
            while recent:
                oldest = next(iter(recent))
                if now - self._sessions[oldest].seen < self.idle_s:
                    break
                self._drop(oldest)

    def _drop(self, session_id: str) -> bool:
        entry = self._sessions.pop(session_id, None)
        if entry is None:
            return False
        self._recent[entry.owner.authenticated].pop(session_id, None)
        mine = self._owned.get(entry.owner.key)
        if mine is not None:
            mine.pop(session_id, None)
            if not mine:
                del self._owned[entry.owner.key]
        return True
