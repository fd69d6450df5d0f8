"""The page's files, shipped in the wheel under `mcpkit/dev/static/`, and the headers they go
with.

Plain files, no build step: the page is HTML, one stylesheet and ES modules the browser loads
as they are, so what runs is what is reviewed. The table of files is read from the folder
once, and only its exact names are served (no path from a request ever reaches the file
system). `sandbox/` holds the MCP Apps sandbox proxy, served on the sandbox origin only.

Every page response forbids what the page does not do: its policy allows scripts, styles and
requests from the app itself alone (no CDN, no web font, no other host), images and media
from `data:` and `blob:` (a tool's image content), and frames from the sandbox origin only;
it may not be framed, and it sends no referrer (so the token in its address goes nowhere).
"""

from __future__ import annotations

import functools
from importlib.resources import files
from importlib.resources.abc import Traversable
from typing import Final

__all__ = [
    "SANDBOX",
    "TYPES",
    "file_table",
    "frame_headers",
    "page_headers",
    "sandbox_frame",
]

TYPES: Final = {".html": "text/html; charset=utf-8", ".js": "text/javascript; charset=utf-8",
                ".css": "text/css; charset=utf-8", ".svg": "image/svg+xml"}
SANDBOX: Final = "sandbox"
"""The folder of the sandbox origin's files."""
_COMMON: Final = [(b"x-content-type-options", b"nosniff"), (b"referrer-policy", b"no-referrer"),
                  (b"cache-control", b"no-store")]


def _walk(folder: Traversable, prefix: str = "") -> dict[str, tuple[bytes, str]]:
    out: dict[str, tuple[bytes, str]] = {}
    for item in folder.iterdir():
        name = prefix + item.name
        if item.is_dir():
            out.update(_walk(item, name + "/"))
            continue
        suffix = "." + item.name.rsplit(".", 1)[-1]
        if suffix in TYPES:
            out[name] = (item.read_bytes(), TYPES[suffix])
    return out


@functools.cache
def file_table() -> dict[str, tuple[bytes, str]]:
    """Served name -> (content, content type), for every file in the static folder."""
    table = _walk(files("mcpkit.dev") / "static")
    table[""] = table["index.html"]
    return table


def page_headers(content_type: str, sandbox_origin: str) -> list[tuple[bytes, bytes]]:
    policy = ("default-src 'none'; script-src 'self'; style-src 'self'; "
              "img-src 'self' data: blob:; media-src 'self' data: blob:; connect-src 'self'; "
              f"frame-src {sandbox_origin}; base-uri 'none'; form-action 'none'; "
              "frame-ancestors 'none'")
    return [(b"content-type", content_type.encode()),
            (b"content-security-policy", policy.encode()), (b"x-frame-options", b"DENY"),
            (b"cross-origin-resource-policy", b"same-origin"), *_COMMON]


def frame_headers(view_policy: str, page_origin: str) -> list[tuple[bytes, bytes]]:
    """A view's sandbox frame: its declared policy, and framed by the page alone."""
    policy = f"{view_policy}; frame-ancestors {page_origin}"
    return [(b"content-type", TYPES[".html"].encode()),
            (b"content-security-policy", policy.encode()), *_COMMON]


def sandbox_frame(page_origin: str, allow: str) -> bytes:
    """The sandbox proxy's document for one view: it trusts messages from `page_origin` only
    and grants the inner frame the permissions in `allow`."""
    template, _ = file_table()[f"{SANDBOX}/frame.html"]
    return (template.replace(b"{{HOST}}", page_origin.encode())
            .replace(b"{{ALLOW}}", _attribute(allow).encode()))


def _attribute(text: str) -> str:
    return (text.replace("&", "&amp;").replace('"', "&quot;").replace("<", "&lt;")
            .replace(">", "&gt;"))
