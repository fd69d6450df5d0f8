"""A `tasks/update` or `tasks/cancel` served by a process whose broker is down: the request
still succeeds (the store has the write), a warning says the control was not announced, and
the process running the task takes the change up at its heartbeat. Two servers share one task
store over real stream connections, every server message schema-checked."""

from __future__ import annotations

import logging
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import pytest
from tasks_server import tasks_server
from test_tasks_wire import call, task_method, until

from mcpkit.errors import StoreUnavailableError
from mcpkit.ext.tasks import runtime_of
from mcpkit.ext.tasks.engines.memory import MemoryTaskStore
from mcpkit.ext.tasks.upkeep import upkeep_once
from mcpkit.server.subscriptions import LocalBroker


class DownBroker(LocalBroker):
    """A shared broker whose bus cannot be reached: every control fails, as a real one does."""

    def __init__(self) -> None:
        super().__init__()
        self.attempts: list[tuple[str, dict[str, Any]]] = []

    async def publish_control(self, task_id: str, message: dict[str, Any]) -> None:
        self.attempts.append((task_id, message))
        raise StoreUnavailableError("Service unavailable: the Redis broker cannot be reached",
                                    store="Redis")

    @asynccontextmanager
    async def controls(self) -> AsyncIterator[AsyncIterator[tuple[str, dict[str, Any]]]]:
        raise StoreUnavailableError("Service unavailable: the Redis broker cannot be reached",
                                    store="Redis")
        yield  # pragma: no cover -- never reached


@pytest.fixture
def pair(wire_factory: Any) -> tuple[Any, Any, DownBroker]:
    """(runner, steerer, the steerer's broker): two servers on one store; the runner is the
    process running the tasks, the steerer serves the updates and cancels."""
    store = MemoryTaskStore()
    runner, steerer = tasks_server(store=store), tasks_server(store=store)
    broker = DownBroker()
    steerer.broker = broker
    return wire_factory(runner), wire_factory(steerer), broker


async def test_an_update_stored_while_the_broker_is_down_arrives_at_the_heartbeat(
        pair: tuple[Any, Any, DownBroker], caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.WARNING, "mcpkit.tasks")
    runner, steerer, broker = pair
    task_id = (await call(runner, "confirm"))["result"]["taskId"]
    await until(steerer, task_id, "input_required")
    reply = await task_method(steerer, "tasks/update", task_id, inputResponses={
        "confirm": {"action": "accept", "content": {"confirm": True}}})
    assert reply["result"]["resultType"] == "complete", reply  # the write stands
    assert broker.attempts == [(task_id, {"action": "update"})]
    assert any(task_id in r.getMessage() and "next heartbeat" in r.getMessage()
               for r in caplog.records)
    stored = await runtime_of(runner.server).store.get(task_id)
    assert stored is not None and stored.status == "input_required"  # the runner has not run
    # A client sees the stored answer taken at once, though nothing reached the runner yet.
    assert (await task_method(runner, "tasks/get", task_id))["result"]["status"] == "working"
    await upkeep_once(runtime_of(runner.server))
    done = await until(steerer, task_id, "completed")
    assert done["result"]["content"][0]["text"] == "confirmed={'confirm': True}"


async def test_a_cancel_stored_while_the_broker_is_down_arrives_at_the_heartbeat(
        pair: tuple[Any, Any, DownBroker]) -> None:
    runner, steerer, broker = pair
    task_id = (await call(runner, "slow", {"seconds": 60}))["result"]["taskId"]
    reply = await task_method(steerer, "tasks/cancel", task_id)
    assert reply["result"]["resultType"] == "complete", reply
    assert broker.attempts == [(task_id, {"action": "cancel"})]
    assert (await task_method(runner, "tasks/get", task_id))["result"]["status"] == "working"
    await upkeep_once(runtime_of(runner.server))
    assert (await until(steerer, task_id, "cancelled", "completed"))["status"] == "cancelled"
