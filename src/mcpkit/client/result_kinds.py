"""The result kinds an extension admits beyond the core's `complete` and `input_required`.

A call's answer carries a `resultType`. The core knows two: `complete` ends the call, and
`input_required` enters the MRTR loop. An extension may define another (the Tasks extension's
`task`: the call became a task), which only the extension knows when to accept and how to
follow. Rather than the core naming each one, the extension's client half registers its kind
here when it is imported (`register_result_kind`), with the check of when such an answer is
valid; the request path (`mcpkit.client.calls`) then admits a registered kind through that
check and returns the answer to the caller unfollowed, and refuses any kind nobody registered,
as it refuses an unknown one.

Following an admitted answer (waiting on a task) is the extension's own client class's work:
the core `Client.call_tool` refuses one it cannot follow (`refuse_unfollowed`), so a registered
kind never passes for a complete result.

Pure: no I/O. May import `mcpkit.errors`.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Final, Protocol

from mcpkit.errors import ProtocolViolation

__all__ = [
    "CORE_KINDS",
    "RESULT_KINDS",
    "Admission",
    "admit",
    "is_extension_kind",
    "refuse_unfollowed",
    "register_result_kind",
]

CORE_KINDS: Final = frozenset({"complete", "input_required"})
"""The result types the core itself knows."""


class Admission(Protocol):
    """Raises `ProtocolViolation` unless an answer of the kind is valid for this request."""

    def __call__(self, method: str, params: Mapping[str, Any], what: str, /) -> None: ...


RESULT_KINDS: dict[str, Admission] = {}
"""The registered kinds, by `resultType`, each with its admission check."""


def register_result_kind(kind: str, admission: Admission) -> None:
    """Admit answers of `resultType` `kind` (an extension's, at its import), checked by
    `admission`; registering a kind again replaces its check."""
    if kind in CORE_KINDS:
        raise ValueError(f"result kind {kind!r} is the core's own; an extension adds others")
    RESULT_KINDS[kind] = admission


def is_extension_kind(result: Mapping[str, Any]) -> bool:
    """Whether `result` is of a kind an extension registered (a `resultType` that is no string,
    a peer's `[]` or `{}`, is of none)."""
    kind = result.get("resultType")
    return isinstance(kind, str) and kind in RESULT_KINDS


def admit(method: str, params: Mapping[str, Any], result: Mapping[str, Any], what: str) -> None:
    """Run the admission check of `result`'s kind (registered: `is_extension_kind`)."""
    RESULT_KINDS[str(result.get("resultType"))](method, params, what)


def refuse_unfollowed(result: Mapping[str, Any], what: str) -> None:
    """Raise when `result` is an admitted extension kind that this client does not follow
    (a core client asked for the extension in `ClientOptions.extensions` but is not the
    extension's client class)."""
    kind = result.get("resultType")
    if isinstance(kind, str) and kind in RESULT_KINDS:
        raise ProtocolViolation(
            f"{what}: the server answered with resultType {kind!r}, which the core client "
            "admits but does not follow; use mcpkit.Client, which follows it")
