"""A task of the Tasks extension across three replicas sharing PostgreSQL or Redis: created on
A, followed on B, its question answered on C, cancelled on A, and seen cancelled from B. Each
request goes to the replica's own port; every server message is schema-checked (`Peer`)."""

from __future__ import annotations

import asyncio
from typing import Any

import httpx
from helpers.transports.http_peer import Peer
from nginx import Cluster

TASKS = "io.modelcontextprotocol/tasks"
CAPS = {"io.modelcontextprotocol/clientCapabilities": {
    "elicitation": {"form": {}}, "extensions": {TASKS: {}}}}
WAIT_S = 20.0


async def task_request(peer: Peer, method: str, task_id: str, **params: Any) -> dict[str, Any]:
    message = peer.request_message(method, {"taskId": task_id, **params}, **CAPS)
    reply = await peer.post(message, {"Mcp-Name": task_id})
    assert reply.status == 200, reply.body
    assert "result" in reply.message, reply.message
    result: dict[str, Any] = reply.message["result"]
    return result


async def until_status(peer: Peer, task_id: str, wanted: str) -> dict[str, Any]:
    async with asyncio.timeout(WAIT_S):
        while True:
            task = await task_request(peer, "tasks/get", task_id)
            if task["status"] == wanted:
                return task
            await asyncio.sleep(0.1)


async def test_a_task_created_on_a_followed_on_b_answered_on_c_cancelled_on_a(
        replicas: Cluster) -> None:
    a, b, c = replicas.replicas
    async with httpx.AsyncClient(timeout=WAIT_S) as http:
        on_a, on_b, on_c = Peer(a.url, http), Peer(b.url, http), Peer(c.url, http)
        created = await on_a.post(on_a.request_message("tools/call", {
            "name": "survey", "arguments": {"topic": "tides"}}, **CAPS))
        result = created.message["result"]
        assert result["resultType"] == "task", result
        task_id = result["taskId"]
        asked = await until_status(on_b, task_id, "input_required")
        question = asked["inputRequests"]["go"]
        assert question["method"] == "elicitation/create"
        assert "tides" in question["params"]["message"]
        answered = await task_request(on_c, "tasks/update", task_id, inputResponses={
            "go": {"action": "accept", "content": {"note": "from C"}}})
        assert answered["resultType"] == "complete"
        working = await until_status(on_b, task_id, "working")  # A took C's answer
        assert "inputRequests" not in working
        cancelled = await task_request(on_a, "tasks/cancel", task_id)
        assert cancelled["resultType"] == "complete"
        final = await until_status(on_b, task_id, "cancelled")
        assert final["taskId"] == task_id
        again = await task_request(on_c, "tasks/cancel", task_id)  # idempotent, anywhere
        assert again["resultType"] == "complete"
