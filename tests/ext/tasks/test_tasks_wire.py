"""The Tasks extension over a real stream connection, every message the server sends checked
against the schema (tests/helpers/wire.py: the core envelope, and ext/tasks/wire's shapes for the
rest)."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
from tasks_server import DECLARING, tasks_server

from mcpkit.ext.tasks import runtime_of
from mcpkit.ext.tasks.wire import check_create_task_result, check_get_task_result
from mcpkit.protocol.extensions import TASKS

Reply = dict[str, Any]


async def call(wire: Any, name: str, arguments: dict[str, Any] | None = None,
               declare: bool = True, **params: Any) -> Reply:
    body: dict[str, Any] = {"name": name, "arguments": arguments or {}, **params}
    if declare:
        body["_meta"] = DECLARING
    return await wire.request("tools/call", body)


async def task_method(wire: Any, method: str, task_id: str, **params: Any) -> Reply:
    return await wire.request(method, {"taskId": task_id, "_meta": DECLARING, **params})


async def until(wire: Any, task_id: str, *statuses: str) -> Reply:
    """The task's tasks/get result once it reaches one of `statuses` (a bounded wait)."""
    for _ in range(500):
        reply = await task_method(wire, "tasks/get", task_id)
        assert "result" in reply, reply
        got = reply["result"]
        if got["status"] in statuses:
            return got  # type: ignore[no-any-return]
        await asyncio.sleep(0.01)
    raise AssertionError(f"task {task_id} never reached {statuses}; last {got}")


async def test_a_slow_optional_call_becomes_a_task_that_an_immediate_get_finds(wire_factory: Any) -> None:
    wire = wire_factory(tasks_server())
    created = (await call(wire, "slow", {"seconds": 0.3}))["result"]
    check_create_task_result(created)
    assert created["status"] == "working" and len(created["taskId"]) >= 22
    assert isinstance(created["ttlMs"], int) and isinstance(created["pollIntervalMs"], int)
    assert not {"requestState", "task", "ttl", "pollInterval", "result"} & created.keys()
    now = (await task_method(wire, "tasks/get", created["taskId"]))["result"]
    assert now["taskId"] == created["taskId"] and now["resultType"] == "complete"
    assert now["statusMessage"] == "half way (1/2)"  # the handler's progress report
    done = await until(wire, created["taskId"], "completed")
    check_get_task_result(done)
    assert done["result"]["content"][0]["text"] == "slept 0.3"
    assert "_meta" not in done["result"] or "io.modelcontextprotocol/related-task" not in done[
        "result"]["_meta"]


async def test_a_fast_optional_call_answers_in_the_call(wire_factory: Any) -> None:
    wire = wire_factory(tasks_server(sync_budget_s=5))
    result = (await call(wire, "slow", {"seconds": 0}))["result"]
    assert result["resultType"] == "complete" and result["content"][0]["text"] == "slept 0.0"


async def test_without_the_extension_optional_is_plain_and_required_is_32021(wire_factory: Any) -> None:
    server = tasks_server()
    wire = wire_factory(server)
    plain = (await call(wire, "slow", {"seconds": 0.2}, declare=False))["result"]
    assert plain["resultType"] == "complete" and "taskId" not in plain
    # a progress token was not sent, so no progress either; nothing was stored
    assert runtime_of(server).jobs == {}  # type: ignore[union-attr]
    refused = (await call(wire, "job", declare=False))["error"]
    assert refused["code"] == -32021
    assert refused["data"] == {"requiredCapabilities": {"extensions": {TASKS: {}}}}


async def test_task_methods_need_the_extension_and_the_v1_ones_do_not_exist(wire_factory: Any) -> None:
    wire = wire_factory(tasks_server())
    for method in ("tasks/get", "tasks/update", "tasks/cancel"):
        reply = await wire.request(method, {"taskId": "x", "inputResponses": {}})
        assert reply["error"]["code"] == -32021, method
    for method in ("tasks/result", "tasks/list"):
        reply = await wire.request(method, {"taskId": "x", "_meta": DECLARING})
        assert reply["error"]["code"] == -32601, method
    unknown = await task_method(wire, "tasks/get", "no-such-task")
    assert unknown["error"]["code"] == -32602


async def test_tool_errors_complete_and_protocol_errors_fail(wire_factory: Any) -> None:
    wire = wire_factory(tasks_server(max_result_bytes=1000))
    ids = {kind: (await call(wire, "job", {"kind": kind}))["result"]["taskId"]
           for kind in ("ok", "tool-error", "protocol-error", "huge")}
    assert (await until(wire, ids["ok"], "completed"))["result"]["content"][0]["text"] == "job done"
    tool_error = await until(wire, ids["tool-error"], "completed", "failed")
    assert tool_error["status"] == "completed" and tool_error["result"]["isError"] is True
    broken = await until(wire, ids["protocol-error"], "completed", "failed")
    assert broken["status"] == "failed" and "result" not in broken
    assert broken["error"]["code"] == -32603 and broken["error"]["message"] == "the job broke"
    huge = await until(wire, ids["huge"], "completed", "failed")
    assert huge["status"] == "failed" and "over the limit of 1000" in huge["statusMessage"]
    assert huge["error"]["data"]["maxResultBytes"] == 1000


async def test_input_before_the_task_is_mrtr_then_the_retry_creates_it(wire_factory: Any) -> None:
    wire = wire_factory(tasks_server())
    first = (await call(wire, "named"))["result"]
    assert first["resultType"] == "input_required" and "taskId" not in first
    assert list(first["inputRequests"]) == ["user_name"]
    answer = {"user_name": {"action": "accept", "content": {"name": "Alice"}}}
    second = (await call(wire, "named", inputResponses=answer,
                         requestState=first["requestState"]))["result"]
    check_create_task_result(second)
    done = await until(wire, second["taskId"], "completed")
    assert done["result"]["content"][0]["text"] == "Hello Alice"


async def test_partial_answers_leave_only_the_unanswered_key(wire_factory: Any) -> None:
    wire = wire_factory(tasks_server())
    task_id = (await call(wire, "two"))["result"]["taskId"]
    parked = await until(wire, task_id, "input_required")
    for _ in range(100):  # both asks are made concurrently; wait until both are outstanding
        if len(parked["inputRequests"]) == 2:
            break
        await asyncio.sleep(0.01)
        parked = (await task_method(wire, "tasks/get", task_id))["result"]
    assert set(parked["inputRequests"]) == {"a", "b"}
    ack = await task_method(wire, "tasks/update", task_id, inputResponses={
        "a": {"action": "accept", "content": {"name": "one"}},
        "not-asked": {"action": "accept", "content": {}}})
    assert ack["result"]["resultType"] == "complete" and "taskId" not in ack["result"]
    left = (await task_method(wire, "tasks/get", task_id))["result"]
    assert left["status"] == "input_required" and set(left["inputRequests"]) == {"b"}
    # an answer to a key no longer outstanding is ignored, not taken twice
    await task_method(wire, "tasks/update", task_id, inputResponses={
        "a": {"action": "accept", "content": {"name": "again"}},
        "b": {"action": "accept", "content": {"name": "two"}}})
    done = await until(wire, task_id, "completed")
    assert done["result"]["content"][0]["text"] == "one+two"


async def test_cancel_settles_cancelled_and_is_idempotent(wire_factory: Any) -> None:
    wire = wire_factory(tasks_server())
    task_id = (await call(wire, "slow", {"seconds": 60}))["result"]["taskId"]
    assert (await task_method(wire, "tasks/cancel", task_id))["result"]["resultType"] == "complete"
    assert (await until(wire, task_id, "cancelled", "completed", "failed"))["status"] == "cancelled"
    again = await task_method(wire, "tasks/cancel", task_id)
    assert again["result"]["resultType"] == "complete"


async def test_another_principal_gets_what_an_unknown_id_gets(wire_factory: Any) -> None:
    from mcpkit.testing import ServerWire

    server = tasks_server()
    alice = ServerWire(server, principal="alice")
    bob = ServerWire(server, principal="bob")
    try:
        task_id = (await call(alice, "slow", {"seconds": 60}))["result"]["taskId"]
        for method, extra in (("tasks/get", {}), ("tasks/cancel", {}),
                              ("tasks/update", {"inputResponses": {}})):
            theirs = (await task_method(bob, method, task_id, **extra))["error"]
            unknown = (await task_method(bob, method, "x" * len(task_id), **extra))["error"]
            assert theirs["code"] == unknown["code"] == -32602
            assert theirs["message"].replace(task_id, "ID") == unknown["message"].replace(
                "x" * len(task_id), "ID")
        assert (await task_method(alice, "tasks/get", task_id))["result"]["status"] == "working"
    finally:
        alice.close()
        bob.close()


async def test_the_running_tasks_are_bounded(wire_factory: Any) -> None:
    wire = wire_factory(tasks_server(max_running=1))
    first = (await call(wire, "slow", {"seconds": 60}))["result"]
    refused = (await call(wire, "slow", {"seconds": 60}))["error"]
    assert refused["code"] == -32603 and "limit of 1 tasks" in refused["message"]
    await task_method(wire, "tasks/cancel", first["taskId"])
    await until(wire, first["taskId"], "cancelled")
    for _ in range(100):  # the slot frees once the ending is stored
        reply = await call(wire, "slow", {"seconds": 60})
        if "result" in reply:
            break
        await asyncio.sleep(0.01)
    assert reply["result"]["resultType"] == "task"


async def test_an_expired_task_is_unknown_and_purged(wire_factory: Any) -> None:
    from mcpkit.ext.tasks.upkeep import upkeep_once

    now = [1_000_000.0]
    server = tasks_server(ttl_ms=60_000)
    object.__setattr__(server.options, "clock", lambda: now[0])  # the runtime reads it too
    wire = wire_factory(server)
    task_id = (await call(wire, "job"))["result"]["taskId"]
    await until(wire, task_id, "completed")
    now[0] += 59.9
    assert (await task_method(wire, "tasks/get", task_id))["result"]["status"] == "completed"
    now[0] += 0.2
    assert (await task_method(wire, "tasks/get", task_id))["error"]["code"] == -32602
    await upkeep_once(runtime_of(server))  # type: ignore[arg-type]
    assert len(runtime_of(server).store) == 0  # type: ignore[union-attr, arg-type]


async def test_a_v1_task_param_neither_fails_nor_makes_a_task(wire_factory: Any) -> None:
    wire = wire_factory(tasks_server())
    reply = (await call(wire, "plain", {"name": "v1"}, task={"ttl": 60000, "pollInterval": 100}))
    assert reply["result"]["content"][0]["text"] == "Hello, v1!" and "taskId" not in reply["result"]


@pytest.mark.parametrize("resumable", [False, True])
async def test_a_task_whose_lease_lapsed_fails_or_runs_again(wire_factory: Any, resumable: bool) -> None:
    from mcpkit.ext.tasks.records import TaskRecord

    server = tasks_server()
    runtime = runtime_of(server)
    server.tools["job"].extension_options = {"task": "required", "resumable": resumable}
    wire = wire_factory(server)
    now = runtime.clock()  # type: ignore[union-attr]
    record = TaskRecord(task_id="t" * 32, owner=None, tool="job", arguments={}, status="working",
                        created_at=now, updated_at=now, ttl_ms=60_000, poll_interval_ms=1000,
                        resumable=resumable, lease_owner="a-process-gone", lease_until=now - 1)
    await runtime.store.create(record)  # type: ignore[union-attr]
    got = await until(wire, record.task_id, "completed", "failed")
    if resumable:
        assert got["status"] == "completed" and got["result"]["content"][0]["text"] == "job done"
    else:
        assert got["status"] == "failed" and "stopped before it finished" in got["statusMessage"]
        assert got["error"]["code"] == -32603
