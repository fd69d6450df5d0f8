"""The rules of a 2025-11-25 session on Streamable HTTP, without I/O.

What the ASGI glue (`mcpkit.transports.http_sessions`, `mcpkit.transports.http_legacy`) asks before it sends a byte: how a
legacy POST that names no session is answered, when a request naming a session is refused
(the session is gone, its version header is not of its era, its id is in use), when a GET is
refused (no event stream in Accept, `Last-Event-ID` twice, a GET stream already open, an event
id that cannot be resumed from), which sessions get priming events, which requests change
what a session remembers, and how an exchange an unexpected exception escaped is answered.
Each refusal is a `Refusal` (`mcpkit.protocol.http_refusals`): the HTTP status, from the one
status table (`mcpkit.protocol.http.Status`), and the error response to send.

Legacy rules differ from the modern ones on purpose: handler errors travel with HTTP 200 (only
the transport's own refusals carry a 4xx), a client disconnect does not cancel a request
(LEG-10; `notifications/cancelled` does), and initialize mints an `Mcp-Session-Id`. Imports
`mcpkit.protocol`, `mcpkit.errors`, `mcpkit.types` and the store's error only.
"""

from __future__ import annotations

from typing import Any, Final

from mcpkit.errors import InternalError, InvalidRequestError, StoreUnavailableError
from mcpkit.protocol.codec import Message, Notification, Request, RequestId
from mcpkit.protocol.http import Status
from mcpkit.protocol.http_refusals import Refusal
from mcpkit.protocol.rejections import error_response, id_in_use
from mcpkit.store.events import EventReplayError
from mcpkit.types.constants import LEGACY_VERSION, LEGACY_VERSIONS
from mcpkit.types.methods import METHODS, Method

__all__ = [
    "PRIMING_VERSIONS",
    "STATEFUL",
    "Refusal",
    "escaped_answer",
    "exchange_named",
    "get_refusal",
    "gets_priming",
    "id_in_use_refusal",
    "resume_refusal",
    "session_not_found",
    "sessionless_answer",
    "stream_open",
    "version_refusal",
]

PRIMING_VERSIONS: Final = frozenset(v for v in LEGACY_VERSIONS if v >= LEGACY_VERSION)
"""Versions whose clients expect priming events (an id and empty data): older clients may
choke on an empty message, so their streams get ids on messages only and are never polled."""

STATEFUL: Final = frozenset(name for name, m in METHODS.items() if m.stateful)
"""Legacy requests that change what the session remembers (saved to the store after)."""


def _bad_request(request_id: RequestId | None, message: str) -> dict[str, Any]:
    return error_response(request_id, InvalidRequestError(message))


def gets_priming(protocol_version: str) -> bool:
    return protocol_version in PRIMING_VERSIONS


def sessionless_answer(message: Message) -> Refusal | None:
    """The answer to a legacy POST without `Mcp-Session-Id`; None for an `initialize`, which
    opens a session."""
    if type(message) is Request:
        if message.method == Method.INITIALIZE:
            return None
        return Refusal(Status.BAD_REQUEST, _bad_request(
            message.id, f"Bad Request: {message.method} needs the Mcp-Session-Id of an "
            "initialized 2025-11-25 session (send initialize first), or, for "
            "2026-07-28, params._meta with io.modelcontextprotocol/protocolVersion and "
            "the MCP-Protocol-Version header"))
    if type(message) is Notification:
        return Refusal(Status.ACCEPTED)
    return Refusal(Status.BAD_REQUEST, _bad_request(
        None, "Bad Request: a response needs the Mcp-Session-Id of the session "
        "whose request it answers"))


def session_not_found(request_id: RequestId | None, session_id: str) -> Refusal:
    return Refusal(Status.NOT_FOUND, _bad_request(
        request_id, f"Session not found: {session_id!r} ended or expired; send "
        "initialize (without Mcp-Session-Id) to start a new one"))


def version_refusal(request_id: RequestId | None, version: bytes | None,
                    protocol_version: str) -> Refusal | None:
    """A `MCP-Protocol-Version` header that is not of the initialize era is refused."""
    if version is None:
        return None
    text = version.decode("latin-1").strip()
    if text in LEGACY_VERSIONS:
        return None
    return Refusal(Status.BAD_REQUEST, _bad_request(
        request_id, f"Bad Request: MCP-Protocol-Version {text!r} is not a version "
        f"of a 2025-11-25 session (this session speaks {protocol_version})"))


def id_in_use_refusal(request_id: RequestId) -> Refusal:
    return Refusal(Status.BAD_REQUEST, error_response(
        request_id, id_in_use(request_id, " in this session")))


def get_refusal(sse_ok: bool, last_event_ids: list[bytes]) -> Refusal | None:
    """A session GET is an event stream, resuming at most one stream."""
    if not sse_ok:
        return Refusal(Status.NOT_ACCEPTABLE, _bad_request(
            None, "Not Acceptable: the session stream is text/event-stream; add it to Accept"))
    if len(last_event_ids) > 1:
        return Refusal(Status.BAD_REQUEST, _bad_request(
            None, "Bad Request: Last-Event-ID was sent twice; resume one stream per GET"))
    return None


def stream_open(session_id: str) -> Refusal:
    return Refusal(Status.CONFLICT, _bad_request(
        None, f"Conflict: session {session_id!r} already has its GET stream open (to "
        "pick up a stream that broke, send Last-Event-ID)"))


def resume_refusal(exc: EventReplayError) -> Refusal:
    """A `Last-Event-ID` that cannot be resumed from: 400 when it was never this session's,
    410 when it is no longer kept. Never 404: that would tell the client its session ended,
    and make it initialize again."""
    if exc.kind == "invalid":
        return Refusal(Status.BAD_REQUEST, _bad_request(None, f"Bad Request: {exc}"))
    return Refusal(Status.GONE, _bad_request(None, f"Gone: {exc}"))


def exchange_named(what: str, message: Message | None) -> str:
    """`what` (the kind of exchange) with the message it carried, for the log line of an
    exception that escaped it; the id bounded: a peer may send a huge one."""
    if isinstance(message, Request):
        return f"{what} {message.method} (id {repr(message.id)[:64]})"
    if isinstance(message, Notification):
        return f"{what} {message.method}"
    if message is not None:
        return f"{what} a response"
    return what


def escaped_answer(message: Message | None, what: str,
                   unavailable: StoreUnavailableError | None = None) -> Refusal:
    """The answer to a legacy exchange an unexpected exception escaped (`what`, named by
    `exchange_named`): a -32603 error for a request, with HTTP 200 like every legacy request's
    error (also the last event of its stream, when one had begun); 202 for a notification or a
    response, for which no reply is due; and for GET and DELETE, which have no message to
    answer, a 500 carrying a JSON-RPC error. A store that is down (`unavailable`) is no bug:
    its own message is the error, and a GET or DELETE gets 503, worth retrying."""
    if type(message) is Request:
        return Refusal(Status.OK, error_response(message.id, unavailable or InternalError(
            f"Internal error while serving {message.method}")))
    if message is None and unavailable is not None:
        return Refusal(Status.SERVICE_UNAVAILABLE, error_response(None, unavailable))
    if message is None:
        return Refusal(Status.INTERNAL_ERROR, error_response(None, InternalError(
            f"Internal error while handling {what}")))
    return Refusal(Status.ACCEPTED)
