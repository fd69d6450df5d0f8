"""The list methods' shared part: one page of a registry, and refusing a kind the server lacks.

Every list result (`tools/list`, `resources/list`, `resources/templates/list`, `prompts/list`)
is paged the same way: an opaque cursor bound to the registry's generation, the server's page
size, its list caching hint and `serverInfo`, and the page kept until the registry changes. A
method of a kind the server registered none of is unknown to it (-32601), naming the kind.

Imports `mcpkit.protocol`, `mcpkit.errors` and `mcpkit.types`; of the server it reads its view
`Listed` (`mcpkit.server.view`).
"""

from __future__ import annotations

from collections.abc import Callable, Hashable
from typing import Any

from mcpkit.errors import MethodNotFoundError
from mcpkit.protocol.cursor import decode_cursor, encode_cursor
from mcpkit.server.view import Listed
from mcpkit.types.methods import Method

__all__ = [
    "page",
    "require",
]


def require(server: object, kind: str, method: str) -> None:
    """Refuse `method` when the server offers no `kind` ("tools", "prompts")."""
    if not getattr(server, kind):
        raise MethodNotFoundError(
            f"Method not found: {method} (this server offers no {kind})", {"method": method}
        )


def page(server: Listed, kind: str, key: str, params: dict[str, Any],
         items: Callable[[], list[Any]], seen_by: Hashable | None = None
         ) -> dict[str, Any]:
    """The page of `kind`'s list that `params.cursor` points at, as a list result under `key`;
    `seen_by`: what the list was filtered by for this caller (its granted scopes,
    `mcpkit.server.scopes.viewer`; the tools a filter left out, `tool_filters`), which keys
    its cache beside the page."""
    method = f"{kind}/list" if kind != "templates" else Method.RESOURCES_TEMPLATES_LIST
    cursor = params.get("cursor")
    gen = server.generation
    offset = 0 if cursor is None else decode_cursor(method, cursor, gen)
    cache_key: tuple[Any, ...] = (kind, offset) if seen_by is None else (kind, offset, seen_by)
    cached = server.result_cache.get(cache_key)
    if cached is not None:
        return cached
    all_items = items()
    size = server.options.page_size
    chunk = all_items[offset : offset + size]
    result: dict[str, Any] = {"resultType": "complete", key: chunk}
    if offset + size < len(all_items):
        result["nextCursor"] = encode_cursor(offset + size, gen)
    server.options.list_cache.apply(result)
    result["_meta"] = server.result_meta
    server.result_cache[cache_key] = result
    return result
