"""The lifecycle of a 2025-11-25 HTTP session, without I/O: its phases, and what each
notification a client sends on it changes.

A session is `OPENED` when `initialize` is answered (its id minted, its `LegacyState` kept),
`READY` once the client sends `notifications/initialized`, and `GONE` when the store no longer
has it (the client ended it with DELETE, or the store let it expire; a request naming it is a
404, `mcpkit.legacy.http_session.session_not_found`). As served today the two live phases
answer the same requests: a request before `notifications/initialized` is not refused, and
`initialize` is refused in both (`LegacySession`: "already initialized").

What the ASGI glue (`mcpkit.transports.legacy.sessions`) does with a notification is a
`NotificationEffect`: whether the session's state is saved, and which of its requests in
flight is cancelled. Imports `mcpkit.protocol`, `mcpkit.types` and the session's state only.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum

from mcpkit.legacy.session import LegacyState
from mcpkit.protocol.codec import Notification, RequestId
from mcpkit.protocol.outstanding import peer_id, unnamed_id
from mcpkit.types.methods import Method

__all__ = [
    "NotificationEffect",
    "Phase",
    "on_notification",
    "phase_of",
]


class Phase(StrEnum):
    """Where a legacy session is in its life."""

    OPENED = "opened"
    """`initialize` answered; `notifications/initialized` not seen yet."""
    READY = "ready"
    """The handshake is complete."""
    GONE = "gone"
    """Ended or expired: the store has no state for the id."""


def phase_of(state: LegacyState | None) -> Phase:
    """The phase of the session whose stored state is `state` (None: not in the store)."""
    if state is None:
        return Phase.GONE
    return Phase.READY if state.initialized else Phase.OPENED


@dataclass(frozen=True, slots=True)
class NotificationEffect:
    """What one notification on a session asks of the transport."""

    save: bool = False
    """The session's state changed and is saved to the store."""
    cancel: RequestId | None = None
    """The id of the request in flight to cancel (if it is still running)."""
    unnamed: str | None = None
    """Why a `requestId` named no request, for the log; None when it did or was absent."""


def on_notification(state: LegacyState, note: Notification) -> NotificationEffect:
    """Apply `note` to `state` and say what the transport does about it.

    `notifications/initialized` completes the handshake (`OPENED` -> `READY`), saved even when
    repeated; `notifications/cancelled` names a request by a string or an integer only, checked
    before any lookup (a list or an object would be unhashable, and 1.0 or true would name
    request 1); `roots/list_changed` and unknown notifications change nothing.
    """
    if note.method == Method.INITIALIZED:
        state.initialized = True
        return NotificationEffect(save=True)
    if note.method == Method.CANCELLED:
        raw = (note.params or {}).get("requestId")
        return NotificationEffect(cancel=peer_id(raw), unnamed=unnamed_id(raw))
    return NotificationEffect()
