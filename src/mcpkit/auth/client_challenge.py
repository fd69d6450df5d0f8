"""Reading a resource server's `WWW-Authenticate` header (RFC 9110 §11.6.1, RFC 6750 §3):
what a 401 or a 403 asks of the client (AUTH-13, AUTH-26, AUTH-27).

The header may hold several challenges (`Bearer ..., DPoP ...`), each a scheme followed by
`name=value` pairs whose values are tokens or quoted strings with backslash escapes; a
challenge may also carry a token68 instead of pairs. The parser is strict where it matters
(a quoted string that never ends is no value) and lenient elsewhere (unknown parameters are
kept, case of names folded), so one odd challenge does not hide the Bearer one beside it.

Imports: the standard library only.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Final

__all__ = [
    "BearerChallenge",
    "Challenge",
    "bearer_challenge",
    "parse_www_authenticate",
    "sent_scheme",
]

_TCHAR: Final = frozenset("!#$%&'*+-.^_`|~0123456789abcdefghijklmnopqrstuvwxyz"
                          "ABCDEFGHIJKLMNOPQRSTUVWXYZ")
_TOKEN68: Final = _TCHAR | frozenset("/=")


@dataclass(frozen=True)
class Challenge:
    """One challenge: its scheme (lowercased) and parameters (names lowercased)."""

    scheme: str
    params: dict[str, str] = field(default_factory=dict)


@dataclass(frozen=True)
class BearerChallenge:
    """What a Bearer (or DPoP) challenge says, the fields MCP uses named."""

    scheme: str = "bearer"
    resource_metadata: str | None = None
    scope: tuple[str, ...] | None = None
    """The scopes the operation needs (None: the challenge named none)."""
    error: str | None = None
    error_description: str | None = None

    @property
    def insufficient_scope(self) -> bool:
        return self.error == "insufficient_scope"


def parse_www_authenticate(value: str) -> list[Challenge]:
    """Every challenge in one header value (several header lines: join them with ", ")."""
    challenges: list[Challenge] = []
    i, n = 0, len(value)
    while i < n:
        i = _skip(value, i, " \t,")
        start = i
        while i < n and value[i] in _TCHAR:
            i += 1
        if i == start:
            i += 1  # not a scheme: skip the character
            continue
        scheme = value[start:i].lower()
        params: dict[str, str] = {}
        i = _skip(value, i, " \t")
        j = i
        while j < n and value[j] in _TOKEN68:
            j += 1
        after = _skip(value, j, " \t")
        if j > i and "=" not in value[i:j].rstrip("=") and (after >= n or value[after] == ","):
            i = after  # a token68 (`Basic dXNlcg==`): read past, not kept
        while i < n:
            i = _skip(value, i, " \t,")
            name_start = i
            while i < n and value[i] in _TCHAR:
                i += 1
            name = value[name_start:i]
            after = _skip(value, i, " \t")
            if not name or after >= n or value[after] != "=":
                i = name_start  # not a parameter: the next challenge's scheme
                break
            parsed = _value(value, _skip(value, after + 1, " \t"))
            if parsed is None:  # a quoted string that never ends: nothing after it counts
                challenges.append(Challenge(scheme, params))
                return challenges
            params[name.lower()], i = parsed
        challenges.append(Challenge(scheme, params))
    return challenges


def _skip(value: str, i: int, chars: str) -> int:
    while i < len(value) and value[i] in chars:
        i += 1
    return i


def _value(value: str, i: int) -> tuple[str, int] | None:
    """A token or a quoted string at `i`: (the value, the index after it), or None."""
    n = len(value)
    if i < n and value[i] == '"':
        out: list[str] = []
        i += 1
        while i < n:
            c = value[i]
            if c == "\\" and i + 1 < n:
                out.append(value[i + 1])
                i += 2
                continue
            if c == '"':
                return "".join(out), i + 1
            out.append(c)
            i += 1
        return None
    start = i
    while i < n and value[i] in _TOKEN68:
        i += 1
    return value[start:i], i


def bearer_challenge(values: list[str] | str | None,
                     sent: str | None = None) -> BearerChallenge | None:
    """The challenge a client acts on among a response's `WWW-Authenticate` values, or None
    when there is no Bearer or DPoP one.

    `sent` is the scheme the request's `Authorization` used (`"bearer"`, `"dpop"`): a server
    puts the error of a request in the challenge of the scheme it was sent with (RFC 9449
    §7.1: `DPoP error="insufficient_scope"` beside a plain `Bearer` one), so that one is read
    first; then one that carries an error; then Bearer, then DPoP. A `resource_metadata` only
    the other challenge names is taken from it."""
    if values is None:
        return None
    joined = values if isinstance(values, str) else ", ".join(values)
    offered = [c for c in parse_www_authenticate(joined) if c.scheme in ("bearer", "dpop")]
    if not offered:
        return None
    wanted = (sent or "").lower()

    def rank(challenge: Challenge) -> int:
        if challenge.scheme == wanted:
            return 0
        if challenge.params.get("error"):
            return 1
        return 2 if challenge.scheme == "bearer" else 3

    chosen = min(offered, key=rank)
    p = chosen.params
    scope = p.get("scope")
    metadata = p.get("resource_metadata") or next(
        (c.params["resource_metadata"] for c in offered if c.params.get("resource_metadata")),
        None)
    return BearerChallenge(
        scheme=chosen.scheme,
        resource_metadata=metadata,
        scope=tuple(scope.split()) if scope is not None else None,
        error=p.get("error") or None,
        error_description=p.get("error_description") or None,
    )


def sent_scheme(authorization: str | None) -> str | None:
    """The scheme of a request's `Authorization` value, lowercased (None: it sent none)."""
    if not authorization:
        return None
    return authorization.split(" ", 1)[0].lower() or None
