"""The Tasks extension's store contract (`mcpkit.ext.tasks.records`) on every backend a store URL
opens: memory, SQLite, PostgreSQL and Redis. A created task is found at once by another
replica; a save keeps the answers and cancel request others wrote and writes only while its
caller holds the lease; the lease is renewed only by its owner, claimed by one sweeper and
only once it lapsed, and handed back at once by a release; a terminal status is final; each
key keeps its first answer; a principal's share is counted and never overrun, even by
replicas creating at once; and expired tasks are unknown and purged."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Callable
from typing import Any

import pytest
from backends import Clock

from mcpkit.ext.tasks.records import TaskRecord
from mcpkit.ext.tasks.stores import on_backend


@pytest.fixture
async def opened(opened: Callable[..., Any]) -> AsyncIterator[Callable[..., Any]]:
    """Here `opened(url, clock)` is the task store of a backend (closed before it)."""
    stores: list[Any] = []

    def opener(url: str, clock: Clock) -> Any:
        backend = opened(url, clock)
        stores.append(on_backend(backend))
        return stores[-1]

    yield opener
    for store in stores:
        await store.close()


def task(task_id: str, clock: Clock, **fields: Any) -> TaskRecord:
    values: dict[str, Any] = {
        "owner": "alice", "tool": "slow", "arguments": {"n": [1, 2]}, "status": "working",
        "created_at": clock.now, "updated_at": clock.now, "ttl_ms": 60_000,
        "poll_interval_ms": 500, **fields}
    return TaskRecord(task_id, **values)


async def test_a_task_is_created_once_and_read_back_whole(url: str, opened: Any) -> None:
    clock = Clock()
    store = opened(url, clock)
    record = task("t1", clock, lease_owner="p1", lease_until=clock.now + 30,
                  capabilities={"elicitation": {}}, asked=["q1"])
    await store.create(record)
    with pytest.raises(ValueError, match="already exists"):
        await store.create(task("t1", clock))
    assert await store.get("t1") == record
    assert await store.get("unknown") is None


async def test_save_keeps_what_others_wrote(url: str, opened: Any) -> None:
    clock = Clock()
    store = opened(url, clock)
    record = task("t2", clock, lease_owner="p1", lease_until=clock.now + 30)
    await store.create(record)
    await store.put_answers("t2", {"q1": {"action": "accept", "content": {"tags": []}}})
    await store.request_cancel("t2")
    record.status, record.status_message = "input_required", "waiting"
    assert await store.save(record, "p1")  # the runner's copy knows nothing of the others'
    stored = await store.get("t2")
    assert stored is not None and stored.cancel_requested and stored.status == "input_required"
    assert stored.lease_owner == "p1" and stored.lease_until == clock.now + 30
    await store.put_answers("t2", {"q2": {"action": "decline"},
                                   "q1": {"action": "accept", "content": {"tags": ["late"]}}})
    stored = await store.get("t2")
    assert stored is not None and stored.answers == {  # the first answer to a key is kept
        "q1": {"action": "accept", "content": {"tags": []}}, "q2": {"action": "decline"}}
    assert (await store.get("t2")).answers == stored.answers  # type: ignore[union-attr]
    await store.put_answers("gone", {"q": {}})  # a task that is not there: nothing kept
    assert await store.get("gone") is None
    assert not await store.save(task("never-created", clock), "p1")
    assert await store.get("never-created") is None


async def test_a_save_writes_only_while_its_caller_holds_the_lease(url: str, opened: Any) -> None:
    clock = Clock()
    store = opened(url, clock)
    record = task("cas", clock, lease_owner="p1", lease_until=clock.now + 10)
    await store.create(record)
    await store.renew(["cas"], "p1", clock.now + 20)
    record.status_message = "step 1"  # the runner's copy still says lease_until + 10
    assert await store.save(record, "p1")
    stored = await store.get("cas")
    assert stored is not None and stored.lease_until == clock.now + 20  # a save never lowers it
    record.status_message = "from a process that never held it"
    assert not await store.save(record, "p2")
    assert (await store.get("cas")).status_message == "step 1"  # type: ignore[union-attr]
    clock.advance(21)
    claimed = await store.claim("cas", "p2", clock.now, clock.now + 10)
    assert claimed is not None and claimed.lease_owner == "p2"
    record.status_message = "the old runner, after losing it"
    assert not await store.save(record, "p1")
    assert await store.renew(["cas"], "p1", clock.now + 100) == set()
    assert await store.renew(["cas"], "p2", clock.now + 100) == {"cas"}
    assert (await store.get("cas")).status_message == "step 1"  # type: ignore[union-attr]


async def test_a_terminal_status_is_final(url: str, opened: Any) -> None:
    clock = Clock()
    store = opened(url, clock)
    record = task("fin", clock, lease_owner="p1", lease_until=clock.now + 10,
                  arguments={"big": "x" * 100})
    await store.create(record)
    await store.put_answers("fin", {"k": {"action": "accept", "content": {"a": 1}}})
    record.status, record.result = "completed", {"content": [], "isError": False}
    assert await store.save(record, "p1")
    done = await store.get("fin")
    assert done is not None and done.status == "completed" and done.lease_owner is None
    assert done.arguments is None and done.answers == {}  # nothing will run it again
    for status in ("working", "input_required", "failed", "cancelled"):
        record.status, record.result = status, None
        assert not await store.save(record, "p1")
        assert not await store.release(record, "p1")
    assert await store.renew(["fin"], "p1", clock.now + 10) == set()
    assert await store.claim("fin", "p9", clock.now + 1000, clock.now + 2000) is None
    await store.put_answers("fin", {"k2": {"action": "decline"}})
    again = await store.get("fin")
    assert again is not None and again.status == "completed" and again.answers == {}
    assert await store.stale(clock.now + 1000) == []


async def test_leases_are_renewed_by_their_owner_and_claimed_once_lapsed(
        url: str, opened: Any) -> None:
    clock = Clock()
    store = opened(url, clock)
    await store.create(task("t3", clock, lease_owner="p1", lease_until=clock.now + 10))
    await store.create(task("t4", clock, status="completed", lease_owner="p1",
                            lease_until=clock.now + 10))
    assert await store.renew(["t3"], "intruder", clock.now + 1_000) == set()
    assert (await store.get("t3")).lease_until == clock.now + 10  # type: ignore[union-attr]
    assert await store.renew(["t3", "t4"], "p1", clock.now + 20) == {"t3"}
    assert (await store.get("t3")).lease_until == clock.now + 20  # type: ignore[union-attr]
    assert await store.stale(clock.now + 15) == []
    assert await store.claim("t3", "early", clock.now + 15, clock.now + 60) is None  # live
    stale = await store.stale(clock.now + 21)
    assert [r.task_id for r in stale] == ["t3"]  # a finished task is never stale
    claims = await asyncio.gather(*(store.claim("t3", f"sweeper{i}", clock.now + 21,
                                                clock.now + 60) for i in range(6)))
    winners = [i for i, c in enumerate(claims) if c is not None]
    assert len(winners) == 1
    assert claims[winners[0]].lease_owner == f"sweeper{winners[0]}"  # type: ignore[union-attr]
    assert (await store.get("t3")).lease_owner == f"sweeper{winners[0]}"  # type: ignore[union-attr]
    assert await store.claim("t3", "late", clock.now + 21, clock.now + 60) is None


async def test_a_released_task_is_claimed_at_once_with_its_answers(url: str, opened: Any) -> None:
    clock = Clock()
    store = opened(url, clock)
    record = task("rel", clock, lease_owner="p1", lease_until=clock.now + 30, resumable=True)
    await store.create(record)
    await store.put_answers("rel", {"k": {"action": "accept", "content": {"n": 1}}})
    record.handoffs, record.handed_back = 1, True
    assert not await store.release(record, "p2")
    assert await store.release(record, "p1")
    assert [r.task_id for r in await store.stale(clock.now)] == ["rel"]
    claimed = await store.claim("rel", "p2", clock.now, clock.now + 30)
    assert claimed is not None and claimed.handed_back and claimed.handoffs == 1
    assert claimed.answers == {"k": {"action": "accept", "content": {"n": 1}}}
    assert claimed.arguments == {"n": [1, 2]}  # a resumable task keeps them to run again


async def test_shares_are_counted_and_a_full_one_creates_nothing(url: str, opened: Any) -> None:
    from mcpkit.ext.tasks.records import TaskQuota

    clock = Clock()
    store = opened(url, clock)
    quota = TaskQuota(active=2, stored=3, bytes=1_000_000)
    assert await store.create(task("a1", clock, ttl_ms=5_000), quota) is None
    assert await store.create(task("a2", clock), quota) is None
    full = await store.create(task("a3", clock), quota)
    assert full is not None and (full.active, full.stored) == (2, 2)
    assert await store.get("a3") is None
    assert await store.create(task("b1", clock, owner="bob"), quota) is None  # bob's own share
    assert await store.create(task("a4", clock, status="completed"),
                              TaskQuota(active=3, stored=3, bytes=1_000_000)) is None
    used = await store.usage("alice", clock.now)
    assert (used.active, used.stored) == (2, 3) and used.next_expiry == clock.now + 5
    assert used.bytes > 0
    assert (await store.usage(None, clock.now)).stored == 0
    assert await store.create(task("anon", clock, owner=None), quota) is None
    assert (await store.usage(None, clock.now)).stored == 1
    clock.advance(5)  # a1 expired: it counts no more, even before a purge
    assert (await store.usage("alice", clock.now)).stored == 2
    small = TaskQuota(active=10, stored=10, bytes=used.bytes)
    assert await store.create(task("a5", clock), small) is not None  # over the bytes


async def test_two_replicas_never_both_take_the_last_place_of_a_share(
        url: str, opened: Any) -> None:
    from mcpkit.ext.tasks.records import TaskQuota

    clock = Clock()
    a, b = opened(url, clock), opened(url, clock)
    if url == "memory":
        b = a  # one process's memory: the two share the dict
    quota = TaskQuota(active=3, stored=10, bytes=10_000_000)
    results = await asyncio.gather(*((a if i % 2 else b).create(task(f"r{i}", clock), quota)
                                     for i in range(8)))
    assert sum(r is None for r in results) == 3
    assert (await a.usage("alice", clock.now)).active == 3


async def test_keys_and_answers_of_any_characters_are_stored(url: str, opened: Any) -> None:
    clock = Clock()
    store = opened(url, clock)
    from mcpkit.protocol.principals import principal_text

    owner = principal_text("https://issuer.example", "subject\x00with-nul")
    record = task("nul", clock, owner=owner, lease_owner="p1", lease_until=clock.now + 30)
    await store.create(record)
    await store.put_answers("nul", {"k\x00": {"action": "accept", "content": {"t": "a\x00b"}}})
    stored = await store.get("nul")
    assert stored is not None and stored.owner == owner
    assert stored.answers == {"k\x00": {"action": "accept", "content": {"t": "a\x00b"}}}
    assert (await store.usage(owner, clock.now)).stored == 1


async def test_an_expired_task_is_unknown_and_purged(url: str, opened: Any) -> None:
    clock = Clock()
    store = opened(url, clock)
    await store.create(task("short", clock, ttl_ms=5_000))
    await store.create(task("forever", clock, ttl_ms=None))
    clock.advance(5)
    assert await store.get("short") is None
    assert await store.get("forever") is not None
    assert await store.purge(clock.now) == 1
    assert await store.purge(clock.now) == 0
    assert await store.get("forever") is not None


async def test_a_task_made_on_one_replica_is_steered_from_another(
        shared_url: str, opened: Any) -> None:
    clock = Clock()
    a, b = opened(shared_url, clock), opened(shared_url, clock)
    record = task("t5", clock, lease_owner="replica-a", lease_until=clock.now + 30)
    await a.create(record)
    assert await b.get("t5") == record
    await b.put_answers("t5", {"k": {"action": "accept"}})
    await b.request_cancel("t5")
    seen = await a.get("t5")
    assert seen is not None and seen.cancel_requested
    assert seen.answers == {"k": {"action": "accept"}}


async def test_a_server_on_a_shared_store_url_keeps_its_tasks_there(shared_url: str) -> None:
    from mcpkit.ext.tasks import enable_tasks
    from mcpkit.server.options import ServerOptions
    from mcpkit.server.server import Server

    servers = [Server("tasks", options=ServerOptions(store=shared_url)) for _ in range(2)]
    stores = [enable_tasks(server).store for server in servers]
    try:
        clock = Clock()
        await stores[0].create(task("shared-1", clock, ttl_ms=None))
        found = await stores[1].get("shared-1")  # the other replica's runtime sees it
        assert found is not None and found.tool == "slow"
    finally:
        for server in servers:
            assert server.sealer.backend is not None
            await server.sealer.backend.close()
