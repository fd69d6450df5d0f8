"""Who may talk to the inspector: the page this run served, and nothing else.

The inspector drives a real server with the user's sign-ins, so a page of another site must
not be able to drive it. Every request is judged here before anything else reads it:

- **Host** must be the address the app is bound to (`127.0.0.1:PORT`), exactly once: a name
  that resolves to 127.0.0.1 by DNS rebinding still carries its own name, and is refused;
- **Origin**, when a browser sends one, must be the app's own origin; a state-changing request
  (POST) must carry it (browsers always do), so a request from a script of another site, or
  from a tool that does not say where it comes from, never changes anything;
- **Sec-Fetch-Site**, when sent, must say the request comes from the app itself (or from the
  user typing the address);
- **the token**: the path starts with this run's random token (`/TOKEN/...`), compared in
  constant time. Every address the page uses is relative, so each request carries it; a page
  that does not know it can name no address here.

The Apps sandbox is a second origin (another port, another token): it serves the views'
frames and nothing that acts, so it accepts GET only, and a frame of the inspector's page
(`same-site`) may load it.

Pure: no I/O.
"""

from __future__ import annotations

import hmac
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Final

__all__ = [
    "Allowed",
    "Guard",
    "Refused",
    "verdict",
]

SAFE_METHODS: Final = frozenset({"GET", "HEAD"})
_OWN_SITES: Final = frozenset({"same-origin", "none"})
_FRAME_SITES: Final = frozenset({"same-origin", "same-site", "none"})


@dataclass(frozen=True, slots=True)
class Allowed:
    """The request may go on; `path` is what follows the token (`""` for the page itself)."""

    path: str


@dataclass(frozen=True, slots=True)
class Refused:
    """The request is refused with `status` (403, 405, 400) and `reason`, said to the caller."""

    status: int
    reason: str


@dataclass(frozen=True, slots=True)
class Guard:
    """The rules of one origin of the app: its port, its token, what it accepts."""

    port: int
    token: str
    methods: frozenset[str] = frozenset({"GET", "HEAD", "POST"})
    framed: bool = False
    """The sandbox origin: loaded as a frame of the inspector's page (`same-site`)."""

    @property
    def host(self) -> str:
        return f"127.0.0.1:{self.port}"

    @property
    def origin(self) -> str:
        return f"http://{self.host}"

    def check(self, method: str, path: str,
              headers: Mapping[str, Sequence[str]]) -> Allowed | Refused:
        """The verdict on one request; `headers` maps lower-case names to every value sent."""
        hosts = headers.get("host", ())
        if len(hosts) != 1 or hosts[0].strip().lower() != self.host:
            shown = ", ".join(repr(h[:80]) for h in hosts) or "none"
            return Refused(403, f"this app answers only to Host {self.host} (got {shown}): a "
                                "request under another name is refused (DNS rebinding)")
        origins = headers.get("origin", ())
        if len(origins) > 1 or (origins and origins[0].strip().lower() != self.origin):
            return Refused(403, f"requests from another origin are refused (Origin "
                                f"{origins[0][:80]!r}); only the page at {self.origin} may "
                                "use this app")
        sites = headers.get("sec-fetch-site", ())
        allowed_sites = _FRAME_SITES if self.framed else _OWN_SITES
        if any(site.strip().lower() not in allowed_sites for site in sites):
            return Refused(403, f"a request from another site is refused (Sec-Fetch-Site "
                                f"{sites[0][:40]!r})")
        if method not in self.methods:
            return Refused(405, f"{method} is not used here")
        if method not in SAFE_METHODS:
            if not origins:
                return Refused(403, "a request that acts must say where it comes from "
                                    "(Origin); only the inspector's page may send one")
            types = headers.get("content-type", ())
            if len(types) != 1 or types[0].split(";")[0].strip().lower() != "application/json":
                return Refused(400, "the body of an action is JSON (Content-Type: "
                                    "application/json)")
        return _token_path(path, self.token)


def _token_path(path: str, token: str) -> Allowed | Refused:
    first, slash, rest = path.removeprefix("/").partition("/")
    if not hmac.compare_digest(first.encode("utf-8", "replace"), token.encode()):
        return Refused(403, "this address lacks the run's token: open the URL `mcpkit dev` "
                            "printed")
    if not slash:
        return Refused(403, "the inspector is at the URL `mcpkit dev` printed, ending in /")
    return Allowed(rest)


def verdict(guard: Guard, method: str, path: str,
            raw_headers: Sequence[tuple[bytes, bytes]]) -> Allowed | Refused:
    """`guard.check` on ASGI's header list (names lower-case, values as sent)."""
    headers: dict[str, list[str]] = {}
    for name, value in raw_headers:
        headers.setdefault(name.decode("latin-1").lower(), []).append(value.decode("latin-1"))
    return guard.check(method, path, headers)
