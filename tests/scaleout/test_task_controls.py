"""A `tasks/update` and a `tasks/cancel` served by one replica reach the replica running the
task at once, through the shared broker (Redis pub/sub, PostgreSQL LISTEN/NOTIFY).

The replicas here renew their leases and read the store for their tasks only every 60 s
(TASK_HEARTBEAT_S), so within the tests' bound of 20 s nothing but the broker's control can
bring B's answer or B's cancel to A: without it, A would still be waiting for the answer
when the bound ran out. Each request goes to a replica's own port; every server message is
schema-checked (`Peer`).
"""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from typing import Any

import httpx
import pytest
from helpers.transports.http_peer import Peer
from nginx import Cluster, nginx_binary
from test_tasks_balanced import CAPS, WAIT_S, task_request, until_status

HEARTBEAT_S = 60.0
assert HEARTBEAT_S > 2 * WAIT_S, "the heartbeat must not come round within a test's bound"


@pytest.fixture(scope="module", params=["postgres", "redis"])
def slow_heartbeats(request: pytest.FixtureRequest) -> Iterator[Cluster]:
    """Two replicas sharing one engine, heartbeats every 60 s."""
    nginx_binary()
    url: str = request.getfixturevalue(f"{request.param}_url")
    cluster = Cluster(request.param, url, count=2,
                      extra_env={"TASK_HEARTBEAT_S": str(HEARTBEAT_S)})
    try:
        cluster.start()
        yield cluster
    finally:
        cluster.stop()


async def start_survey(on_a: Peer, topic: str) -> str:
    created = await on_a.post(on_a.request_message("tools/call", {
        "name": "survey", "arguments": {"topic": topic}}, **CAPS))
    result = created.message["result"]
    assert result["resultType"] == "task", result
    task_id: str = result["taskId"]
    return task_id


async def until_reported(peer: Peer, task_id: str) -> dict[str, Any]:
    """The task once it is `working` with a statusMessage: the answer taken, then the
    handler's progress report (two writes, so `working` alone may come a moment before)."""
    async with asyncio.timeout(WAIT_S):
        while True:
            task = await until_status(peer, task_id, "working")
            if "statusMessage" in task:
                return task
            await asyncio.sleep(0.05)


async def test_an_answer_and_a_cancel_served_by_b_reach_the_task_running_on_a(
        slow_heartbeats: Cluster) -> None:
    a, b = slow_heartbeats.replicas
    async with httpx.AsyncClient(timeout=WAIT_S) as http:
        on_a, on_b = Peer(a.url, http), Peer(b.url, http)
        task_id = await start_survey(on_a, "reefs")
        asked = await until_status(on_b, task_id, "input_required")
        assert "reefs" in asked["inputRequests"]["go"]["params"]["message"]
        await task_request(on_b, "tasks/update", task_id, inputResponses={
            "go": {"action": "accept", "content": {"note": "from B"}}})
        working = await until_reported(on_b, task_id)  # A's handler took B's answer
        assert working["statusMessage"] == "surveying (from B) (1/2)", working
        await task_request(on_b, "tasks/cancel", task_id)
        final = await until_status(on_b, task_id, "cancelled")  # A cancelled its handler
        assert final["statusMessage"] == "cancelled by tasks/cancel", final
        seen_on_a = await task_request(on_a, "tasks/get", task_id)
        assert seen_on_a["status"] == "cancelled"


async def test_a_cancel_served_by_b_ends_a_task_parked_for_input_on_a(
        slow_heartbeats: Cluster) -> None:
    a, b = slow_heartbeats.replicas
    async with httpx.AsyncClient(timeout=WAIT_S) as http:
        on_a, on_b = Peer(a.url, http), Peer(b.url, http)
        task_id = await start_survey(on_a, "dunes")
        await until_status(on_b, task_id, "input_required")
        await task_request(on_b, "tasks/cancel", task_id)
        final = await until_status(on_a, task_id, "cancelled")
        assert "inputRequests" not in final
        late = await task_request(on_b, "tasks/update", task_id, inputResponses={
            "go": {"action": "accept", "content": {"note": "too late"}}})
        assert late["resultType"] == "complete"  # acknowledged, ignored: nothing is outstanding
        assert (await task_request(on_a, "tasks/get", task_id))["status"] == "cancelled"
