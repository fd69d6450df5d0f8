"""The client's side of Tasks against mcpkit's own Tasks runtime (tests/helpers/client/task_server.py),
in memory with every message of both sides schema-checked, and over a real HTTP server, where
the `Mcp-Name` header of every tasks/* request must carry its task id (TASK-15)."""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Iterator
from typing import Any

import httpx
import pytest
from helpers import HELPERS
from helpers.client.task_server import make
from helpers.transports.http_peer import ServerProcess

from mcpkit.client import ClientOptions
from mcpkit.clients import Client
from mcpkit.errors import InternalError, TaskCancelledError
from mcpkit.transports.http_client.transport import HTTPConnector

TASKS = "io.modelcontextprotocol/tasks"
DECLARE = ClientOptions(extensions={TASKS: {}}, timeout=20)
POLL = ClientOptions(extensions={TASKS: {}}, timeout=20, task_notifications=False)
SERVER_FILE = str(HELPERS / "client" / "task_server.py")
MakeClient = Callable[..., Client]


def accept(asked: list[str], **content: Any) -> Callable[[Any], dict[str, Any]]:
    def elicit(request: Any) -> dict[str, Any]:
        asked.append(request.key)
        return {"action": "accept", "content": content.get(request.key, {"ok": True})}

    return elicit


async def test_a_slow_call_is_waited_on_through_notifications(memory_client: MakeClient) -> None:
    seen: list[dict[str, Any]] = []
    client = memory_client(make(), options=DECLARE)
    result = await client.call_tool("slow", {"seconds": 0.4}, on_status=seen.append)
    assert result["content"][0]["text"] == "slept 0.4"
    listens = client.tap.requests("subscriptions/listen")
    assert listens and listens[0]["params"]["notifications"]["taskIds"] == [seen[0]["taskId"]]
    assert seen[-1]["status"] == "completed"
    assert any("sleeping" in (s.get("statusMessage") or "") for s in seen)


async def test_a_slow_call_is_polled_when_notifications_are_off(memory_client: MakeClient) -> None:
    client = memory_client(make(), options=POLL)
    result = await client.call_tool("slow", {"seconds": 0.3})
    assert result["content"][0]["text"] == "slept 0.3"
    assert client.tap.requests("tasks/get") and not client.tap.requests("subscriptions/listen")


async def test_without_declaring_the_optional_tool_answers_at_once(
        memory_client: MakeClient) -> None:
    client = memory_client(make(), options=ClientOptions(timeout=20))
    result = await client.call_tool("slow", {"seconds": 0.2})
    assert result["content"][0]["text"] == "slept 0.2"
    assert not client.tap.requests("tasks/get")


@pytest.mark.parametrize("options", [DECLARE, POLL], ids=["notified", "polled"])
async def test_a_question_mid_task_is_answered_once(memory_client: MakeClient,
                                                    options: ClientOptions) -> None:
    asked: list[str] = []
    client = memory_client(make(), options=options, elicit=accept(asked))
    result = await client.call_tool("confirm")
    assert result["content"][0]["text"] == "confirmed=True"
    assert asked == ["confirm"]
    updates = client.tap.requests("tasks/update")
    assert [list(u["params"]["inputResponses"]) for u in updates] == [["confirm"]]


async def test_two_questions_at_once_are_both_answered(memory_client: MakeClient) -> None:
    asked: list[str] = []
    client = memory_client(make(), options=POLL,
                           elicit=accept(asked, a={"name": "x"}, b={"name": "y"}))
    assert (await client.call_tool("pair"))["content"][0]["text"] == "x+y"
    assert sorted(asked) == ["a", "b"]


async def test_a_task_that_breaks_raises_its_error(memory_client: MakeClient) -> None:
    client = memory_client(make(), options=DECLARE)
    with pytest.raises(InternalError):
        await client.call_tool("broken")


async def test_a_handle_cancels_and_another_client_reattaches(memory_client: MakeClient) -> None:
    srv = make()
    client = memory_client(srv, options=ClientOptions(timeout=20))
    handle = await client.start_tool("slow", {"seconds": 60})
    assert handle.task_id is not None and not handle.done
    assert (await handle.status())["status"] == "working"
    other = memory_client(srv, options=ClientOptions(timeout=20))
    await handle.cancel()
    with pytest.raises(TaskCancelledError):
        await other.task(handle.task_id).wait(timeout=20)


async def test_cancelling_a_call_cancels_its_task(memory_client: MakeClient) -> None:
    srv = make()
    client = memory_client(srv, options=DECLARE)
    seen: list[str] = []
    waiting = asyncio.ensure_future(
        client.call_tool("slow", {"seconds": 60}, on_status=lambda t: seen.append(t["taskId"])))
    for _ in range(500):
        await asyncio.sleep(0.01)
        if seen:
            break
    waiting.cancel()
    with pytest.raises(asyncio.CancelledError):
        await waiting
    assert client.tap.requests("tasks/cancel")
    other = memory_client(srv, options=ClientOptions(timeout=20))
    with pytest.raises(TaskCancelledError):
        await other.task(seen[0]).wait(timeout=20)


@pytest.fixture(scope="module")
def http_tasks() -> Iterator[str]:
    server = ServerProcess.start(SERVER_FILE)
    yield server.url
    server.stop()


async def test_over_http_tasks_requests_mirror_the_task_id(http_tasks: str) -> None:
    headers: list[tuple[str, str | None, str]] = []

    async def seen(request: httpx.Request) -> None:
        body = request.content.decode() if request.content else ""
        if '"tasks/' in body:
            headers.append((request.headers.get("mcp-method", ""),
                            request.headers.get("mcp-name"), body))

    options = ClientOptions(extensions={TASKS: {}}, timeout=20, task_notifications=False)
    hooks = {"event_hooks": {"request": [seen]}}
    async with Client(HTTPConnector(http_tasks, httpx_options=hooks),
                      options=options, elicit=accept([])) as client:
        assert (await client.call_tool("confirm"))["content"][0]["text"] == "confirmed=True"
        handle = await client.start_tool("slow", {"seconds": 60})
        await handle.cancel()
    methods = {m for m, _, _ in headers}
    assert {"tasks/get", "tasks/update", "tasks/cancel"} <= methods
    for method, name, body in headers:
        assert name is not None and f'"taskId":"{name}"' in body.replace(" ", ""), method
