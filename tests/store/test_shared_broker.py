"""The shared broker between two "replicas" (two brokers, each with its own connections) on a
real Redis and a real PostgreSQL: changes, legacy answers and task controls cross between
them, each replica hears its own once, a long payload crosses PostgreSQL's 8000-byte notice
limit intact, and a restart of the engine fails callers fast, is logged, and heals by itself.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import AsyncIterator
from typing import Any

import pytest

from mcpkit.errors import StoreUnavailableError
from mcpkit.server.broker import SharedBroker
from mcpkit.server.subscriptions import Change
from mcpkit.store.bus import bus_for

ENGINES = ["redis", "postgres"]
WAIT_S = 10.0


@pytest.fixture(params=ENGINES)
def engine_url(request: pytest.FixtureRequest) -> str:
    url: str = request.getfixturevalue(f"{request.param}_url")
    return url


async def _pair(url: str, namespace: str) -> tuple[SharedBroker, SharedBroker]:
    a = SharedBroker.from_url(url, namespace)
    b = SharedBroker.from_url(url, namespace)
    assert a is not None and b is not None
    await a.ready()
    await b.ready()
    return a, b


@pytest.fixture
async def pair(engine_url: str, request: pytest.FixtureRequest
               ) -> AsyncIterator[tuple[SharedBroker, SharedBroker]]:
    a, b = await _pair(engine_url, f"t{abs(hash(request.node.nodeid)) % 10**8}")
    try:
        yield a, b
    finally:
        await a.aclose()
        await b.aclose()


async def _next(changes: Any) -> Change:
    async with asyncio.timeout(WAIT_S):
        change: Change = await anext(changes)
        return change


async def test_a_change_published_on_one_replica_reaches_the_other_once(
        pair: tuple[SharedBroker, SharedBroker]) -> None:
    a, b = pair
    async with a.subscribe() as heard_a, b.subscribe() as heard_b:
        b.publish(Change("resource", "calendar://week"))
        b.publish(Change("tools"))
        assert await _next(heard_a) == Change("resource", "calendar://week")
        assert await _next(heard_a) == Change("tools")
        # b hears its own at once, and not a second time when the bus brings it back
        assert await _next(heard_b) == Change("resource", "calendar://week")
        assert await _next(heard_b) == Change("tools")
        a.publish(Change("prompts"))
        assert await _next(heard_b) == Change("prompts")
        assert await _next(heard_a) == Change("prompts")


async def test_an_answer_reaches_only_the_other_replicas(
        pair: tuple[SharedBroker, SharedBroker]) -> None:
    a, b = pair
    got_a: list[tuple[str, dict[str, Any]]] = []
    got_b: list[tuple[str, dict[str, Any]]] = []
    arrived = asyncio.Event()
    a.on_answer(lambda s, r: (got_a.append((s, r)), arrived.set()))
    b.on_answer(lambda s, r: got_b.append((s, r)))
    response = {"jsonrpc": "2.0", "id": "mcpkit-x-1", "result": {"action": "accept"}}
    await b.publish_answer("session-1", response)
    async with asyncio.timeout(WAIT_S):
        await arrived.wait()
    assert got_a == [("session-1", response)]
    assert got_b == []


async def test_an_answer_longer_than_a_notice_arrives_whole(
        pair: tuple[SharedBroker, SharedBroker]) -> None:
    a, b = pair
    arrived: asyncio.Future[dict[str, Any]] = asyncio.get_running_loop().create_future()
    a.on_answer(lambda s, r: arrived.done() or arrived.set_result(r))
    text = "ü" * 20_000  # 40,000 bytes of UTF-8: five times PostgreSQL's notice limit
    response = {"jsonrpc": "2.0", "id": 7, "result": {"content": {"note": text}}}
    await b.publish_answer("s", response)
    async with asyncio.timeout(WAIT_S):
        assert await arrived == response


async def test_a_task_control_reaches_every_replica_once(
        pair: tuple[SharedBroker, SharedBroker]) -> None:
    a, b = pair
    async with a.controls() as at_a, b.controls() as at_b:
        await b.publish_control("task-9", {"action": "cancel"})
        async with asyncio.timeout(WAIT_S):
            assert await anext(at_a) == ("task-9", {"action": "cancel"})
            assert await anext(at_b) == ("task-9", {"action": "cancel"})
        await a.publish_control("task-9", {"action": "update", "n": 2})
        async with asyncio.timeout(WAIT_S):
            assert await anext(at_b) == ("task-9", {"action": "update", "n": 2})
            assert await anext(at_a) == ("task-9", {"action": "update", "n": 2})


@pytest.mark.parametrize("kind", ENGINES)
async def test_an_engine_restart_fails_fast_is_logged_and_heals(
        kind: str, restartable: Any, caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.WARNING, "mcpkit.store")
    service = restartable.service(kind)
    a, b = await _pair(service.url, f"restart{kind}")
    try:
        async with a.subscribe() as heard_a:
            service.stop()
            # Each publish fails with the store's own error (its connect timeout), never hangs:
            # the bound only turns a hang into a failure, far past that timeout.
            async with asyncio.timeout(WAIT_S * 3):
                with pytest.raises(StoreUnavailableError) as caught:
                    await b.publish_answer("s", {"jsonrpc": "2.0", "id": 1, "result": {}})
                assert "127.0.0.1" not in str(caught.value)  # no address in what a client sees
                with pytest.raises(StoreUnavailableError):
                    await b.publish_control("t", {"action": "cancel"})
            async with asyncio.timeout(WAIT_S * 2):  # the listener notices the loss
                while a.listening:
                    await asyncio.sleep(0.05)
            with pytest.raises(StoreUnavailableError):
                await a.ready()
            # while it is down, b's own streams still hear b's changes
            async with b.subscribe() as heard_b:
                b.publish(Change("tools"))
                assert await _next(heard_b) == Change("tools")
            service.start()
            async with asyncio.timeout(WAIT_S * 2):  # both listen again, no restart of theirs
                while not (a.listening and b.listening):
                    await asyncio.sleep(0.05)
            b.publish(Change("resources"))
            assert await _next(heard_a) == Change("resources")
    finally:
        await a.aclose()
        await b.aclose()
    lines = [r.getMessage() for r in caplog.records if r.name == "mcpkit.store"]
    assert any("unreachable" in line for line in lines), lines
    assert any("reachable again" in line for line in lines), lines
    # one line when it went down per listener, not one per retry
    assert sum("unreachable" in line for line in lines) <= 2, lines


def test_memory_and_sqlite_need_no_bus() -> None:
    assert bus_for("sqlite:///tmp/x.db") is None
    assert bus_for("memory") is None
    assert SharedBroker.from_url("memory") is None
