"""Where the SSE events of legacy (2025-11-25) sessions are kept so a broken stream can be
resumed: the `EventStore` interface and its bounded in-memory implementation.

Only the initialize era has resumability; 2026-07-28 responses carry no event ids and nothing
of them is kept (HTTP-9). The store knows sessions, streams and opaque payload bytes, nothing of
HTTP or JSON-RPC, so a shared store (a database, a cache server) can implement the same three
methods for several instances. Event ids are `<stream id>.<n>`: `n` counts the session's
events (a session whose record was dropped and is kept anew counts on past every number it
could have issued), so ids are unique within the session and increase, and the stream a
`Last-Event-ID` belongs to can be read from it. The standard library only.
"""

from __future__ import annotations

import logging
from collections import OrderedDict, deque
from dataclasses import dataclass
from typing import Protocol

from mcpkit.errors import EventReplayError

__all__ = [
    "BoundedEvents",
    "EventReplayError",
    "EventStore",
    "MemoryEventStore",
    "Replay",
]

log = logging.getLogger("mcpkit.transport")

_MAX_ID_CHARS = 128
_MAX_STREAM_CHARS = 100
_EVENT_OVERHEAD = 96
"""Bytes counted for each kept event besides its payload (the tuple, the id, the deque slot)."""
_STREAM_OVERHEAD = 128
"""Bytes counted for a stream's record (the record, its entries in two maps)."""
_SESSION_OVERHEAD = 1024
"""Bytes counted for a session's record (mostly its deque's first block)."""


@dataclass(frozen=True, slots=True)
class Replay:
    """What a stream carried after one event."""

    stream_id: str
    events: list[tuple[str, bytes]]
    """(event id, payload) in order; an empty payload is an event without a message (a priming
    event, or the mark of a stream that ended without a response)."""
    ended: bool
    """The stream's last event is among `events` (or was the one named): nothing will follow."""


class EventStore(Protocol):
    """Keeps the events of legacy sessions' SSE streams for replay after a reconnection."""

    async def append(self, session_id: str, stream_id: str, data: bytes, *,
                     final: bool = False) -> str:
        """Keep one event of `stream_id` (one of the session's streams) and return its id.

        `data` is the encoded message, or empty for an event that carries none. `final` marks
        the stream's last event (its response, or the mark of an abandoned stream).
        """

    async def replay_after(self, session_id: str, event_id: str) -> Replay:
        """The events of `event_id`'s stream that came after it; raises `EventReplayError`
        when the id is not one of this session's or is no longer kept."""

    async def forget(self, session_id: str) -> None:
        """Drop everything kept for a session (it ended)."""


def parse_event_id(event_id: str) -> tuple[str, int] | None:
    """(stream id, sequence number) of an id in the `<stream>.<n>` form, or None."""
    if len(event_id) > _MAX_ID_CHARS:
        return None
    stream_id, dot, number = event_id.rpartition(".")
    if not dot or not _is_stream_id(stream_id) or not number.isdigit() or not number.isascii():
        return None
    return stream_id, int(number)


def _is_stream_id(text: str) -> bool:
    """Letters, digits, '-' and '_' only: safe in an SSE field and in an error message."""
    return bool(text) and text.isascii() and text.replace("-", "a").replace("_", "a").isalnum()


class BoundedEvents:
    """What every event store keeps within, and the refusals a replay can meet: written once,
    so a client resuming through any backend (memory, PostgreSQL, Redis) reads the same words."""

    def __init__(self, max_events: int = 1000, max_bytes: int = 8 * 1024 * 1024,
                 max_total_bytes: int = 128 * 1024 * 1024) -> None:
        if max_events < 1 or max_bytes < 1 or max_total_bytes < 1:
            raise ValueError(f"{type(self).__name__}: max_events, max_bytes and max_total_bytes "
                             "must be positive")
        self.max_events = max_events
        self.max_bytes = max_bytes
        self.max_total_bytes = max_total_bytes

    @staticmethod
    def replay_point(event_id: str) -> tuple[str, int]:
        """(stream id, number) of a `Last-Event-ID`, or the "invalid" refusal."""
        parsed = parse_event_id(event_id)
        if parsed is None:
            raise EventReplayError("invalid", f"Last-Event-ID {event_id[:_MAX_ID_CHARS]!r} is not "
                                   "an event id this server issued (<stream>.<number>)")
        return parsed

    @staticmethod
    def unknown_stream(event_id: str) -> EventReplayError:
        return EventReplayError("gone", f"Last-Event-ID {event_id!r}: its stream is no "
                                "longer kept, or never existed (a stream is kept while some "
                                "of its events are; they go with their session or are "
                                "evicted by the store's bounds); what it carried cannot be "
                                "resumed: send the request again, or open a new GET stream")

    @staticmethod
    def other_session(event_id: str) -> EventReplayError:
        return EventReplayError("invalid", f"Last-Event-ID {event_id!r} belongs to another "
                                "session; resume only streams of this Mcp-Session-Id")

    @staticmethod
    def not_issued(event_id: str, newest: object) -> EventReplayError:
        return EventReplayError("invalid", f"Last-Event-ID {event_id!r} was never issued "
                                f"(the session's newest event is number {newest})")

    def evicted(self, event_id: str) -> EventReplayError:
        return EventReplayError("gone", f"Last-Event-ID {event_id!r}: events after it were "
                                "evicted (the event store keeps at most "
                                f"{self.max_events} events and {self.max_bytes} bytes per "
                                "session); the stream cannot be resumed, send the request again")


class _Stream:
    __slots__ = ("count", "ended", "floor")

    def __init__(self, floor: int) -> None:
        self.count = 0
        """Events of this stream still kept."""
        self.floor = floor
        """Resuming from an event older than this is "gone": the newest of the stream's events
        that was evicted, or, for a stream kept anew, the session's floor (its earlier events,
        if it had any, went before that)."""
        self.ended = False


class _Session:
    __slots__ = ("events", "floor", "seq", "size", "streams", "warned")

    def __init__(self, seq: int) -> None:
        self.events: deque[tuple[int, str, bytes]] = deque()
        self.seq = seq
        self.floor = seq
        """The newest of the session's event numbers that was evicted."""
        self.size = 0
        """Bytes counted for its events and stream records (not the session's own record)."""
        self.streams: dict[str, _Stream] = {}
        self.warned = False


class MemoryEventStore(BoundedEvents):
    """Events in this process, bounded.

    Each session keeps at most `max_events` events and `max_bytes` bytes of them, and the whole
    store `max_total_bytes` (the bookkeeping of sessions and streams counted too); past a
    bound the oldest events go first (for the total, those of the sessions quiet longest), and
    a client resuming from before them gets a "gone" error saying so (the log says so once per
    session, and once for the total). The event just appended is always kept. A stream, or a
    session, is remembered only while some event of it is kept, so streams that never end (a
    session's GET streams) and sessions that expire without a DELETE cost nothing once newer
    events have pushed theirs out. `forget` drops a session's events when it ends.
    """

    def __init__(self, max_events: int = 1000, max_bytes: int = 8 * 1024 * 1024,
                 max_total_bytes: int = 128 * 1024 * 1024) -> None:
        super().__init__(max_events, max_bytes, max_total_bytes)
        self._sessions: OrderedDict[str, _Session] = OrderedDict()
        """Least recently appended to first."""
        self._owners: dict[str, str] = {}
        """stream id -> the session it belongs to (to tell another session's id from a lost one)."""
        self._total = 0
        self._restart = 0
        """The highest event number a session record that was dropped had reached: a session
        kept anew counts on from it, so no id it issued before can be issued again."""
        self._warned_total = False

    @property
    def total_bytes(self) -> int:
        return self._total

    def __len__(self) -> int:
        """Sessions with events kept."""
        return len(self._sessions)

    async def append(self, session_id: str, stream_id: str, data: bytes, *,
                     final: bool = False) -> str:
        sessions = self._sessions
        session = sessions.get(session_id)
        if session is None:
            session = sessions[session_id] = _Session(self._restart)
            self._total += _SESSION_OVERHEAD
        else:
            sessions.move_to_end(session_id)
        stream = session.streams.get(stream_id)
        if stream is None:
            if not _is_stream_id(stream_id) or len(stream_id) > _MAX_STREAM_CHARS:
                raise ValueError(f"MemoryEventStore.append: stream id {stream_id[:80]!r} must be "
                                 f"1 to {_MAX_STREAM_CHARS} letters, digits, '-' or '_'")
            if stream_id in self._owners:
                raise ValueError(f"MemoryEventStore.append: stream id {stream_id!r} is a stream "
                                 "of another session; stream ids are unique across sessions")
            stream = session.streams[stream_id] = _Stream(session.floor)
            self._owners[stream_id] = session_id
            session.size += _STREAM_OVERHEAD
            self._total += _STREAM_OVERHEAD
        session.seq += 1
        seq = session.seq
        session.events.append((seq, stream_id, data))
        size = len(data) + _EVENT_OVERHEAD
        session.size += size
        self._total += size
        stream.count += 1
        stream.ended = final
        if len(session.events) > self.max_events or session.size > self.max_bytes:
            self._trim(session_id, session)
        if self._total > self.max_total_bytes:
            self._trim_total(session_id)
        return f"{stream_id}.{seq}"

    async def replay_after(self, session_id: str, event_id: str) -> Replay:
        stream_id, seq = self.replay_point(event_id)
        owner = self._owners.get(stream_id)
        if owner is None:
            raise self.unknown_stream(event_id)
        if owner != session_id:
            raise self.other_session(event_id)
        session = self._sessions[session_id]
        stream = session.streams[stream_id]
        if seq > session.seq:
            raise self.not_issued(event_id, session.seq)
        if stream.floor > seq:
            raise self.evicted(event_id)
        events = [(f"{stream_id}.{n}", data) for n, sid, data in session.events
                  if n > seq and sid == stream_id]
        return Replay(stream_id, events, stream.ended)

    async def forget(self, session_id: str) -> None:
        session = self._sessions.pop(session_id, None)
        if session is not None:
            self._drop(session)

    # -- bounds -------------------------------------------------------------------------------

    def _drop(self, session: _Session) -> None:
        """Forget a session record that is out of `_sessions` already."""
        self._total -= session.size + _SESSION_OVERHEAD
        self._restart = max(self._restart, session.seq)
        for stream_id in session.streams:
            del self._owners[stream_id]

    def _evict_one(self, session: _Session) -> None:
        seq, stream_id, data = session.events.popleft()
        size = len(data) + _EVENT_OVERHEAD
        session.size -= size
        self._total -= size
        session.floor = seq
        stream = session.streams[stream_id]
        stream.count -= 1
        stream.floor = seq
        if stream.count == 0:  # nothing left to replay: a resume from it is "gone"
            del session.streams[stream_id]
            del self._owners[stream_id]
            session.size -= _STREAM_OVERHEAD
            self._total -= _STREAM_OVERHEAD

    def _trim(self, session_id: str, session: _Session) -> None:
        evicted = False
        while len(session.events) > 1 and (
                len(session.events) > self.max_events or session.size > self.max_bytes):
            self._evict_one(session)
            evicted = True
        if evicted and not session.warned:
            session.warned = True
            log.warning("legacy session %s: the event store dropped its oldest SSE events "
                        "(bounds: %d events, %d bytes per session); a client resuming from "
                        "before them cannot be served", session_id, self.max_events,
                        self.max_bytes)

    def _trim_total(self, current: str) -> None:
        """Evict from the sessions quiet longest; only `current`'s newest event is spared."""
        sessions = self._sessions
        while self._total > self.max_total_bytes:
            session_id, session = next(iter(sessions.items()))
            if not self._warned_total:
                self._warned_total = True
                log.warning("the legacy event store reached max_total_bytes (%d): the events of "
                            "the sessions quiet longest are being dropped, and their clients "
                            "cannot resume from before them (logged once)",
                            self.max_total_bytes)
            if session_id == current:  # every other session is gone already
                while self._total > self.max_total_bytes and len(session.events) > 1:
                    self._evict_one(session)
                return
            while self._total > self.max_total_bytes and session.events:
                self._evict_one(session)
            if not session.events:
                del sessions[session_id]
                self._drop(session)
