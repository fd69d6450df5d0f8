"""`ResponseCachingMiddleware`: list pages and resource reads answered from memory for as long
as their own caching hints allow.

Every cacheable result says how long it stays fresh and for whom (CACHE-1: `ttlMs`,
`cacheScope`; `ServerOptions.list_cache`, `read_cache`, a resource's `cache=`). This link keeps
a result for its `ttlMs` and answers the same request from it meanwhile, without running the
links after it or the handler: a `public` result for every caller, a `private` one only for
the principal it was made for (never for callers without one, whom nothing tells apart; with
`ServerOptions.scoped_lists` every list is that principal's). A
result with `ttlMs` 0, an `input_required` round, a retry carrying `inputResponses` or a
`requestState`, an error and a resource whose function failed are never kept. What a
change makes stale is forgotten when the server announces it: every list when a list
changes, a resource's reads when `notify_resource_updated` names it (or a parent of it).

The key is the method, its params without `_meta` (the cursor of a page included) and the
client capabilities the request declared, so two clients asking the same thing share an entry; the entries live in this process, at most
`max_entries` of them, the least recently used going first.

Imports the server's middleware, sealing and subscriptions modules, and orjson.
"""

from __future__ import annotations

import threading
import weakref
from collections import OrderedDict
from collections.abc import Collection
from typing import Any, Final

import orjson

from mcpkit.server.middleware import CallNext, Middleware, MiddlewareContext
from mcpkit.server.sealing import principal_key
from mcpkit.server.subscriptions import Change
from mcpkit.types.methods import Method

__all__ = [
    "CACHED_METHODS",
    "ResponseCachingMiddleware",
]

CACHED_METHODS: Final = frozenset({
    Method.TOOLS_LIST, Method.RESOURCES_LIST, Method.RESOURCES_TEMPLATES_LIST,
    Method.PROMPTS_LIST, Method.RESOURCES_READ,
})
"""The methods whose results carry caching hints."""


class ResponseCachingMiddleware(Middleware):
    """Answer repeated list and read requests from memory within their `ttlMs`."""

    def __init__(self, *, max_entries: int = 1024, methods: Collection[str] | None = None
                 ) -> None:
        if type(max_entries) is not int or max_entries < 1:
            raise ValueError(f"ResponseCachingMiddleware: max_entries must be a positive "
                             f"integer, not {max_entries!r}")
        chosen = CACHED_METHODS if methods is None else frozenset(methods)
        if not chosen <= CACHED_METHODS:
            raise ValueError(f"ResponseCachingMiddleware caches only {sorted(CACHED_METHODS)}, "
                             f"not {sorted(chosen - CACHED_METHODS)}")
        self.methods = chosen
        self.max_entries = max_entries
        self._entries: OrderedDict[tuple[Any, ...], tuple[float, dict[str, Any]]] = OrderedDict()
        self._lock = threading.Lock()  # changes are announced from any thread
        self._watched: weakref.WeakSet[Any] = weakref.WeakSet()
        self.hits = 0
        self.misses = 0

    def __len__(self) -> int:
        return len(self._entries)

    def _watch(self, server: Any) -> None:
        if server not in self._watched:
            self._watched.add(server)
            ref = weakref.ref(server)

            def forget(change: Change) -> None:
                if ref() is not None:
                    self._forget(id(ref()), change)

            server.change_listeners.append(forget)

    def _forget(self, server_id: int, change: Change) -> None:
        with self._lock:
            for key in list(self._entries):
                if key[0] != server_id:
                    continue
                if change.kind == "resource":
                    uri = change.uri or ""
                    read = key[3]
                    if key[1] == Method.RESOURCES_READ and (
                            read == uri or read.startswith(uri.rstrip("/") + "/")):
                        del self._entries[key]
                elif key[1] != Method.RESOURCES_READ:
                    del self._entries[key]

    async def on_request(self, context: MiddlewareContext, call_next: CallNext
                         ) -> dict[str, Any]:
        params = context.params
        if "inputResponses" in params or "requestState" in params:
            return await call_next(context)
        server = context.server
        self._watch(server)
        asked = {k: v for k, v in params.items() if k != "_meta"}
        try:
            # What a list holds may depend on what the request declared (MCP Apps hides
            # tools from a caller without it), so the capabilities are part of the key.
            shape = orjson.dumps([asked, context.ctx.client_capabilities],
                                 option=orjson.OPT_SORT_KEYS)
        except TypeError:
            return await call_next(context)
        who = principal_key(context.principal)
        base = (id(server), context.method, shape, context.uri or "")
        now = server.options.clock()
        with self._lock:
            keys = [(*base, None)] if who is None else [(*base, None), (*base, who)]
            for key in keys:
                held = self._entries.get(key)
                if held is not None:
                    if held[0] > now:
                        self._entries.move_to_end(key)
                        self.hits += 1
                        return held[1]
                    del self._entries[key]
        self.misses += 1
        result = await call_next(context)
        ttl, scope = result.get("ttlMs"), result.get("cacheScope")
        if (result.get("resultType") != "complete" or result.get("isError") is True
                or type(ttl) is not int or ttl <= 0 or scope not in ("public", "private")):
            return result
        private = scope == "private" or (server.options.scoped_lists
                                          and context.method != Method.RESOURCES_READ)
        if private and who is None:
            return result
        key = (*base, who if private else None)
        with self._lock:
            self._entries[key] = (now + ttl / 1000, result)
            self._entries.move_to_end(key)
            while len(self._entries) > self.max_entries:
                self._entries.popitem(last=False)
        return result
