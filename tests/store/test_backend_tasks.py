"""The Tasks extension's store contract (`mcpkit.store.tasks`) on every backend a store URL
opens: memory, SQLite, PostgreSQL and Redis. A created task is found at once by another
replica, a save keeps the answers and cancel request others wrote, the lease is renewed only
by its owner and claimed by one sweeper, and expired tasks are unknown and purged."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Callable
from typing import Any

import pytest
from backends import Clock

from mcpkit.store.tasks import TaskRecord


@pytest.fixture
async def opened(opened: Callable[..., Any]) -> AsyncIterator[Callable[..., Any]]:
    """Here `opened(url, clock)` is the task store of a backend (closed before it)."""
    stores: list[Any] = []

    def opener(url: str, clock: Clock) -> Any:
        backend = opened(url, clock)
        assert backend.tasks is not None
        stores.append(backend.tasks())
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
    await store.save(record)  # the runner's copy knows nothing of the cancel or the answers
    stored = await store.get("t2")
    assert stored is not None and stored.cancel_requested and stored.status == "input_required"
    await store.put_answers("t2", {"q2": {"action": "decline"}})
    assert await store.take_answers("t2") == {
        "q1": {"action": "accept", "content": {"tags": []}}, "q2": {"action": "decline"}}
    assert await store.take_answers("t2") == {}  # taken once
    await store.put_answers("gone", {"q": {}})  # a task that is not there: nothing kept
    assert await store.take_answers("gone") == {}
    await store.save(task("never-created", clock))
    assert await store.get("never-created") is None


async def test_leases_are_renewed_by_their_owner_and_claimed_once(url: str, opened: Any) -> None:
    clock = Clock()
    store = opened(url, clock)
    await store.create(task("t3", clock, lease_owner="p1", lease_until=clock.now + 10))
    await store.create(task("t4", clock, status="completed", lease_owner="p1",
                            lease_until=clock.now + 10))
    await store.renew(["t3"], "intruder", clock.now + 1_000)
    assert (await store.get("t3")).lease_until == clock.now + 10  # type: ignore[union-attr]
    await store.renew(["t3", "t4"], "p1", clock.now + 20)
    assert (await store.get("t3")).lease_until == clock.now + 20  # type: ignore[union-attr]
    assert await store.stale(clock.now + 15) == []
    stale = await store.stale(clock.now + 21)
    assert [r.task_id for r in stale] == ["t3"]  # a finished task is never stale
    claims = await asyncio.gather(*(store.claim("t3", "p1", f"sweeper{i}", clock.now + 60)
                                    for i in range(6)))
    assert sum(claims) == 1
    winner = f"sweeper{claims.index(True)}"
    assert (await store.get("t3")).lease_owner == winner  # type: ignore[union-attr]
    assert not await store.claim("t3", "p1", "late", clock.now + 60)


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
    assert await a.take_answers("t5") == {"k": {"action": "accept"}}
    assert (await a.get("t5")).cancel_requested  # type: ignore[union-attr]


async def test_a_server_on_a_shared_store_url_keeps_its_tasks_there(shared_url: str) -> None:
    from mcpkit.ext.tasks import enable_tasks
    from mcpkit.server.server import Server, ServerOptions

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
