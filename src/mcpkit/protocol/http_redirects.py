"""Which HTTP redirects the Streamable HTTP client follows, and where to: a rule without I/O.

A server answers a POST with a redirect mostly by accident of where it is mounted: Starlette's
`Mount("/mcp", ...)` answers `/mcp` with `307 Location: .../mcp/`. A 307 or a 308 asks for the
same request again, same method and body, at another URL, which is safe to follow within the
origin the client was pointed at (scheme, host and port): the request's headers (a session
id, an `Authorization`) go nowhere the user did not send them. A 301, 302 or 303 lets a client
turn the POST into a GET, which would lose the message, and a redirect to another origin would
carry the headers away; both are refused, naming the status and the Location, for the user to
point the client at the right URL. At most `MAX_REDIRECTS` hops, so two URLs that redirect to
each other end in an error rather than a loop.

Sans-IO: the standard library's URL parsing only.
"""

from __future__ import annotations

from typing import Final, NamedTuple
from urllib.parse import urljoin, urlsplit

__all__ = [
    "FOLLOWED_STATUSES",
    "MAX_REDIRECTS",
    "Hop",
    "is_redirect",
    "next_hop",
    "origin_of",
]

MAX_REDIRECTS: Final = 5
"""Redirects followed for one request before it is given up."""
FOLLOWED_STATUSES: Final = frozenset({307, 308})
"""The redirects that keep the method and body (RFC 9110 15.4.8, 15.4.9)."""
_DEFAULT_PORTS: Final = {"http": 80, "https": 443}


class Hop(NamedTuple):
    """Where a redirect sends the request (`url`), or why it is not followed (`refusal`,
    worded to follow "... was redirected ")."""

    url: str | None
    refusal: str | None


def is_redirect(status: int) -> bool:
    """Whether a response with `status` is a redirect to follow or refuse (any 3xx)."""
    return 300 <= status < 400


def origin_of(url: str) -> tuple[str, str, int | None]:
    """(scheme, host, port) of `url`, the port made explicit where the scheme implies it."""
    parts = urlsplit(url)
    scheme = parts.scheme.lower()
    try:
        port = parts.port
    except ValueError:  # a port that is no number: an origin of its own, matching nothing
        port = -1
    return scheme, (parts.hostname or "").lower(), port or _DEFAULT_PORTS.get(scheme)


def next_hop(url: str, status: int, location: str | None, hops: int) -> Hop:
    """Where the redirect with `status` and `location`, answering a request to `url` after
    `hops` redirects already followed, sends the request on; or why it goes no further."""
    if not location or not location.strip():
        return Hop(None, f"from {url} with no Location header")
    target = urljoin(url, location.strip())
    where = f"from {url} to {target}, not followed"
    if status not in FOLLOWED_STATUSES:
        return Hop(None, f"{where}: only a 307 or 308 keeps the POST and its body; point the "
                         "client at the final URL")
    if origin_of(target) != origin_of(url):
        return Hop(None, f"{where}: it leaves the origin the client was given (scheme, host "
                         "and port) and would carry the request's headers there; point the "
                         "client at that URL if it is meant")
    if hops >= MAX_REDIRECTS:
        return Hop(None, f"{where}: {MAX_REDIRECTS} redirects in a row already (a loop?)")
    return Hop(target, None)
