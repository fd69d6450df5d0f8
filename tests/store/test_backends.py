"""One behavioural contract for every backend a store URL opens: memory, SQLite, PostgreSQL
and Redis (real servers, tests/helpers/services.py).

Single use is first-writer-wins under concurrency (two pools racing where the backend is
shared), records expire by the clock, and legacy sessions keep the memory store's caps, owner
quota and idle expiry; on the shared backends, what one replica (a second backend on the same
URL: its own pool) wrote, another reads.
"""

from __future__ import annotations

import asyncio
import dataclasses
from collections.abc import Awaitable, Callable
from typing import Any

import pytest
from backends import SHARED, Clock

from mcpkit.store.legacy.opening import session_store
from mcpkit.store.legacy.sessions import SessionOwner
from mcpkit.store.urls import Backend, StoreURLError, open_backend, parse_store_url


@dataclasses.dataclass
class State:
    """A session state as small as LegacyState, kept through the store's JSON codec."""

    name: str
    items: list[str] = dataclasses.field(default_factory=list)


Opener = Callable[[str], Backend]


# -- single use --------------------------------------------------------------------------------

async def test_the_first_add_wins_and_a_record_is_read_back(url: str, opened: Any) -> None:
    clock = Clock()
    store = opened(url, clock).store
    assert await store.add("once:a", b"v1", clock.now + 60)
    assert not await store.add("once:a", b"v2", clock.now + 60)
    assert await store.get("once:a") == b"v1"
    assert await store.get("once:missing") is None
    await store.delete("once:a")
    assert await store.get("once:a") is None
    assert await store.add("once:a", b"v3", clock.now + 60)  # deleted: free again


async def test_incr_counts_once_per_call_and_starts_again_past_its_expiry(url: str, opened: Any
                                                                         ) -> None:
    clock = Clock()
    store = opened(url, clock).store
    assert [await store.incr("rate:a", clock.now + 10) for _ in range(3)] == [1, 2, 3]
    assert await store.incr("rate:b", clock.now + 10) == 1  # keys count apart
    clock.advance(9)
    assert await store.incr("rate:a", clock.now + 10) == 4  # the first expiry holds
    clock.advance(1)
    assert await store.incr("rate:a", clock.now + 10) == 1  # expired: counted afresh


async def test_concurrent_incr_never_loses_a_count(url: str, opened: Any) -> None:
    clock = Clock()
    store = opened(url, clock).store
    counts = await asyncio.gather(*(store.incr("rate:c", clock.now + 60) for _ in range(25)))
    assert sorted(counts) == list(range(1, 26))


async def test_the_fallback_incr_of_a_store_without_one_counts_with_add() -> None:
    from mcpkit.store import Store
    from mcpkit.store.memory import MemoryStore

    class AddOnly(Store):
        def __init__(self) -> None:
            self.inner = MemoryStore()

        async def add(self, key: str, value: bytes, expires_at: float) -> bool:
            return await self.inner.add(key, value, expires_at)

        async def get(self, key: str) -> bytes | None:
            return await self.inner.get(key)

        async def delete(self, key: str) -> None:
            await self.inner.delete(key)

    store = AddOnly()
    assert [await store.incr("k", 1e12) for _ in range(3)] == [1, 2, 3]


async def test_an_expired_record_is_absent_and_may_be_added_again(url: str, opened: Any) -> None:
    clock = Clock()
    store = opened(url, clock).store
    assert await store.add("once:e", b"old", clock.now + 10)
    clock.advance(9)
    assert await store.get("once:e") == b"old"
    assert not await store.add("once:e", b"new", clock.now + 10)
    clock.advance(1)  # expires_at reached: expired
    assert await store.get("once:e") is None
    assert await store.add("once:e", b"new", clock.now + 10)
    assert await store.get("once:e") == b"new"


async def test_concurrent_adds_of_one_key_have_one_winner(url: str, opened: Any) -> None:
    clock = Clock()
    first = opened(url, clock).store
    # Shared kinds: a second backend is a second pool, as another replica would have.
    second = opened(url, clock).store if parse_store_url(url).kind in SHARED else first
    for round_ in range(20):
        key = f"once:race-{round_}"
        results = await asyncio.gather(*(
            (first if i % 2 else second).add(key, b"%d" % i, clock.now + 60) for i in range(8)))
        assert sum(results) == 1, (round_, results)
        winner = results.index(True)
        assert await second.get(key) == b"%d" % winner


async def test_a_record_written_through_one_replica_is_seen_by_another(
        shared_url: str, opened: Any) -> None:
    clock = Clock()
    a, b = opened(shared_url, clock).store, opened(shared_url, clock).store
    assert await a.add("once:shared", b"x", clock.now + 60)
    assert not await b.add("once:shared", b"y", clock.now + 60)
    assert await b.get("once:shared") == b"x"


async def test_two_replicas_incrementing_one_key_share_one_count(shared_url: str, opened: Any
                                                                 ) -> None:
    clock = Clock()
    a, b = opened(shared_url, clock).store, opened(shared_url, clock).store
    counts = await asyncio.gather(*((a if i % 2 else b).incr("rate:shared", clock.now + 60)
                                    for i in range(20)))
    assert sorted(counts) == list(range(1, 21))


# -- legacy sessions ---------------------------------------------------------------------------

def _sessions(backend: Backend, **limits: Any) -> Any:
    return session_store(backend, State, **limits)


async def test_a_session_is_created_loaded_saved_and_deleted(url: str, opened: Any) -> None:
    sessions = _sessions(opened(url, Clock()))
    assert await sessions.create("s1", State("one"))
    loaded = await sessions.load("s1")
    assert loaded == State("one")
    await sessions.save("s1", State("one", ["a", "b"]))
    assert await sessions.load("s1") == State("one", ["a", "b"])
    assert await sessions.delete("s1")
    assert not await sessions.delete("s1")
    assert await sessions.load("s1") is None
    await sessions.save("s1", State("ghost"))  # saving an ended session brings nothing back
    assert await sessions.load("s1") is None


async def test_an_idle_session_ends_and_a_used_one_stays(url: str, opened: Any) -> None:
    clock = Clock()
    sessions = _sessions(opened(url, clock), idle_s=100)
    assert await sessions.create("busy", State("busy"))
    assert await sessions.create("idle", State("idle"))
    for _ in range(3):
        clock.advance(60)
        assert await sessions.load("busy") is not None  # each use restarts its idle time
    assert await sessions.load("idle") is None  # 180 s without a request
    assert await sessions.load("busy") == State("busy")


async def test_a_full_store_ends_the_least_recently_used_anonymous_session(
        url: str, opened: Any) -> None:
    clock = Clock()
    sessions = _sessions(opened(url, clock), max_sessions=3)
    for name in ("a", "b", "c"):
        clock.advance(1)
        assert await sessions.create(name, State(name))
    clock.advance(1)
    assert await sessions.load("a") is not None  # a is now the most recently used
    clock.advance(1)
    assert await sessions.create("d", State("d"))
    assert await sessions.load("b") is None
    assert all([await sessions.load(n) is not None for n in ("a", "c", "d")])


async def test_an_anonymous_create_never_ends_an_authenticated_session(
        url: str, opened: Any) -> None:
    clock = Clock()
    sessions = _sessions(opened(url, clock), max_sessions=2)
    alice, bob = SessionOwner("alice", True), SessionOwner("bob", True)
    assert await sessions.create("a1", State("a1"), alice)
    clock.advance(1)
    assert await sessions.create("b1", State("b1"), bob)
    clock.advance(1)
    assert not await sessions.create("anon", State("anon"))  # refused: nothing it may end
    assert await sessions.load("a1") is not None and await sessions.load("b1") is not None
    clock.advance(1)
    assert await sessions.create("b2", State("b2"), bob)  # an authenticated one may
    assert await sessions.load("a1") is None
    assert await sessions.load("b1") is not None


async def test_an_owner_at_its_limit_ends_its_own_oldest_session(url: str, opened: Any) -> None:
    clock = Clock()
    sessions = _sessions(opened(url, clock))
    mallory, carol = SessionOwner("10.0.0.9"), SessionOwner("10.0.0.7")
    assert await sessions.create("c1", State("c1"), carol, 2)
    for n in range(5):
        clock.advance(1)
        assert await sessions.create(f"m{n}", State(f"m{n}"), mallory, 2)
    kept = [n for n in range(5) if await sessions.load(f"m{n}") is not None]
    assert kept == [3, 4]
    assert await sessions.load("c1") == State("c1")  # never someone else's


async def test_a_session_opened_on_one_replica_is_served_by_another(
        shared_url: str, opened: Any) -> None:
    clock = Clock()
    a = _sessions(opened(shared_url, clock), max_sessions=2)
    b = _sessions(opened(shared_url, clock), max_sessions=2)
    assert await a.create("x", State("x"))
    await b.save("x", State("x", ["from b"]))
    assert await a.load("x") == State("x", ["from b"])
    clock.advance(1)
    assert await b.create("y", State("y"))
    clock.advance(1)
    assert await a.create("z", State("z"))  # the cap counts both replicas' sessions
    assert await b.load("x") is None and await a.load("y") is not None
    assert await a.delete("y") and await b.load("y") is None


async def test_replicas_creating_at_once_never_pass_the_caps(
        shared_url: str, opened: Any) -> None:
    clock = Clock()
    stores = [_sessions(opened(shared_url, clock), max_sessions=5) for _ in range(2)]
    owner = SessionOwner("203.0.113.5")
    made: list[Awaitable[bool]] = [
        stores[i % 2].create(f"s{i}", State(f"s{i}"), owner, 3) for i in range(12)]
    assert all(await asyncio.gather(*made))
    assert await stores[0].owned(owner) == 3
    assert await stores[1].count() == 3


def test_store_urls_are_parsed_or_refused_with_the_forms() -> None:
    assert parse_store_url("memory").kind == "memory"
    assert parse_store_url("sqlite:///state.db").target == "state.db"
    assert parse_store_url("sqlite:////var/lib/m.db").target == "/var/lib/m.db"
    assert parse_store_url("sqlite:rel/x.db").target == "rel/x.db"
    assert parse_store_url("postgres://u@h/db").target == "postgresql://u@h/db"
    assert parse_store_url("rediss://h:6380/1").kind == "redis"
    for bad in ("mysql://h/db", "redis:h", "sqlite:", "", "sqlite://host/x.db"):
        with pytest.raises(StoreURLError) as caught:
            parse_store_url(bad)
        assert repr(bad) in str(caught.value)


def test_with_paths_a_value_of_no_url_form_is_an_sqlite_file_and_the_rest_reads_the_same() -> None:
    for path in ("tasks.db", "/var/lib/tasks.db", "C:\\data\\tasks.db", "memory.db"):
        assert parse_store_url(path, paths=True) == parse_store_url(f"sqlite:{path}")
    for url in ("memory", "memory:", "sqlite:///state.db", "postgres://u@h/db", "redis://h/0"):
        assert parse_store_url(url, paths=True) == parse_store_url(url)
    for bad in ("mysql://h/db", "redis:h", "sqlite:", "", "sqlite", "memory:x"):
        with pytest.raises(StoreURLError, match=r"or the path of an SQLite file|name the file"):
            parse_store_url(bad, paths=True)


@pytest.mark.parametrize("base", ["postgresql://u@h/db", "redis://h:6379/0"])
def test_a_shared_store_s_timeout_is_its_deadline_and_the_driver_never_sees_it(
        base: str) -> None:
    backend = open_backend(f"{base}?timeout=1.5")
    engine = backend.store._engine  # type: ignore[attr-defined]
    assert engine.deadline == 1.5 and engine.timeout == 1.5  # connecting, too, within it
    assert "timeout" not in engine.url
    assert backend.keys.deadline == 1.5
    assert open_backend(base).store._engine.deadline == 5.0  # type: ignore[attr-defined]
    for bad in ("0", "-1", "soon", "inf", "nan"):
        with pytest.raises(StoreURLError, match=r"timeout=.* must be a number of seconds"):
            open_backend(f"{base}?timeout={bad}")


def test_a_password_never_appears_in_the_backend_s_url() -> None:
    backend = open_backend("postgresql://app:s3cret@db.internal:5432/mcp")
    assert backend.url == "postgresql://app@db.internal:5432/mcp" and backend.shared
    assert "s3cret" not in open_backend("redis://:s3cret@cache:6379/0").url


def test_mcpkit_store_is_read_only_when_the_options_name_no_store(
        monkeypatch: pytest.MonkeyPatch) -> None:
    from mcpkit.server.options import ServerOptions
    from mcpkit.server.sealing import Sealer
    from mcpkit.store.memory import MemoryStore

    monkeypatch.setenv("MCPKIT_STORE", "redis://127.0.0.1:1/0")
    from_env = Sealer(ServerOptions())
    assert from_env.backend is not None and from_env.backend.kind == "redis"
    given = MemoryStore()
    assert Sealer(ServerOptions(store=given)).store is given
    assert Sealer(ServerOptions(store="memory")).backend.kind == "memory"  # type: ignore[union-attr]
    monkeypatch.setenv("MCPKIT_STORE", "mysql://db")
    with pytest.raises(StoreURLError, match="expected memory"):
        Sealer(ServerOptions())
