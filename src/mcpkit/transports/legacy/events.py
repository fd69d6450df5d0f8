"""The event store of legacy SSE streams, at the import path `docs/http.md` has always named.

`EventStore`, `MemoryEventStore`, `Replay` and `EventReplayError` live in `mcpkit.store.events`
with the other state backends; this keeps `mcpkit.transports.http_events` importing them.
"""

from mcpkit.store.events import (
    EventReplayError,
    EventStore,
    MemoryEventStore,
    Replay,
    parse_event_id,
)

__all__ = ["EventReplayError", "EventStore", "MemoryEventStore", "Replay", "parse_event_id"]
