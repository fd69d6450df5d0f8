"""The era seam of the client: `EraAdapter`, what each era means for one connection.

`Client` is written once, for both eras. Everything an era changes goes through the one
adapter object the opener (`mcpkit.client.opening`) picks when a connection's era is settled:
`ModernAdapter` (`mcpkit.client.modern`) for 2026-07-28, `LegacyAdapter`
(`mcpkit.client.legacy.adapter`) for 2025-11-25. So the client holds no era branch: it asks its
adapter for the request `_meta`, whether a failed exchange means an expired session, what a
response must not be, the DiscoverResult, what to do with a notification outside any request,
and how a `Subscription` starts and ends.

An adapter is made for one `ClientCore` (`mcpkit.client.core`) and works through its public
members; `Listener` is what an adapter sees of a `Subscription`. Both seams here are protocols,
so this module sits below the core, the adapters and `listen.py`.

May import `mcpkit.types`, `mcpkit.errors` and the client's own lower modules; no I/O.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping
from typing import Any, Protocol

from mcpkit.errors import TransportError
from mcpkit.types.era import Era

__all__ = [
    "EraAdapter",
    "Listener",
]


class Listener(Protocol):
    """What an era adapter sees of a `Subscription`."""

    requested: dict[str, Any]
    acknowledged: dict[str, Any] | None

    async def open_stream(self) -> None:
        """Send `subscriptions/listen` and wait for its acknowledgement (modern era)."""

    def acknowledge(self, acknowledged: dict[str, Any]) -> None:
        """Take `acknowledged` as the server's answer without a listen stream."""

    def put(self, message: dict[str, Any]) -> None:
        """Hand one notification to the application."""

    def end(self) -> None:
        """End the iteration."""


class EraAdapter(Protocol):
    """What one era means for a connection; one object per Client and era."""

    era: Era

    async def opened(self, version: str, discover: dict[str, Any] | None) -> None:
        """The connection is open at `version` (with the probe's DiscoverResult, if any)."""

    def params(
        self, fields: dict[str, Any], token: Any, level: str | None,
        meta: Mapping[str, Any] | None,
    ) -> dict[str, Any]:
        """`fields` with the era's `_meta` added (a progress token, a log level, own keys)."""

    async def call(self, send: Callable[[], Awaitable[dict[str, Any]]], what: str) -> dict[str, Any]:
        """The first round trip of a call (`send`), with whatever the era does on top of it."""

    def expired(self, exc: TransportError) -> bool:
        """Whether `exc` means the server's session ended before the request was served, so a
        new connection and the request once more may succeed."""

    def check(self, response: dict[str, Any], method: str) -> None:
        """Raise what a response means in this era before its result is read."""

    async def discover(self, fresh: bool) -> dict[str, Any]:
        """The server's DiscoverResult."""

    async def answer(self, method: str, params: dict[str, Any] | None) -> dict[str, Any]:
        """A request the server sent to the client."""

    async def unsolicited(self, message: dict[str, Any]) -> None:
        """A notification outside any request (after the cache and the log handler saw it)."""

    async def listen(self, sub: Listener) -> None:
        """Start a subscription."""

    async def unlisten(self, sub: Listener) -> None:
        """End a subscription (its own stream, if any, is already closed)."""

    def close(self) -> None:
        """The client is closing: end every subscription it keeps."""
