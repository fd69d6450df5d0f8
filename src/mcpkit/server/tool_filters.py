"""Which tools one request sees in `tools/list`: the scope check and the per-request filters.

A filter is a predicate `(tool, ctx) -> bool` an extension adds with `Server.add_tool_filter`:
MCP Apps, for one, leaves a tool meant only for its views out of the list a request gets when
that request did not declare the extension. Since what is left out differs between callers, a
filtered page is cached under the names left out beside the page's offset, so a page built for
one kind of caller is never served to another. A server without filters takes the path it took
before they existed: no predicate is called and the page is cached as before.

Filters hide a tool from a list; they do not refuse calls to it. The server cannot tell a call
a model makes from one an app makes through its host, so that check belongs to the host (MCP
Apps says so: the host rejects an app's call to a tool not meant for apps).

Imports nothing outside `mcpkit.server`; `Tool` and `Context` only for their types.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from mcpkit.server.listing import page
from mcpkit.server.scopes import viewer, visible

if TYPE_CHECKING:
    from mcpkit.server.context import Context
    from mcpkit.server.tools import Tool

__all__ = [
    "ToolFilter",
    "tool_page",
]

ToolFilter = Callable[["Tool", "Context"], bool]
"""Whether this request's `tools/list` shows the tool; every filter must admit it."""


def tool_page(params: dict[str, Any], ctx: Context) -> dict[str, Any]:
    """The page of `tools/list` that `params.cursor` points at, as this caller sees it."""
    server = ctx.server
    seen_by = viewer(ctx)
    filters = server.tool_filters
    if not filters:
        return page(server, "tools", "tools", params,
                    lambda: visible(server.tools.values(), ctx, seen_by), seen_by)
    shown = [tool for tool in server.tools.values() if all(f(tool, ctx) for f in filters)]
    hidden = frozenset(server.tools.keys() - {tool.name for tool in shown})
    return page(server, "tools", "tools", params,
                lambda: visible(shown, ctx, seen_by), (seen_by, hidden))
