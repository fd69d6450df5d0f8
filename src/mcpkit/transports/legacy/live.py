"""What one legacy (2025-11-25) session has open in this process right now (`LiveSession`):
our requests awaiting the client's answers, its requests in flight, its GET stream and the
request streams a GET may resume. None of it is stored: it lives only while a connection is
open, so it stays with the process serving that connection (`mcpkit.transports.legacy.sessions`).
"""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from typing import Any

from mcpkit.protocol.codec import RequestId
from mcpkit.protocol.outstanding import Outstanding
from mcpkit.transports.http_server.exchange import Exchange
from mcpkit.transports.legacy.resume import Channel

__all__ = ["LiveSession"]


class LiveSession:
    """What one session has open in this process right now."""

    __slots__ = ("inflight", "pending", "stream", "streams")

    def __init__(self, ids: Iterator[int], prefix: str = "mcpkit-") -> None:
        self.pending: Outstanding[asyncio.Future[dict[str, Any]]] = Outstanding(prefix, ids)
        """Our requests to the client awaiting its answers (ids unique across sessions, and
        across replicas by their prefix: `mcpkit.transports.legacy.relay`)."""
        self.inflight: dict[RequestId, Exchange] = {}
        self.stream: Exchange | None = None
        """The connection carrying the session's GET stream."""
        self.streams: dict[str, Channel] = {}
        """Request streams not ended yet, by stream id (a GET may resume them)."""

    def idle(self) -> bool:
        return (not self.pending and not self.inflight and self.stream is None
                and not self.streams)
