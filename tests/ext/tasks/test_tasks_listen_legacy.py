"""`notifications/tasks` on a `subscriptions/listen` stream, and task tools for a 2025-11-25
client, over a real stream connection with every message schema-checked."""

from __future__ import annotations

from typing import Any

from tasks_server import DECLARING, tasks_server

from mcpkit.ext.tasks.wire import check_detailed_task

LISTEN_ID = 900


def listen(wire: Any, task_ids: list[str], declare: bool = True) -> None:
    meta = {**wire.meta(), **(DECLARING if declare else {})}
    wire.methods[LISTEN_ID] = "subscriptions/listen"
    wire.send({"jsonrpc": "2.0", "id": LISTEN_ID, "method": "subscriptions/listen",
               "params": {"notifications": {"taskIds": task_ids}, "_meta": meta}})


async def test_a_listen_stream_carries_each_change_as_a_full_detailed_task(wire_factory: Any) -> None:
    wire = wire_factory(tasks_server())
    created = await wire.request("tools/call", {"name": "confirm", "arguments": {},
                                                "_meta": DECLARING})
    task_id = created["result"]["taskId"]
    listen(wire, [task_id, "not-a-task"])
    ack = await wire.next()
    assert ack["method"] == "notifications/subscriptions/acknowledged"
    assert ack["params"]["notifications"] == {"taskIds": [task_id]}  # the unknown id left out
    seen: list[dict[str, Any]] = []
    for _ in range(20):
        note = await wire.next()
        assert note["method"] == "notifications/tasks", note  # never progress or log messages
        check_detailed_task(note["params"])
        seen.append(note["params"])
        if note["params"]["status"] == "input_required":
            break
    assert seen[-1]["inputRequests"]["confirm"]["method"] == "elicitation/create"
    wire.send({"jsonrpc": "2.0", "id": 901, "method": "tasks/update", "params": {
        "taskId": task_id, "_meta": {**wire.meta(), **DECLARING},
        "inputResponses": {"confirm": {"action": "accept", "content": {"confirm": True}}}}})
    wire.methods[901] = "tasks/update"
    final = None
    for _ in range(20):
        note = await wire.next()
        if note.get("id") == 901:
            continue
        assert note["method"] == "notifications/tasks"
        if note["params"]["status"] == "completed":
            final = note["params"]
            break
    assert final is not None and final["result"]["content"][0]["text"].startswith("confirmed=")


async def test_task_ids_on_a_listen_need_the_extension(wire_factory: Any) -> None:
    wire = wire_factory(tasks_server())
    listen(wire, ["some-task"], declare=False)
    reply = await wire.next()
    assert reply["id"] == LISTEN_ID and reply["error"]["code"] == -32021


async def test_a_legacy_client_gets_the_plain_result_with_progress(wire_factory: Any) -> None:
    wire = wire_factory(tasks_server())
    opened = await wire.request("initialize", {
        "protocolVersion": "2025-11-25", "capabilities": {},
        "clientInfo": {"name": "legacy-client", "version": "1.0"}}, with_meta=False)
    assert opened["result"]["protocolVersion"] == "2025-11-25"
    wire.send({"jsonrpc": "2.0", "method": "notifications/initialized"})
    reply = await wire.request("tools/call", {"name": "slow", "arguments": {"seconds": 0.3},
                                              "_meta": {"progressToken": "p1"}}, with_meta=False)
    assert reply["result"]["content"][0]["text"] == "slept 0.3"
    assert "taskId" not in reply["result"] and "resultType" not in reply["result"]
    progress = [n["params"] for n in wire.notifications if n["method"] == "notifications/progress"]
    assert [p["progress"] for p in progress] == [1, 2] and progress[0]["progressToken"] == "p1"
