"""State backends behind one small interface: `Store`.

A store keeps short-lived records by key, each with an expiry. Today it holds the nonces of
single-use request states (`add` is the atomic "first one wins" that single use needs) and the
counts of rate limits (`incr`, an atomic count per window); it is
also the seam through which shared backends (PostgreSQL, Redis) and the Tasks extension will
plug in. Implementations: `MemoryStore` (one process), `SQLiteStore` (processes sharing a file).

Beside the seam, the other state kept for later: the era a client decided for each server
(`era_cache.py`), and in `legacy/` the 2025-11-25 HTTP sessions and their resumable SSE
events.

Imports: the standard library and `mcpkit.types`; backends import their drivers themselves.
"""

from __future__ import annotations

import abc

__all__ = [
    "MemoryStore",
    "SQLiteStore",
    "Store",
]


class Store(abc.ABC):
    """Expiring records by key. Every method is safe to call from concurrent tasks."""

    @abc.abstractmethod
    async def add(self, key: str, value: bytes, expires_at: float) -> bool:
        """Record `key` unless a live record holds it; True only for the call that recorded it.

        This must be atomic across every process sharing the store: two concurrent `add`s of
        one key never both return True. `expires_at` is a Unix time in seconds; an expired
        record counts as absent.
        """

    @abc.abstractmethod
    async def get(self, key: str) -> bytes | None:
        """The live record's value, or None."""

    @abc.abstractmethod
    async def delete(self, key: str) -> None:
        """Forget `key` (nothing happens if it is absent)."""

    async def incr(self, key: str, expires_at: float) -> int:
        """Count one more under `key` and return the count, atomically across every process
        sharing the store (what a rate limit shared by replicas counts with); a count past its
        expiry counts as absent, so it starts again at 1 with this `expires_at`.

        Every engine of mcpkit's does it in one step. This fallback, for a store of another
        kind that does not, counts with `add` alone, one record per step (correct, but a round
        trip per count so far)."""
        count = 1
        while not await self.add(f"{key}#{count}", b"", expires_at):
            count += 1
        return count

    async def close(self) -> None:  # noqa: B027 -- optional for backends without resources
        """Release what the store holds open."""


def __getattr__(name: str) -> object:
    if name == "MemoryStore":
        from mcpkit.store.memory import MemoryStore

        return MemoryStore
    if name == "SQLiteStore":
        from mcpkit.store.sqlite import SQLiteStore

        return SQLiteStore
    raise AttributeError(f"module 'mcpkit.store' has no attribute {name!r}")
