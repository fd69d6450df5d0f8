"""A 2025-11-25 client over a real legacy HTTP session (uvicorn on 127.0.0.1) calling task
tools: it cannot declare the Tasks extension, so even a `task="required"` tool runs in its
request as a plain call, its progress on the request's stream and its question a real
`elicitation/create` on the session; a modern request without the extension still gets -32021.
Every server message is checked against the schema of its era (`Peer`)."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from typing import Any

import httpx
from helpers.transports.http_peer import Peer
from helpers.transports.listening import listening
from tasks_server import tasks_server

from mcpkit import Context
from mcpkit.ext.tasks import runtime_of
from mcpkit.protocol.extensions import TASKS

WAIT_S = 20.0


def legacy_tasks_server() -> Any:
    """The Tasks tests' server, plus a required tool that reports progress around a question."""
    server = tasks_server()

    @server.tool(task="required")
    async def approve_batch(batch: str, ctx: Context) -> str:
        """Prepares a batch, asks whether to ship it, then ships it or keeps it."""
        await ctx.report_progress(1, 2, f"prepared {batch}")
        answer = await ctx.elicit("ship", f"Ship batch {batch}?", {"ship": bool})
        shipped = answer.accepted and bool(answer.content["ship"])
        await ctx.report_progress(2, 2, "shipped" if shipped else "kept")
        return f"batch {batch} {'shipped' if shipped else 'kept'}"

    return server


async def next_message(events: AsyncIterator[dict[str, Any]]) -> dict[str, Any]:
    async with asyncio.timeout(WAIT_S):
        return await anext(events)


def text_of(message: dict[str, Any]) -> str:
    return str(message["result"]["content"][0]["text"])


async def test_a_required_task_tool_asks_and_answers_in_a_legacy_call() -> None:
    server = legacy_tasks_server()
    async with listening(server.asgi()) as served, httpx.AsyncClient(timeout=WAIT_S) as http:
        peer = Peer(served.url, http)
        await peer.initialize({"elicitation": {}})
        call = peer.request_message("tools/call", {
            "name": "approve_batch", "arguments": {"batch": "B7"},
            "_meta": {"progressToken": "p7"}}, with_meta=False)
        async with peer.stream(call) as events:
            first = await next_message(events)
            assert first["method"] == "notifications/progress", first
            assert first["params"] == {"progressToken": "p7", "progress": 1, "total": 2,
                                       "message": "prepared B7"}
            asked = await next_message(events)
            assert asked["method"] == "elicitation/create", asked
            assert asked["params"]["message"] == "Ship batch B7?"
            posted = await peer.post({"jsonrpc": "2.0", "id": asked["id"], "result": {
                "action": "accept", "content": {"ship": True}}}, mirror=False)
            assert posted.status == 202, posted.body
            second = await next_message(events)
            assert second["method"] == "notifications/progress", second
            assert second["params"]["progress"] == 2 and second["params"]["message"] == "shipped"
            done = await next_message(events)
        assert done["id"] == call["id"]
        assert text_of(done) == "batch B7 shipped"
        assert not {"taskId", "resultType", "task"} & done["result"].keys()
    runtime = runtime_of(server)
    assert runtime.jobs == {} and len(runtime.store) == 0  # no task was made or stored


async def test_legacy_calls_of_required_tools_are_plain_and_modern_ones_still_need_tasks(
        ) -> None:
    server = legacy_tasks_server()
    async with listening(server.asgi()) as served, httpx.AsyncClient(timeout=WAIT_S) as http:
        legacy = Peer(served.url, http)
        await legacy.initialize({})  # no elicitation capability
        plain = await legacy.post(legacy.request_message(
            "tools/call", {"name": "job", "arguments": {}}, with_meta=False))
        assert text_of(plain.message) == "job done"
        refused = await legacy.post(legacy.request_message(
            "tools/call", {"name": "approve_batch", "arguments": {"batch": "B8"}},
            with_meta=False))
        error = refused.message["error"]  # as for any legacy tool that asks: no capability
        assert error["code"] == -32021
        assert error["data"] == {"requiredCapabilities": {"elicitation": {"form": {}}}}, error
        modern = Peer(served.url, http)
        undeclared = await modern.post(modern.request_message(
            "tools/call", {"name": "job", "arguments": {}}))
        assert undeclared.message["error"]["code"] == -32021
        assert undeclared.message["error"]["data"] == {
            "requiredCapabilities": {"extensions": {TASKS: {}}}}
