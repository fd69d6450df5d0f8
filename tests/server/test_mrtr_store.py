"""The `Store` behind single use: first add wins, expired records count as absent, and SQLite
holds that across processes."""

from __future__ import annotations

import asyncio
import subprocess
import sys
from pathlib import Path

import pytest

from mcpkit.store import MemoryStore, SQLiteStore, Store


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def stores(tmp_path: Path, clock: Clock) -> list[Store]:
    return [MemoryStore(clock=clock), SQLiteStore(tmp_path / "records.db", clock=clock)]


async def test_the_first_add_of_a_key_wins_until_it_expires(tmp_path: Path) -> None:
    clock = Clock()
    for store in stores(tmp_path, clock):
        assert await store.add("k", b"one", 1010.0)
        assert not await store.add("k", b"two", 1020.0)
        assert await store.get("k") == b"one"
        clock.now = 1010.0
        assert await store.get("k") is None
        assert await store.add("k", b"three", 1030.0)
        assert await store.get("k") == b"three"
        await store.delete("k")
        assert await store.get("k") is None
        await store.close()
        clock.now = 1000.0


async def test_concurrent_adds_of_one_key_have_exactly_one_winner(tmp_path: Path) -> None:
    for store in stores(tmp_path, Clock()):
        wins = await asyncio.gather(*(store.add("race", b"", 2000.0) for _ in range(20)))
        assert wins.count(True) == 1
        await store.close()


def test_sqlite_add_is_atomic_across_processes(tmp_path: Path) -> None:
    db = tmp_path / "shared.db"
    code = (
        "import asyncio, sys\n"
        "from mcpkit.store.sqlite import SQLiteStore\n"
        "async def main():\n"
        f"    s = SQLiteStore({str(db)!r})\n"
        "    won = [k for k in range(50) if await s.add(f'n{k}', b'', 4e9)]\n"
        "    print(len(won))\n"
        "asyncio.run(main())\n"
    )
    procs = [subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.PIPE, text=True)
             for _ in range(3)]
    try:
        counts = [int(p.communicate(timeout=60)[0]) for p in procs]
    finally:
        for p in procs:
            if p.poll() is None:
                p.kill()
                p.wait()
    assert sum(counts) == 50, counts


async def test_the_memory_store_refuses_to_grow_without_bound() -> None:
    store = MemoryStore(clock=Clock(), max_records=3)
    for k in range(3):
        assert await store.add(str(k), b"", 5000.0)
    with pytest.raises(RuntimeError, match="max_records"):
        await store.add("3", b"", 5000.0)


async def test_expired_records_are_swept_to_make_room() -> None:
    clock = Clock()
    store = MemoryStore(clock=clock, max_records=3)
    for k in range(3):
        await store.add(str(k), b"", 1001.0)
    clock.now = 1002.0
    assert await store.add("fresh", b"", 2000.0)
    assert len(store) == 1


def test_a_store_must_implement_the_interface() -> None:
    class Half(Store):
        async def add(self, key: str, value: bytes, expires_at: float) -> bool:
            return True

    with pytest.raises(TypeError, match="abstract"):
        Half()  # type: ignore[abstract]
