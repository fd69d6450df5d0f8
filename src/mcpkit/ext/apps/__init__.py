"""MCP Apps (SEP-1865, `io.modelcontextprotocol/ui`) for servers: views a host renders in a
sandboxed iframe, and the tools whose results they show.

    from mcpkit.ext import apps

    apps.add_view(server, "ui://calendar/week", Path("week.html"), prefers_border=True)
    apps.link(server, "create_event", "ui://calendar/week")

The view itself talks to its host over `postMessage`; the server only serves the view and
says which tools it belongs to (docs/apps.md). `ui_meta` builds and checks the `_meta.ui`
shapes without I/O; `views` registers them on a `Server`.
"""

from __future__ import annotations

from mcpkit.ext.apps.ui_meta import (
    FLAT_RESOURCE_URI,
    MIME_TYPE,
    PERMISSIONS,
    VISIBILITY,
    Csp,
    declares_views,
    tool_ui,
    view_ui,
)
from mcpkit.ext.apps.views import add_view, link, shows_views
from mcpkit.protocol.extensions import APPS

__all__ = [
    "APPS",
    "FLAT_RESOURCE_URI",
    "MIME_TYPE",
    "PERMISSIONS",
    "VISIBILITY",
    "Csp",
    "add_view",
    "declares_views",
    "link",
    "shows_views",
    "tool_ui",
    "view_ui",
]
