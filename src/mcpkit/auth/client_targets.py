"""Which URLs an OAuth client may open or fetch (AUTH-29, AUTH-34): the pure half of the SSRF
and open-redirect defences.

- `check_authorization_url`: the URL handed to a browser is `http` or `https` only (never
  `javascript:`, `data:`, `file:`, ...), `https` unless its host is loopback, with a host and
  no user information;
- `check_fetch_url`: a metadata or token endpoint URL, checked the same way before each hop;
- `check_address`: an IP address a host resolved to. Private, link-local (169.254/16, where
  cloud metadata services answer), unspecified, multicast and reserved ranges are refused;
  loopback only when `allow_loopback` (development: the MCP server itself is on loopback, or
  the caller said so). The transport resolves the name and asks this about every address.

A refusal is an `AuthError` naming the URL's origin and the rule, never a query string (which
may carry a code or a token). Imports: the standard library and `mcpkit.errors`.
"""

from __future__ import annotations

import ipaddress
from typing import Final
from urllib.parse import urlsplit

from mcpkit.errors import AuthError

__all__ = [
    "check_address",
    "check_authorization_url",
    "check_fetch_url",
    "is_loopback_host",
]

_LOOPBACK_NAMES: Final = frozenset({"localhost", "localhost.", "127.0.0.1", "::1"})


def _shown(url: str) -> str:
    parts = urlsplit(url)
    return f"{parts.scheme}://{parts.netloc}{parts.path}" if parts.netloc else repr(url[:40])


def is_loopback_host(host: str) -> bool:
    host = host.lower().strip("[]")
    if host in _LOOPBACK_NAMES or host.endswith(".localhost"):
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def _check(url: str, what: str) -> str:
    parts = urlsplit(url)
    scheme = parts.scheme.lower()
    if scheme not in ("http", "https"):
        raise AuthError(f"{what} {_shown(url)} is refused: only http and https URLs are "
                        f"followed, not {scheme or 'a URL without a scheme'}")
    host = parts.hostname
    if not host:
        raise AuthError(f"{what} {_shown(url)} is refused: it has no host")
    if parts.username is not None or parts.password is not None:
        raise AuthError(f"{what} {_shown(url)} is refused: it carries user information")
    if scheme == "http" and not is_loopback_host(host):
        raise AuthError(f"{what} {_shown(url)} is refused: plain http is accepted only on "
                        "loopback (127.0.0.1, ::1, localhost); use https")
    return host


def check_authorization_url(url: str) -> None:
    """Refuse a URL that must not be opened in the user's browser."""
    _check(url, "the authorization URL")


def check_fetch_url(url: str, *, allow_loopback: bool) -> str:
    """The host of a URL the client may fetch metadata or tokens from (checked per hop)."""
    host = _check(url, "the authorization metadata URL")
    if is_loopback_host(host) and not allow_loopback:
        raise AuthError(f"{_shown(url)} is refused: a loopback address is fetched only when "
                        "the MCP server itself is on loopback (development) or allow_loopback "
                        "is set")
    try:
        check_address(ipaddress.ip_address(host.strip("[]")), url, allow_loopback=allow_loopback)
    except ValueError:
        pass  # a name: its addresses are checked once resolved
    return host


def check_address(address: ipaddress.IPv4Address | ipaddress.IPv6Address, url: str, *,
                  allow_loopback: bool) -> None:
    """Refuse an address a metadata fetch must not reach."""
    if isinstance(address, ipaddress.IPv6Address) and address.ipv4_mapped is not None:
        address = address.ipv4_mapped
    if address.is_loopback:
        if allow_loopback:
            return
        kind = "loopback"
    elif address.is_link_local:
        kind = "link-local"
    elif address.is_private:
        kind = "private"
    elif address.is_unspecified or address.is_multicast or address.is_reserved:
        kind = "reserved"
    else:
        return
    raise AuthError(f"{_shown(url)} resolves to a {kind} address ({address}); authorization "
                    "metadata is never fetched from one")
