"""The connection itself failed: closed, refused, timed out, a stream cut short, or an SSE
stream that cannot be resumed from where the client asks.

These carry no JSON-RPC code: they happen on this side and cannot be mistaken for something the
peer said.
"""

from __future__ import annotations

from typing import Literal

from mcpkit.errors.base import MCPError

__all__ = [
    "BrokenStreamError",
    "EventReplayError",
    "HTTPStatusError",
    "RequestTimeoutError",
    "SessionExpiredError",
    "TransportError",
]


class TransportError(MCPError):
    """The connection failed: closed, refused, timed out or broken mid-stream."""

    unreached: bool = False
    """Nothing took the connection (refused, no such host): no server got the request."""

    def __init__(self, *args: object, unreached: bool = False) -> None:
        super().__init__(*args)
        self.unreached = unreached


class RequestTimeoutError(TransportError, TimeoutError):
    """No response within the timeout; the request was cancelled on the wire."""


class HTTPStatusError(TransportError):
    """The server answered with an HTTP error status and no JSON-RPC message in the body."""

    def __init__(self, status_code: int, body: bytes, what: str) -> None:
        shown = body[:200].decode("utf-8", "replace")
        super().__init__(f"{what}: HTTP {status_code}" + (f": {shown}" if shown else ""))
        self.status_code = status_code
        self.body = body


class SessionExpiredError(HTTPStatusError):
    """The legacy session is gone (404): send initialize again, without the old id."""


class BrokenStreamError(TransportError):
    """The response stream ended before the response: the request is lost, unless (legacy
    era) the stream named its last event, which a GET can resume from."""

    def __init__(
        self, message: str, last_event_id: str | None = None, retry_ms: int | None = None
    ) -> None:
        super().__init__(message)
        self.last_event_id = last_event_id
        self.retry_ms = retry_ms


class EventReplayError(MCPError, LookupError):
    """A `Last-Event-ID` that cannot be resumed from.

    `kind` is "invalid" for an id this session never had (malformed, not issued yet, or another
    session's) and "gone" for one that is no longer kept (expired, evicted by the store's bounds,
    or forgotten with its session); the message says which and what to do.
    """

    def __init__(self, kind: Literal["invalid", "gone"], message: str) -> None:
        super().__init__(message)
        self.kind = kind
