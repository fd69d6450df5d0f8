"""The client's result cache, driven by the server's `ttlMs` and `cacheScope` hints (CACHE).

A result is stored under its method and the params that shape it (`cursor` for a list page,
`uri` for a read): never served for anything else (CACHE-6). It is fresh while
`now < received + ttlMs`; a missing or negative `ttlMs` means 0, which stores nothing
(CACHE-3). `input_required` results and the results of retries are never stored (CACHE-2): the
caller only offers plain complete results. A list-changed or resource-updated notification
drops what it makes stale (CACHE-7). Each `Client` has its own cache, so `private` entries never
cross authorization contexts (CACHE-5).

The clock is passed in, so the rules are tested without waiting.

May import `mcpkit.types`; does no I/O.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

from mcpkit.types.methods import Method

__all__ = ["ResultCache"]

Key = tuple[str, Any]

_LIST_OF = {
    Method.TOOLS_LIST_CHANGED: (Method.TOOLS_LIST,),
    Method.PROMPTS_LIST_CHANGED: (Method.PROMPTS_LIST,),
    Method.RESOURCES_LIST_CHANGED: (Method.RESOURCES_LIST, Method.RESOURCES_TEMPLATES_LIST),
}


class ResultCache:
    """Fresh results by (method, shaping param); bounded in entries."""

    def __init__(self, clock: Callable[[], float] = time.monotonic, max_entries: int = 1024):
        self._clock = clock
        self._max = max_entries
        self._entries: dict[Key, tuple[float, dict[str, Any]]] = {}

    def get(self, method: str, arg: Any = None) -> dict[str, Any] | None:
        key = (method, arg)
        entry = self._entries.get(key)
        if entry is None:
            return None
        expires, result = entry
        if self._clock() >= expires:
            del self._entries[key]
            return None
        return result

    def put(self, method: str, arg: Any, result: dict[str, Any]) -> None:
        ttl = result.get("ttlMs")
        if type(ttl) is not int or ttl <= 0:
            return
        if len(self._entries) >= self._max:
            self._evict()
        self._entries[(method, arg)] = (self._clock() + ttl / 1000.0, result)

    def _evict(self) -> None:
        now = self._clock()
        for key in [k for k, (expires, _) in self._entries.items() if expires <= now]:
            del self._entries[key]
        while len(self._entries) >= self._max:
            del self._entries[next(iter(self._entries))]

    def drop(self, method: str) -> None:
        """Forget every entry of `method` (all pages of a list, every read)."""
        for key in [k for k in self._entries if k[0] == method]:
            del self._entries[key]

    def drop_resource(self, uri: str) -> None:
        """Forget reads of `uri`, of anything under it and of what contains it."""
        for key in [
            k for k in self._entries
            if k[0] == Method.RESOURCES_READ and _related(str(k[1]), uri)
        ]:
            del self._entries[key]

    def invalidate(self, notification: dict[str, Any]) -> None:
        """Drop what a server notification says has changed."""
        method = notification.get("method")
        methods = _LIST_OF.get(method)  # type: ignore[arg-type]
        if methods is not None:
            for m in methods:
                self.drop(m)
        elif method == Method.RESOURCE_UPDATED:
            params = notification.get("params")
            uri = params.get("uri") if type(params) is dict else None
            if type(uri) is str:
                self.drop_resource(uri)

    def clear(self) -> None:
        self._entries.clear()

    def __len__(self) -> int:
        return len(self._entries)


def _related(cached: str, changed: str) -> bool:
    if cached == changed:
        return True
    return changed.startswith(cached.rstrip("/") + "/") or cached.startswith(
        changed.rstrip("/") + "/"
    )
