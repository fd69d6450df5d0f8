"""Scopes as the resource server reads them: their syntax, their hierarchy, and what an
operation still needs.

A token grants a set of scopes; an operation needs a set. AUTH-10 asks that a broader scope
imply the narrower ones (`files:write` may include `files:read`, `admin` everything), so the
granted set is first expanded through a `ScopeHierarchy` and only then compared. The 403
challenge then names every scope the operation needs (all of them, in a stable order, so a
client's step-up asks for the whole set at once). No I/O.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from typing import Final

__all__ = ["ScopeHierarchy", "check_scopes", "parse_scope", "scope_text"]

_SCOPE_TOKEN: Final = re.compile(r"[\x21\x23-\x5b\x5d-\x7e]+")
"""RFC 6749 §3.3: `scope-token = 1*( %x21 / %x23-5B / %x5D-7E )` -- no space, quote or
backslash, so a scope can be put in a quoted challenge parameter as it is."""


def check_scopes(scopes: Iterable[str] | str | None, what: str) -> tuple[str, ...]:
    """`scopes` as a tuple of valid scope tokens, without repeats, in their order; `what`
    names where they were given, for the message of a `ValueError`. A single string is one
    scope (a list of one), never split: `scopes="a b"` is refused rather than guessed."""
    if scopes is None:
        return ()
    if isinstance(scopes, str):
        scopes = (scopes,)
    found: dict[str, None] = {}
    for scope in scopes:
        if type(scope) is not str or not _SCOPE_TOKEN.fullmatch(scope):
            raise ValueError(
                f"{what}: {scope!r} is not a scope: a scope is a non-empty string without "
                "spaces, quotes or backslashes (RFC 6749 §3.3); give several as a list"
            )
        found[scope] = None
    return tuple(found)


def parse_scope(value: object) -> frozenset[str]:
    """The scopes a token grants, from its `scope` claim (RFC 9068/7662: space-separated text)
    or an `scp` list (as some providers issue): anything else grants nothing."""
    if type(value) is str:
        return frozenset(part for part in value.split(" ") if _SCOPE_TOKEN.fullmatch(part))
    if type(value) is list:
        return frozenset(v for v in value if type(v) is str and _SCOPE_TOKEN.fullmatch(v))
    return frozenset()


def scope_text(scopes: Iterable[str]) -> str:
    """Scopes as one space-separated value, for a challenge or a document."""
    return " ".join(scopes)


class ScopeHierarchy:
    """Which scopes imply which: `{"files:write": ["files:read"], "admin": ["files:write"]}`
    means a token with `admin` may also read files. The implication is transitive and may not
    loop back (a cycle is a configuration error, refused when built)."""

    __slots__ = ("_implied",)

    def __init__(self, implies: Mapping[str, Iterable[str]] | None = None) -> None:
        direct: dict[str, tuple[str, ...]] = {}
        for broad, narrower in (implies or {}).items():
            check_scopes((broad,), "scope_hierarchy")
            direct[broad] = check_scopes(tuple(narrower), f"scope_hierarchy[{broad!r}]")
        self._implied: dict[str, frozenset[str]] = {
            scope: _closure(scope, direct) for scope in direct
        }

    def expand(self, granted: Iterable[str]) -> frozenset[str]:
        """`granted` with every scope it implies."""
        result = set(granted)
        for scope in tuple(result):
            result |= self._implied.get(scope, frozenset())
        return frozenset(result)

    def missing(self, granted: Iterable[str], needed: Iterable[str]) -> tuple[str, ...]:
        """The scopes of `needed` that `granted` does not cover, in `needed`'s order."""
        covered = self.expand(granted)
        return tuple(scope for scope in needed if scope not in covered)


def _closure(scope: str, direct: Mapping[str, tuple[str, ...]]) -> frozenset[str]:
    """Every scope `scope` implies, directly or through others; a cycle is a `ValueError`."""
    seen: set[str] = set()
    stack = list(direct.get(scope, ()))
    while stack:
        narrower = stack.pop()
        if narrower == scope:
            raise ValueError(f"scope_hierarchy: {scope!r} implies itself through a cycle; a "
                             "broader scope implies narrower ones, never back")
        if narrower not in seen:
            seen.add(narrower)
            stack.extend(direct.get(narrower, ()))
    return frozenset(seen)
