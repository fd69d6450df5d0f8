"""The proxy's consent page, and the pages it shows when it will not redirect, without I/O.

The upstream identity provider sees one client, the proxy, so its own consent ("Allow
<this server> to read your profile?") is given once and then skipped: without a consent of
the proxy's own, any MCP client that registers could ride that upstream consent and get a
token for the user with one click the user never saw (the confused deputy of the MCP
specification's security guidance). So every authorization shows this page first: which
client (its name as it registered it, marked unverified, or the host of its metadata document,
which vouches for it), where the browser goes back to, the scopes, and the provider the user
signs in at next.

The page is the user's only defence, so it is protected as one:

- **CSRF.** The decision is a POST carrying the pending authorization's id and a token that
  is an HMAC of that id and the browser's own cookie (`__Host-` prefixed over https,
  `SameSite=Lax`, `HttpOnly`): another site cannot post a decision for the user, and a
  decision made in one browser cannot be replayed from another;
- **clickjacking.** `Content-Security-Policy: frame-ancestors 'none'` and
  `X-Frame-Options: DENY`, so no page can frame it under a decoy button; the policy also
  allows no script and no resource from elsewhere;
- **leaks.** `Cache-Control: no-store`, and `Referrer-Policy: same-origin`: no address of
  the proxy's reaches another site, while the decision's POST still says its own `Origin`
  (under `no-referrer` a browser sends `Origin: null`, which the check must refuse).

Everything shown was written by someone else (a client's name, a redirect URI): each value is
HTML-escaped, and control and bidirectional characters are removed before it is shown.
"""

from __future__ import annotations

import hashlib
import hmac
import html
import unicodedata
from collections.abc import Iterable
from typing import Final
from urllib.parse import urlsplit

from mcpkit.auth.proxy.clients import ClientRecord

__all__ = [
    "COOKIE",
    "PAGE_HEADERS",
    "browser_binding",
    "consent_page",
    "csrf_token",
    "error_page",
    "read_cookie",
]

COOKIE: Final = "mcpkit-proxy"
"""The browser cookie's name (with `__Host-` before it over https)."""
PAGE_HEADERS: Final = (
    (b"content-type", b"text/html; charset=utf-8"),
    (b"cache-control", b"no-store"),
    (b"pragma", b"no-cache"),
    (b"referrer-policy", b"same-origin"),
    (b"x-frame-options", b"DENY"),
    (b"x-content-type-options", b"nosniff"),
    (b"content-security-policy",
     b"default-src 'none'; style-src 'unsafe-inline'; frame-ancestors 'none'; "
     b"base-uri 'none'"),
)
_STYLE: Final = ("body{font-family:system-ui,sans-serif;max-width:32rem;margin:3rem auto;"
                 "padding:0 1rem;color:#222}h1{font-size:1.3rem}.note{color:#666;"
                 "font-size:.9rem}form{display:inline-block;margin-right:.5rem}"
                 "button{font-size:1rem;padding:.5rem 1.2rem}code{word-break:break-all}")


def cookie_name(secure: bool) -> str:
    return f"__Host-{COOKIE}" if secure else COOKIE


def read_cookie(header: str | None, secure: bool) -> str | None:
    """The proxy's browser id from a `Cookie` header (None without one)."""
    if not header:
        return None
    wanted = cookie_name(secure)
    for part in header.split(";"):
        name, _, value = part.strip().partition("=")
        if name == wanted and 16 <= len(value) <= 128 and value.isascii() and value.isalnum():
            return value
    return None


def set_cookie(value: str, secure: bool, max_age_s: float) -> bytes:
    """The `Set-Cookie` header value holding the browser id."""
    attrs = f"{cookie_name(secure)}={value}; Path=/; Max-Age={int(max_age_s)}; HttpOnly; " \
            "SameSite=Lax"
    return (attrs + ("; Secure" if secure else "")).encode("ascii")


def browser_binding(browser: str) -> str:
    """What a pending authorization keeps of the browser's id: its digest."""
    return hashlib.sha256(b"mcpkit proxy browser\0" + browser.encode()).hexdigest()


def csrf_token(key: bytes, pending: str, browser: str) -> str:
    """The token a consent form carries: bound to this pending authorization and browser."""
    return hmac.new(key, f"consent\0{pending}\0{browser}".encode(), hashlib.sha256).hexdigest()


def _shown(text: str, limit: int = 120) -> str:
    """Someone else's text, safe to show: no control, format (bidi) or unassigned
    characters, cut to `limit`, HTML-escaped."""
    kept = "".join(c for c in text if unicodedata.category(c)[0] != "C")
    if len(kept) > limit:
        kept = kept[:limit] + "…"
    return html.escape(kept, quote=True)


def _page(title: str, body: str) -> bytes:
    return (f"<!doctype html><html lang=\"en\"><head><meta charset=\"utf-8\">"
            f"<meta name=\"viewport\" content=\"width=device-width\"><title>{_shown(title)}"
            f"</title><style>{_STYLE}</style></head><body>{body}</body></html>").encode()


def consent_page(*, client: ClientRecord, redirect_uri: str, scopes: Iterable[str],
                 resource: str, resource_name: str | None, upstream: str, action: str,
                 pending: str, csrf: str) -> bytes:
    """The page asking the user to allow or deny `client`."""
    where = resource_name or resource
    if client.source == "cimd":
        host = urlsplit(client.client_id).hostname or client.client_id
        who = (f"<b>{_shown(client.client_name or host)}</b> "
               f"<span class=\"note\">(identified by <code>{_shown(host)}</code>)</span>")
    else:
        who = (f"<b>{_shown(client.client_name or 'An application')}</b> "
               "<span class=\"note\">(a name it gave itself: not verified)</span>")
    back = urlsplit(redirect_uri)
    back_to = f"{back.scheme}://{back.netloc}" if back.netloc else back.scheme + ":"
    listed = "".join(f"<li><code>{_shown(s)}</code></li>" for s in scopes)
    scope_text = (f"<p>It asks for:</p><ul>{listed}</ul>" if listed else
                  "<p>It asks for basic use, no extra scope.</p>")
    hidden = (f"<input type=\"hidden\" name=\"pending\" value=\"{_shown(pending, 200)}\">"
              f"<input type=\"hidden\" name=\"csrf\" value=\"{_shown(csrf, 200)}\">")
    body = (
        f"<h1>Allow access to {_shown(where)}?</h1>"
        f"<p>{who} wants to use <b>{_shown(where)}</b> as you.</p>{scope_text}"
        f"<p>If you allow it, you sign in at <b>{_shown(upstream)}</b> next, and your browser "
        f"then goes back to <code>{_shown(back_to)}</code>.</p>"
        f"<p class=\"note\">Only allow applications you started yourself just now.</p>"
        f"<form method=\"post\" action=\"{_shown(action, 400)}\">{hidden}"
        f"<input type=\"hidden\" name=\"decision\" value=\"allow\">"
        f"<button type=\"submit\">Allow</button></form>"
        f"<form method=\"post\" action=\"{_shown(action, 400)}\">{hidden}"
        f"<input type=\"hidden\" name=\"decision\" value=\"deny\">"
        f"<button type=\"submit\">Deny</button></form>")
    return _page(f"Allow access to {where}?", body)


def error_page(title: str, message: str) -> bytes:
    """A refusal shown to the user where nothing may be redirected to."""
    return _page(title, f"<h1>{_shown(title)}</h1><p>{_shown(message, 400)}</p>"
                 "<p class=\"note\">Nothing was sent to the application. You can close this "
                 "tab.</p>")
