"""Which scopes a client asks for, and how often it may ask again (AUTH-23, AUTH-26, AUTH-27).

- `initial_scope`: the challenge's `scope` when the 401 named one (authoritative for the
  operation: nothing is assumed about how it relates to `scopes_supported`), else every
  `scopes_supported` of the PRM, else no `scope` at all; `offline_access` is added only when
  the client wants a refresh token and the authorization server lists it;
- `step_up_scope`: on a 403 `insufficient_scope`, the union of what was asked before and what
  the challenge names, in first-seen order, so a re-authorization never drops a scope the
  earlier operations needed;
- `StepUps`: the attempts per (resource, operation), so a server that keeps answering 403
  costs a bounded number of authorizations, not a loop. An operation that succeeds starts
  again from zero.

Imports: the standard library only.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Final

__all__ = [
    "OFFLINE_ACCESS",
    "StepUps",
    "initial_scope",
    "join_scopes",
    "step_up_scope",
]

OFFLINE_ACCESS: Final = "offline_access"


def join_scopes(*groups: Iterable[str] | None) -> str | None:
    """The union of `groups` as a `scope` value, first-seen order, or None when empty."""
    seen: dict[str, None] = {}
    for group in groups:
        for scope in group or ():
            if scope:
                seen.setdefault(scope, None)
    return " ".join(seen) or None


def initial_scope(challenged: tuple[str, ...] | None, prm_supported: tuple[str, ...] | None,
                  as_supported: tuple[str, ...] | None, *, want_refresh: bool) -> str | None:
    """The `scope` of a first authorization request, in the spec's order."""
    chosen: tuple[str, ...] | None = challenged if challenged else prm_supported
    extra = ((OFFLINE_ACCESS,) if want_refresh and as_supported and OFFLINE_ACCESS in as_supported
             else ())
    return join_scopes(chosen, extra)


def step_up_scope(previous: str | None, challenged: tuple[str, ...] | None) -> str | None:
    """The `scope` of a re-authorization after a 403 `insufficient_scope`."""
    return join_scopes((previous or "").split(), challenged)


class StepUps:
    """Step-up attempts per (resource, operation), bounded by `limit`."""

    def __init__(self, limit: int = 2) -> None:
        if limit < 0:
            raise ValueError("the step-up limit is a count, 0 or more")
        self.limit = limit
        self._attempts: dict[tuple[str, str], int] = {}

    def allow(self, resource: str, operation: str) -> bool:
        """Count one more step-up for the operation; False once past the limit."""
        key = (resource, operation)
        count = self._attempts.get(key, 0)
        if count >= self.limit:
            return False
        self._attempts[key] = count + 1
        return True

    def succeeded(self, resource: str, operation: str) -> None:
        self._attempts.pop((resource, operation), None)
