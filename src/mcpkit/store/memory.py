"""`MemoryStore`: records in this process's memory, for one-process servers and tests.

Single use enforced here holds only within the process: servers that run as several
processes or instances need a shared store (`SQLiteStore` on one host).
"""

from __future__ import annotations

import time
from collections.abc import Callable

from mcpkit.store import Store

__all__ = ["MemoryStore"]


class MemoryStore(Store):
    """A dict with expiries; expired records are swept as new ones arrive."""

    def __init__(self, *, clock: Callable[[], float] = time.time, max_records: int = 1_000_000):
        self._clock = clock
        self._records: dict[str, tuple[bytes, float]] = {}
        self._max = max_records
        self._adds = 0

    async def add(self, key: str, value: bytes, expires_at: float) -> bool:
        now = self._clock()
        held = self._records.get(key)
        if held is not None and held[1] > now:
            return False
        self._adds += 1
        if self._adds % 1024 == 0 or len(self._records) >= self._max:
            self._sweep(now)
            if len(self._records) >= self._max:
                raise RuntimeError(
                    f"MemoryStore holds {self._max} live records; raise max_records or use a "
                    "shared store"
                )
        self._records[key] = (value, expires_at)
        return True

    async def incr(self, key: str, expires_at: float) -> int:
        now = self._clock()
        held = self._records.get(key)
        if held is None or held[1] <= now:
            count, expires = 1, expires_at
            await self.add(key, b"1", expires_at)  # a new record: swept and bounded as one
        else:
            count, expires = int(held[0]) + 1, held[1]
        self._records[key] = (b"%d" % count, expires)
        return count

    async def get(self, key: str) -> bytes | None:
        held = self._records.get(key)
        if held is None or held[1] <= self._clock():
            return None
        return held[0]

    async def delete(self, key: str) -> None:
        self._records.pop(key, None)

    def _sweep(self, now: float) -> None:
        for key in [k for k, (_, exp) in self._records.items() if exp <= now]:
            del self._records[key]

    def __len__(self) -> int:
        return len(self._records)
