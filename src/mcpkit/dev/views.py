"""MCP App views made ready for the sandbox: the document, what its `_meta.ui` asks for, and
the Content Security Policy the sandbox frame is served with.

A web host shows a view through a sandbox proxy on an origin of its own (SEP-1865): here the
app's second port. The proxy frame is served with the view's policy as an HTTP header, which
a meta tag in the view could not loosen, and the view's document, written into the proxy's
inner frame, inherits it. The policy is built from the origins the view declares, each one
checked as the server side checks them (`mcpkit.ext.apps.Csp`): a view from a server nobody
here wrote that names a CSP keyword, a path or `*` is refused with the reason, never served
with a looser policy than it asked for. With nothing declared, the spec's restrictive default:
inline scripts and styles, `data:` images and media, no network, no frames.

Pure: no I/O.
"""

from __future__ import annotations

import base64
import binascii
import secrets
from collections import OrderedDict
from dataclasses import dataclass
from typing import Any, Final

from mcpkit.errors import ViewError
from mcpkit.ext.apps import MIME_TYPE, Csp, view_ui

__all__ = [
    "KEPT",
    "View",
    "Views",
    "policy",
]

KEPT: Final = 64
"""Views kept ready at once; the oldest is dropped first."""
_PERMISSION_POLICY: Final = {"camera": "camera", "microphone": "microphone",
                             "geolocation": "geolocation", "clipboardWrite": "clipboard-write"}


@dataclass(frozen=True, slots=True)
class View:
    ident: str
    uri: str
    html: str
    ui: dict[str, Any]
    """The checked `_meta.ui` (csp, permissions, prefersBorder)."""

    @property
    def policy(self) -> str:
        return policy(self.ui.get("csp") or {})

    @property
    def allow(self) -> str:
        """The frames' `allow` attribute: the browser permissions the view asked for."""
        return "; ".join(_PERMISSION_POLICY[p] for p in self.ui.get("permissions") or {})

    def to_page(self, frame: str) -> dict[str, Any]:
        return {"id": self.ident, "uri": self.uri, "html": self.html, "ui": self.ui,
                "policy": self.policy, "allow": self.allow, "frame": frame}


def policy(csp: dict[str, list[str]]) -> str:
    """The Content Security Policy of a view's checked `csp` object."""
    none, own = "'none'", "'self'"

    def listed(field: str, otherwise: str) -> str:
        return " ".join(csp.get(field) or ()) or otherwise

    resources = " ".join(csp.get("resourceDomains") or ())
    extra = f" {resources}" if resources else ""
    return "; ".join([
        "default-src 'none'",
        f"script-src 'self' 'unsafe-inline'{extra}",
        f"style-src 'self' 'unsafe-inline'{extra}",
        f"img-src 'self' data:{extra}",
        f"font-src 'self'{extra}",
        f"media-src 'self' data:{extra}",
        f"connect-src {listed('connectDomains', none)}",
        f"frame-src {listed('frameDomains', none)}",
        "object-src 'none'",
        f"base-uri {listed('baseUriDomains', own)}",
        "form-action 'none'",
    ])


def _checked_ui(uri: str, ui: Any) -> dict[str, Any]:
    if ui is None:
        return {}
    if not isinstance(ui, dict):
        raise ViewError(f"MCP App view {uri!r}: _meta.ui is not an object")
    csp = ui.get("csp") or {}
    if not isinstance(csp, dict):
        raise ViewError(f"MCP App view {uri!r}: _meta.ui.csp is not an object")
    permissions = ui.get("permissions") or {}
    if not isinstance(permissions, dict):
        raise ViewError(f"MCP App view {uri!r}: _meta.ui.permissions is not an object")
    border = ui.get("prefersBorder")
    try:
        checked = view_ui(
            csp=Csp(connect_domains=csp.get("connectDomains") or (),
                    resource_domains=csp.get("resourceDomains") or (),
                    frame_domains=csp.get("frameDomains") or (),
                    base_uri_domains=csp.get("baseUriDomains") or ()),
            permissions=list(permissions), prefers_border=border if isinstance(border, bool)
            else None, where=f"MCP App view {uri!r}")
    except (ValueError, TypeError) as exc:
        raise ViewError(f"{exc}; the view is not shown rather than shown under a looser "
                        "policy than it declared") from None
    return checked


class Views:
    """The views prepared in this run, by id."""

    def __init__(self) -> None:
        self._views: OrderedDict[str, View] = OrderedDict()

    def add(self, uri: str, read: dict[str, Any]) -> View:
        """The view of `read` (a ReadResourceResult of `uri`), checked and kept."""
        contents = read.get("contents")
        found = [c for c in contents if isinstance(c, dict)] if isinstance(contents, list) else []
        content = next((c for c in found if c.get("uri") == uri), found[0] if found else None)
        if content is None:
            raise ViewError(f"MCP App view {uri!r}: resources/read returned no contents")
        mime = content.get("mimeType")
        if mime != MIME_TYPE:
            raise ViewError(f"MCP App view {uri!r}: its mime type is {mime!r}, not {MIME_TYPE}")
        html = content.get("text")
        if not isinstance(html, str):
            blob = content.get("blob")
            try:
                html = base64.b64decode(blob, validate=True).decode("utf-8") if isinstance(
                    blob, str) else None
            except (binascii.Error, UnicodeDecodeError):
                html = None
        if html is None:
            raise ViewError(f"MCP App view {uri!r}: the contents hold neither text nor a base64 "
                            "blob of UTF-8 HTML")
        meta = content.get("_meta")
        view = View(secrets.token_urlsafe(16), uri, html,
                    _checked_ui(uri, meta.get("ui") if isinstance(meta, dict) else None))
        self._views[view.ident] = view
        while len(self._views) > KEPT:
            self._views.popitem(last=False)
        return view

    def get(self, ident: str) -> View | None:
        return self._views.get(ident)
