"""Which `resources/subscribe` a 2025-11-25 session may hold.

A legacy session keeps its subscriptions for as long as it lives, and opening a session takes
no credentials, so what one session may hold is bounded here: a URI the server serves (a
resource, or one a template matches), of a bounded length, and a bounded count per session.
Without these an unauthenticated client could park megabytes per session in server memory.
Pure rules over the session's list; the session applies them.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Final

from mcpkit.errors import InvalidParamsError, ResourceNotFoundError

__all__ = [
    "MAX_SUBSCRIPTIONS",
    "MAX_URI_CHARS",
    "served_by",
    "subscribe",
    "unsubscribe",
]

MAX_SUBSCRIPTIONS: Final = 256
"""Subscriptions one session may hold; one more is refused until it unsubscribes from one."""

MAX_URI_CHARS: Final = 4096
"""Longest URI a session may subscribe to; longer ones name no resource a server would serve."""


def subscribe(subscriptions: list[str], uri: str, served: Callable[[str], bool]) -> None:
    """Add `uri` to the session's subscriptions, or refuse it with a specific error.

    `served(uri)` says whether the server has a resource or template for it; an unknown URI is
    the legacy "resource not found" (-32002), as `resources/read` of it would be.
    """
    if len(uri) > MAX_URI_CHARS:
        raise InvalidParamsError(
            f"resources/subscribe: params.uri is {len(uri)} characters long, over the "
            f"{MAX_URI_CHARS} this server accepts"
        )
    if uri in subscriptions:
        return
    if not served(uri):
        raise ResourceNotFoundError(uri, f"resources/subscribe: no resource or template serves {uri}")
    if len(subscriptions) >= MAX_SUBSCRIPTIONS:
        raise InvalidParamsError(
            f"resources/subscribe: this session already holds {MAX_SUBSCRIPTIONS} "
            "subscriptions, the most it may; unsubscribe from one first"
        )
    subscriptions.append(uri)


def served_by(server: Any) -> Callable[[str], bool]:
    """Whether `server` has a resource of that URI or a template matching it (what
    `resources/read` would find)."""

    def served(uri: str) -> bool:
        return uri in server.resources or any(
            t.template.match(uri) is not None for t in server.templates)

    return served


def unsubscribe(subscriptions: list[str], uri: str) -> None:
    """Drop `uri` if the session holds it; unsubscribing from what it does not hold is no error."""
    if uri in subscriptions:
        subscriptions.remove(uri)
