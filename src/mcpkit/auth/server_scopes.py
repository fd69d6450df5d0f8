"""Scopes as the resource server reads them: their syntax, their hierarchy, and what an
operation still needs.

A token grants a set of scopes; an operation needs a set. AUTH-10 asks that a broader scope
imply the narrower ones (`files:write` may include `files:read`, `admin` everything), so the
granted set is first expanded through a `ScopeHierarchy` and only then compared. The 403
challenge then names every scope the operation needs (all of them, in a stable order, so a
client's step-up asks for the whole set at once). No I/O.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping

from mcpkit.protocol.scopes import SCOPE_TOKEN, check_scopes

__all__ = [
    "ScopeHierarchy",
    "check_scopes",
    "parse_scope",
    "scope_text",
]


def parse_scope(value: object) -> frozenset[str]:
    """The scopes a token grants, from its `scope` claim (RFC 9068/7662: space-separated text)
    or an `scp` list (as some providers issue): anything else grants nothing."""
    if type(value) is str:
        return frozenset(part for part in value.split(" ") if SCOPE_TOKEN.fullmatch(part))
    if type(value) is list:
        return frozenset(v for v in value if type(v) is str and SCOPE_TOKEN.fullmatch(v))
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
