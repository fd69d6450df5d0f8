"""Walking a paginated list (PAG) through the cache, one page at a time.

Each page is cached under its own cursor with its own `ttlMs` (CACHE-8); cursors are opaque
and an empty string is a cursor like any other (PAG-3). A cursor the server no longer accepts
(-32602) drops every cached page of that list and starts once more from the top. A
`tools/list` page is vetted when it arrives, so the cached page holds only usable tools, and
the rejected ones travel with it (under a key no wire result has) to be reported again.

May import `mcpkit.types`, `mcpkit.errors`.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any

from mcpkit.client.cache import ResultCache
from mcpkit.client.core import ClientCore
from mcpkit.client.tools import RejectedTool, vet_tools
from mcpkit.errors import InvalidParamsError, ProtocolViolation
from mcpkit.types.methods import Method

__all__ = [
    "DEFAULT_MAX_LIST_ITEMS",
    "MAX_PAGES",
    "list_all",
    "list_through_cache",
]

MAX_PAGES = 10_000
"""Most pages one list may have; a server past it is stuck in a loop."""
DEFAULT_MAX_LIST_ITEMS = 10_000
"""Most items one list may gather over all its pages (`ClientOptions.max_list_items`). Each
tool is vetted and kept in memory, and the whole list is handed to the application (often to
a model) at once: a server offering more is either broken, paging for ever with fresh cursors,
or out to exhaust the client. Ten thousand tools are already far past what a model can use."""

_REJECTED = "\x00rejected"


def _complete(method: str, key: str, page: dict[str, Any], seen: int, limit: int
              ) -> dict[str, Any]:
    """`page` checked and vetted. `seen` items came on earlier pages and `limit` bounds them
    all; the bound is checked before a single tool is vetted (vetting is the costly part)."""
    kind = page.get("resultType", "complete")
    if kind != "complete":
        raise ProtocolViolation(
            f"{method}: the server answered with resultType {kind!r}; list results are always "
            "complete (MRTR-4)"
        )
    if type(page.get(key)) is not list:
        raise ProtocolViolation(f"{method}: the result has no {key} list")
    if seen + len(page[key]) > limit:
        raise ProtocolViolation(
            f"{method}: the server lists more than {limit} {key} (ClientOptions.max_list_items"
            f"); stopped paging after {seen + len(page[key])}")
    if method == Method.TOOLS_LIST:
        kept, dropped = vet_tools(page[key])
        if dropped:
            return {**page, key: kept, _REJECTED: dropped}
    return page


async def list_all(
    fetch: Callable[[str | None], Awaitable[dict[str, Any]]],
    cache: ResultCache | None,
    method: str,
    key: str,
    limit: int = DEFAULT_MAX_LIST_ITEMS,
) -> tuple[list[dict[str, Any]], list[RejectedTool]]:
    """Every item of every page (fetched, or fresh from `cache`), and the rejected tools; more
    than `limit` items in all is a ProtocolViolation naming the option."""
    items: list[dict[str, Any]] = []
    rejected: list[RejectedTool] = []
    cursor: str | None = None
    seen: set[str] = set()
    restarted = False
    while True:
        page = cache.get(method, cursor) if cache is not None else None
        if page is None:
            try:
                page = _complete(method, key, await fetch(cursor),
                                 len(items) + len(rejected), limit)
            except InvalidParamsError:
                if cursor is None or restarted or cache is None:
                    raise
                # An expired cursor: every cached page is suspect; start over (CACHE-8).
                cache.drop(method)
                restarted, cursor, items, rejected, seen = True, None, [], [], set()
                continue
            if cache is not None:
                cache.put(method, cursor, page)
        items.extend(page[key])
        rejected.extend(page.get(_REJECTED, ()))
        cursor = page.get("nextCursor")
        if cursor is None:
            return items, rejected
        if type(cursor) is not str or cursor in seen:
            raise ProtocolViolation(
                f"{method}: the server's nextCursor {cursor!r} repeats or is not a string; "
                "stopped paging"
            )
        if len(seen) >= MAX_PAGES:
            raise ProtocolViolation(
                f"{method}: the server is still paging after {MAX_PAGES} pages; stopped paging")
        seen.add(cursor)


async def list_through_cache(
    core: ClientCore, method: str, key: str, fresh: bool
) -> tuple[list[dict[str, Any]], list[RejectedTool]]:
    """Every item of a client's list `method`, through its cache (`fresh` drops the cached
    pages first); without the cache, pages are fetched but still stored, fresh."""

    async def fetch(cursor: str | None) -> dict[str, Any]:
        fields: dict[str, Any] = {} if cursor is None else {"cursor": cursor}
        return await core.send(method, core.params(fields))

    cache = core.cache if core.options.cache else None
    if fresh and cache is not None:
        cache.drop(method)
    return await list_all(fetch, cache, method, key, core.options.max_list_items)
