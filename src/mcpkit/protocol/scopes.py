"""OAuth scope syntax (RFC 6749 §3.3), checked where scopes are given.

On the protocol floor because two rooms take scopes from users and must agree on what one is:
a server registering `scopes=[...]` on its tools, resources and prompts, and the resource
server's configuration (`scopes_supported`, the scope hierarchy). No I/O.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from typing import Final

__all__ = [
    "SCOPE_TOKEN",
    "check_scopes",
]

SCOPE_TOKEN: Final = re.compile(r"[\x21\x23-\x5b\x5d-\x7e]+")
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
        if type(scope) is not str or not SCOPE_TOKEN.fullmatch(scope):
            raise ValueError(
                f"{what}: {scope!r} is not a scope: a scope is a non-empty string without "
                "spaces, quotes or backslashes (RFC 6749 §3.3); give several as a list"
            )
        found[scope] = None
    return tuple(found)
