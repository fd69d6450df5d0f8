"""A `task=` tool on the core `mcpkit.server.Server`: refused at registration until the Tasks
extension is enabled on it, and then run as a task like on `mcpkit.Server` (every message the
server sends checked against the schema by the wire fixture)."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
from tasks_server import DECLARING

from mcpkit.ext.tasks import TaskOptions, enable_tasks, runtime_of
from mcpkit.ext.tasks.wire import check_create_task_result
from mcpkit.server.server import Server as CoreServer


def test_a_task_tool_on_the_core_server_without_the_extension_is_refused_in_one_line() -> None:
    server = CoreServer("core")
    with pytest.raises(ValueError) as refused:

        @server.tool(task="optional")
        async def slow() -> str:
            return "done"

    message = str(refused.value)
    assert "\n" not in message
    assert message == (
        "tool 'slow': task='optional' needs the Tasks extension on this server; call "
        "mcpkit.ext.tasks.enable_tasks(server) before registering it, or use mcpkit.Server, "
        "which does")
    assert "slow" not in server.tools  # nothing half registered
    assert runtime_of(server) is None and server.tool_interceptor is None


def test_a_core_server_including_a_task_tool_refuses_it_too() -> None:
    child = CoreServer("child")
    enable_tasks(child, TaskOptions(store="memory:"))

    @child.tool(task="required")
    async def job() -> str:
        return "done"

    parent = CoreServer("parent")
    with pytest.raises(ValueError, match="tool 'job': task='required' needs the Tasks"):
        parent.include(child)


async def test_a_task_tool_on_the_core_server_with_the_extension_becomes_a_task(
        wire_factory: Any) -> None:
    server = CoreServer("core")
    runtime = enable_tasks(server, TaskOptions(store="memory:", sync_budget_s=0.05))
    assert enable_tasks(server) is runtime and runtime_of(server) is runtime
    release = asyncio.Event()

    @server.tool(task="optional")
    async def slow() -> str:
        await release.wait()
        return "done"

    wire = wire_factory(server)
    reply = await wire.request("tools/call", {"name": "slow", "arguments": {},
                                              "_meta": DECLARING})
    created = reply["result"]
    check_create_task_result(created)
    assert list(runtime.jobs) == [created["taskId"]]
    release.set()
    for _ in range(500):  # a bounded wait for the task to finish
        got = (await wire.request("tasks/get", {"taskId": created["taskId"],
                                                "_meta": DECLARING}))["result"]
        if got["status"] == "completed":
            break
        await asyncio.sleep(0.01)
    assert got["status"] == "completed" and got["result"]["content"][0]["text"] == "done"


def test_the_extension_checks_the_task_options_value_when_the_tool_is_registered() -> None:
    server = CoreServer("core")
    enable_tasks(server, TaskOptions(store="memory:"))
    with pytest.raises(ValueError, match="tool 'odd': task must be \"optional\" or \"required\" "
                                         r"\(or left out: never a task\), not 'sometimes'"):
        server.add_tool(lambda: "x", "odd", task="sometimes")  # type: ignore[call-arg]
    assert "odd" not in server.tools
