"""`server/discover`: what a modern client learns of the server before anything else.

The result (the versions served, the capabilities, the instructions) is built once and kept
with the list pages until the registry changes, since every client opens with it.

Imports `mcpkit.types`, and `mcpkit.server.context` (which imports none of the server's modules that import this one).
"""

from __future__ import annotations

from typing import Any

from mcpkit.server.context import Context
from mcpkit.types.constants import SUPPORTED_VERSIONS

__all__ = ["discover"]


async def discover(params: dict[str, Any], ctx: Context) -> dict[str, Any]:
    server = ctx.server
    cached: dict[str, Any] | None = server.result_cache.get("discover")
    if cached is None:
        cached = {
            "resultType": "complete",
            "supportedVersions": list(SUPPORTED_VERSIONS),
            "capabilities": server.capabilities(),
        }
        if server.instructions:
            cached["instructions"] = server.instructions
        server.options.list_cache.apply(cached)
        cached["_meta"] = server.result_meta
        server.result_cache["discover"] = cached
    return cached
