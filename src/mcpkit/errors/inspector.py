"""The errors of `mcpkit dev`, the inspector in the browser: an action its page sent that it
cannot take, a question no longer open, no connection, a call the user cancelled."""

from __future__ import annotations

from mcpkit.errors.base import MCPError

__all__ = [
    "CallCancelledError",
    "InspectorRequestError",
    "NotConnectedError",
    "QuestionClosedError",
]


class InspectorRequestError(MCPError, ValueError):
    """`mcpkit dev`'s page sent an action it cannot take; the message names the field and what
    it takes (answered with HTTP 400)."""


class QuestionClosedError(MCPError, LookupError):
    """`mcpkit dev`'s page answered a question that is no longer open (answered already, or
    the call that asked it ended)."""


class NotConnectedError(MCPError, RuntimeError):
    """An action of `mcpkit dev`'s page needs the connection, and there is none; the message
    says why the last one failed."""


class CallCancelledError(MCPError):
    """The user cancelled a call from `mcpkit dev`'s page: a request in flight is cancelled on
    the wire, a question it waited on is withdrawn, and no retry is sent."""
