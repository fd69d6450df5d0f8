"""What a `Host` header may hold, and which addresses are this machine's own, without I/O.

`parse_host` reads a `Host` value by RFC 9112 §3.2 and RFC 3986 §3.2.2: `uri-host [":" port]`,
where the host is a bracketed IPv6 literal, an IPv4 address or a registered name (unreserved
characters, percent-escapes and sub-delimiters, all ASCII), and the port is decimal digits
naming 0-65535 (empty: none). Anything else (a port past 65535, user information as in
`u@a`, an unclosed `[::1`, a bare IPv6 address, bytes outside ASCII) names no host: the HTTP
app answers it with 400 before anything else (RFC 9112 §3.2), so no later step ever has to
guess what such a value meant. `is_loopback` says whether a bound address is this machine's
loopback, where a protected server may take its resource URL from the address it listens on.
Sans-IO: the standard library only.
"""

from __future__ import annotations

import ipaddress
from typing import Final

__all__ = [
    "is_loopback",
    "parse_host",
]

_REG_NAME: Final = frozenset(
    "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-._~!$&'()*+,;=%")
"""RFC 3986 reg-name characters: unreserved, sub-delims, and `%` of a percent-escape."""
_HEX: Final = frozenset("0123456789abcdefABCDEF")
_MAX_PORT_DIGITS: Final = 5


def parse_host(value: str) -> tuple[str, int | None] | None:
    """(host, port) of a `Host` value (`port` None when absent or empty; an IPv6 host keeps its
    brackets, so the pair joins back as it came), or None when the value names no host by the
    RFCs' grammar. An empty value is a host too (RFC 9112 allows it for a target without one):
    the Host policy decides whether it is allowed."""
    if value.startswith("["):
        end = value.find("]")
        if end < 0:
            return None
        host, rest = value[:end + 1], value[end + 1:]
        if rest and not rest.startswith(":"):
            return None
        try:
            ipaddress.IPv6Address(host[1:-1])
        except ValueError:
            return None
    else:
        host, sep, port_text = value.rpartition(":")
        if not sep:
            host, port_text = value, ""
        if not _is_reg_name(host):
            return None
        rest = sep + port_text
    if not rest or rest == ":":
        return host, None
    digits = rest[1:]
    if not (digits.isascii() and digits.isdigit()) or len(digits) > _MAX_PORT_DIGITS:
        return None
    port = int(digits)
    return (host, port) if port <= 65535 else None


def _is_reg_name(host: str) -> bool:
    """An IPv4 address or a registered name: its characters, and each `%` a full escape."""
    if not host.isascii() or not _REG_NAME.issuperset(host):
        return False
    at = host.find("%")
    while at >= 0:
        escape = host[at + 1:at + 3]
        if len(escape) != 2 or not _HEX.issuperset(escape):
            return False
        at = host.find("%", at + 3)
    return True


def is_loopback(host: object) -> bool:
    """Whether `host` (as an ASGI server reports the address it listens on, `scope["server"]`)
    is one loopback IP address: `127.0.0.0/8` or `::1`, never a wildcard like `0.0.0.0`, and
    never a name, which could resolve elsewhere."""
    if not isinstance(host, str):
        return False
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False
