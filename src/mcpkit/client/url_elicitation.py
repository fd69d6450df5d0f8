"""Which URLs may be offered to the user, in either era: `check_url` and `real_host`.

A URL-mode elicitation (a modern input request, a legacy server's `elicitation/create`, a legacy
-32042 error: `mcpkit.client.legacy.url_required`) names a page the user is asked to open.
Everything in it comes from the server, so a URL is offered only when it is an absolute http(s)
URL without user info (`https://bank.example@evil.example/` disguises its real host), of bounded
length, without spaces or control characters.

The user must see the host the browser will really reach (`real_host`), so a URL is refused
when a browser would read its host otherwise than it looks: a backslash or a percent sign in
it (`https://evil.example\\.bank.example/` goes to evil.example), a number that is an IPv4
address in disguise (`http://0x7f.1/`), an IPv6 zone, or letters that browsers and the
standard library spell differently in ASCII (ß, ς, characters newer than IDNA 2003). An
international name is shown in the ASCII form the browser resolves: a Cyrillic look-alike of
paypal.com is `xn--l-7sba6dbr.com`, and a full-width google.com is google.com.

May import `mcpkit.types` and `mcpkit.errors`.
"""

from __future__ import annotations

import ipaddress
import re
import unicodedata
from typing import Any, Final
from urllib.parse import urlsplit

__all__ = [
    "MAX_URL_LENGTH",
    "check_url",
    "real_host",
]

MAX_URL_LENGTH: Final = 8192
_HOST_NAME: Final = re.compile(r"[a-z0-9_-]+(?:\.[a-z0-9_-]+)*\.?")
_NUMBER_LABEL: Final = re.compile(r"[0-9]+|0x[0-9a-f]*")
"""A last label a browser reads as (part of) an IPv4 address."""
_SPELLED_TWO_WAYS: Final = frozenset("ßς")
"""IDNA 2003 (the standard library) maps them to "ss" and a plain sigma; browsers keep them."""


def check_url(url: Any) -> str | None:
    """Why `url` must not be offered to the user (None when it may be)."""
    if type(url) is not str or not url:
        return "the url is missing or not a string"
    if len(url) > MAX_URL_LENGTH:
        return f"the url is longer than {MAX_URL_LENGTH} characters"
    if any(c.isspace() or not c.isprintable() for c in url):  # also bidi and C1 controls
        return "the url contains spaces or control characters"
    try:
        parts = urlsplit(url)
        host = parts.hostname
        parts.port  # noqa: B018 - raises on a malformed port
    except ValueError:
        return f"the url {url[:200]!r} is malformed"
    if parts.scheme.lower() not in ("http", "https"):
        return (
            f"the url scheme {parts.scheme + ':' if parts.scheme else '(none)'} is refused; only "
            "http and https pages are offered to the user"
        )
    if not host:
        return "the url has no host"
    if "@" in parts.netloc:
        return f"the url carries user info before its host {host!r}, which disguises where it leads"
    try:
        _ascii_host(host, parts.netloc.startswith("["))
    except ValueError as exc:
        return f"the url's host {host!r} {exc}"
    return None


def real_host(url: str) -> str:
    """The host a browser opening `url` reaches, as the user must see it: lower-case ASCII
    (the punycode of an international name), an IPv6 address in brackets. For URLs that
    `check_url` accepts."""
    parts = urlsplit(url)
    return _ascii_host(parts.hostname or "", parts.netloc.startswith("["))


def _ascii_host(host: str, bracketed: bool) -> str:
    """`host` as a browser resolves it; ValueError says why it must not be offered."""
    if bracketed:
        if "%" in host:
            raise ValueError("names an IPv6 zone, which browsers do not open")
        try:
            return f"[{ipaddress.IPv6Address(host).compressed}]"
        except ValueError:
            raise ValueError("is not an IPv6 address") from None
    if any(c in _SPELLED_TWO_WAYS for c in host):
        raise ValueError("contains ß or ς, which browsers and this client spell differently")
    if any(ord(c) > 127 and unicodedata.ucd_3_2_0.category(c) == "Cn" for c in host):
        raise ValueError("is not a valid host name (a character newer than IDNA knows)")
    try:
        name = host.encode("idna").decode("ascii").lower()
    except UnicodeError:
        raise ValueError("is not a valid host name (an empty or too long label)") from None
    if not _HOST_NAME.fullmatch(name):
        raise ValueError(
            "has characters that cannot be in a host name (letters, digits, '-', '_' and dots)"
        )
    dotted = name.rstrip(".")
    if _NUMBER_LABEL.fullmatch(dotted.rpartition(".")[2]):
        try:
            canonical = str(ipaddress.IPv4Address(dotted)) == dotted
        except ValueError:
            canonical = False
        if not canonical:
            raise ValueError(
                "reads as an IPv4 address written in another form; a page's address must "
                "write it as four decimal numbers (a.b.c.d)"
            )
    return name
