"""MCP App views served by a `Server`: the `ui://` resources, the tools linked to them, and
what a caller that cannot show views is shown.

`add_view` registers the HTML as a resource of mime type `text/html;profile=mcp-app` with its
`_meta.ui` both in `resources/list` (for a host to review before any call) and on the contents
`resources/read` returns (where a host reads the sandbox settings), and offers the extension
in `server/discover`: a server offers MCP Apps exactly when it has a view. `link` points a
registered tool at a registered view (`_meta.ui.resourceUri`, plus the deprecated flat
`_meta["ui/resourceUri"]` older hosts read) and says who may call it.

A linked tool keeps returning its ordinary content: a host without Apps shows that text, and
a host with Apps hands the same result to the view (SEP-1865 requires meaningful `content`
either way). What changes per request is only the tool list: a tool meant for the view alone
(`visibility=["app"]`) is left out of `tools/list` for a request that did not declare the
extension with the view mime type, since that caller has no view to call it from and its
model must not see it. Calls are not refused; the host does that for the view (it rejects a
view's call to a tool without `"app"`), since the server cannot tell who is calling.

Imports `mcpkit.server` and `mcpkit.protocol` only.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from pathlib import Path
from typing import Any, cast

from mcpkit.ext.apps.ui_meta import (
    FLAT_RESOURCE_URI,
    MIME_TYPE,
    VISIBILITY,
    Csp,
    check_ui_uri,
    declares_views,
    tool_ui,
    view_ui,
)
from mcpkit.protocol.extensions import APPS
from mcpkit.server.content import Blob
from mcpkit.server.context import Context
from mcpkit.server.resources import CacheHint, Resource
from mcpkit.server.server import Server
from mcpkit.server.tools import Tool

__all__ = [
    "add_view",
    "link",
    "shows_views",
]

_DOCTYPE = re.compile(r"\A(?:\ufeff)?\s*(?:<!--.*?-->\s*)*<(?:!doctype\s+html[\s>]|html[\s>])",
                      re.IGNORECASE | re.DOTALL)


def shows_views(ctx: Context) -> bool:
    """Whether this request's client can show MCP App views: it declared the extension with
    the view mime type among its `mimeTypes`. A tool may use it to shorten its text for a host
    that shows the view, never to drop the text."""
    return declares_views(ctx.client_extension(APPS))


def _html(html: str | Path, where: str) -> str:
    """The view's document, read now so that a missing file or a fragment fails at start."""
    if isinstance(html, Path):
        try:
            text = html.read_text(encoding="utf-8")
        except FileNotFoundError:
            raise ValueError(f"{where}: no file at {str(html)!r}") from None
        except UnicodeDecodeError as exc:
            raise ValueError(f"{where}: {str(html)!r} is not UTF-8 text ({exc.reason})") from None
    elif isinstance(html, str):
        text = html
    else:
        raise TypeError(f"{where}: the view is HTML text (str) or a pathlib.Path to an HTML "
                        f"file, not {type(html).__name__}")
    if _DOCTYPE.match(text) is None:
        raise ValueError(f"{where}: the view is not an HTML document; MCP Apps needs a whole "
                         "HTML5 document, starting with <!DOCTYPE html>")
    return text


def add_view(
    server: Server,
    uri: str,
    html: str | Path,
    *,
    name: str | None = None,
    title: str | None = None,
    description: str | None = None,
    csp: Csp | None = None,
    permissions: Iterable[str] = (),
    domain: str | None = None,
    prefers_border: bool | None = None,
    cache: CacheHint | None = None,
) -> Resource:
    """Serve `html` (the text, or a Path read now) as the MCP App view at the `ui://` `uri`,
    with the sandbox it asks for (`csp`, `permissions`, `domain`, `prefers_border`), and
    offer the extension in `server/discover`. ValueError/TypeError, naming the view, for a URI
    that is not `ui://`, a CSP entry that is not an origin, an unknown permission, or a
    document that is not HTML."""
    where = f"MCP App view {uri!r}"
    check_ui_uri(uri, where)
    text = _html(html, where)
    ui = view_ui(csp=csp, permissions=permissions, domain=domain,
                 prefers_border=prefers_border, where=where)
    meta = {"ui": ui} if ui else None

    def view() -> Blob:
        return Blob(uri, text, MIME_TYPE, meta=meta)

    resource = server.add_resource(
        uri, view, name=name or uri.rstrip("/").rsplit("/", 1)[-1], title=title,
        description=description or "", mime_type=MIME_TYPE, meta=meta, cache=cache)
    if APPS not in server.extensions.offered:
        server.extension(APPS, {})
    return cast(Resource, resource)  # a checked ui:// URI has no {variables}: never a template


def _visible(tool: Tool, ctx: Context) -> bool:
    """The Apps filter of `tools/list`: a tool the model may call is listed to everyone, one
    meant for the view alone only to a caller that shows views."""
    meta = tool.definition.get("_meta")
    ui = meta.get("ui") if meta is not None else None
    if type(ui) is not dict or "model" in ui.get("visibility", VISIBILITY):
        return True
    return shows_views(ctx)


def link(server: Server, tool: str, view: str, *, visibility: Iterable[str] = VISIBILITY,
         flat_key: bool = True) -> None:
    """Show the results of the registered `tool` in the registered view `view`, callable by
    `visibility` (`"model"`, `"app"`, both by default). `flat_key`: also write the deprecated
    `_meta["ui/resourceUri"]` that hosts older than the stable spec read."""
    entry = server.tools.get(tool) if isinstance(tool, str) else None
    if entry is None:
        raise ValueError(f"MCP Apps: no tool named {tool!r} is registered; register it "
                         "(@server.tool()) before linking it to a view")
    where = f"tool {tool!r}"
    ui = tool_ui(view, visibility, where)
    resource = server.resources.get(view)
    if resource is None or resource.mime_type != MIME_TYPE:
        found = ("" if resource is None else
                 f" (a resource of mime type {resource.mime_type!r} has that URI)")
        raise ValueError(f"{where}: {view!r} is not a registered MCP App view{found}; add it "
                         f"first with add_view(server, {view!r}, html)")
    meta: dict[str, Any] = dict(entry.definition.get("_meta") or {})
    earlier = meta.get("ui")
    meta["ui"] = {**earlier, **ui} if isinstance(earlier, dict) else ui
    if flat_key:
        meta[FLAT_RESOURCE_URI] = view
    else:
        meta.pop(FLAT_RESOURCE_URI, None)
    entry.definition["_meta"] = meta
    if "model" not in ui["visibility"] and _visible not in server.tool_filters:
        server.add_tool_filter(_visible)  # clears the cached lists too
    else:
        server.notify_tools_changed()
