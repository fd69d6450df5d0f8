"""The resumability rules of 2025-11-25 SSE streams, without I/O.

What the ASGI glue (`mcpkit.transports.legacy.resume`, `.sessions`, `.streams`) asks before it
writes a byte of a resumable stream: how a stream's id is made and which kind of stream an id
names (the session's GET stream, or the stream a request's response became), which
`Last-Event-ID` a GET resumes from, which events are worth a write (an event without a message
only where the session's version expects priming events), what a replay writes, when a
connection is given back early (polling mode, LEG-11) and what its closing `retry` looks like.
Randomness is passed in (the stream id's token), and nothing here reads a clock or awaits.

Which ids are malformed, foreign or no longer kept is the event store's to say
(`mcpkit.store.legacy.events.EventReplayError`); how each is refused is
`mcpkit.legacy.http_session.resume_refusal`. Imports the store's `Replay` only.
"""

from __future__ import annotations

from typing import Final

from mcpkit.store.legacy.events import Replay

__all__ = [
    "DEFAULT_RETRY_MS",
    "is_session_stream",
    "polls",
    "replay_blocks",
    "request_stream_id",
    "resume_from",
    "retry_block",
    "retry_or_default",
    "session_stream_id",
    "sse_block",
    "worth_writing",
]

DEFAULT_RETRY_MS: Final = 1000
"""The `retry` sent when a connection is closed early and no `sse_retry_ms` is configured."""

_SESSION_STREAM: Final = "g"
"""The first letter of a session GET stream's id; a request's stream starts with `p`."""
_REQUEST_STREAM: Final = "p"


def session_stream_id(token: str) -> str:
    """The id of a new session GET stream, from a random `token` the caller draws."""
    return _SESSION_STREAM + token


def request_stream_id(token: str) -> str:
    """The id of the stream a request's response becomes, from a random `token`."""
    return _REQUEST_STREAM + token


def is_session_stream(stream_id: str) -> bool:
    """Whether an id (read from a `Last-Event-ID`) names the session's GET stream, which has
    no end and is resumed on a new connection, rather than a request's stream."""
    return stream_id.startswith(_SESSION_STREAM)


def resume_from(last_event_ids: list[bytes]) -> str | None:
    """The event id a session GET resumes after, or None for a GET opening the session's
    stream. More than one `Last-Event-ID` is refused before this (`get_refusal`)."""
    if not last_event_ids:
        return None
    return last_event_ids[0].decode("latin-1").strip()


def retry_or_default(retry_ms: int | None) -> int:
    """The `retry` of an early close: the configured `sse_retry_ms`, else the default."""
    return DEFAULT_RETRY_MS if retry_ms is None else retry_ms


def polls(primes: bool, retry_ms: int | None) -> bool:
    """Polling mode (LEG-11): a connection carrying a stream is given back after a while, and
    the client resumes. Only where a `retry` is configured and the session's version expects
    the empty closing event that carries it."""
    return primes and retry_ms is not None


def worth_writing(data: bytes, primes: bool) -> bool:
    """An event is written when it carries a message, or, to a client expecting priming events,
    when it carries only its id (a priming, closing or end mark). Older clients may choke on
    an empty message; the event is still kept for a replay."""
    return bool(data) or primes


def sse_block(event_id: str | None, data: bytes, retry_ms: int | None = None) -> bytes:
    """One SSE event: optional id and retry fields, then one `data:` line (empty for a priming
    or closing event, which a client must still see: it carries the id to resume from)."""
    head = b"id: " + event_id.encode() + b"\n" if event_id is not None else b""
    if retry_ms is not None:
        head += b"retry: %d\n" % retry_ms
    return head + (b"data: " + data if data else b"data:") + b"\n\n"


def retry_block(retry_ms: int | None) -> bytes:
    """The `retry` alone, ending a replay of a stream that has not ended: the client asks
    again, since another instance sharing the store may still be writing it."""
    return b"retry: %d\n\n" % retry_or_default(retry_ms)


def replay_blocks(replay: Replay, primes: bool) -> list[bytes]:
    """What a GET resuming a stream is sent of what the store kept after its `Last-Event-ID`."""
    return [sse_block(event_id, data) for event_id, data in replay.events
            if worth_writing(data, primes)]
