"""examples/long_job: the task goes working -> input_required (the publish question) ->
completed, its progress showing as the statusMessage; served as the example file is."""

from __future__ import annotations

import asyncio
import dataclasses
import importlib.util
from pathlib import Path
from typing import Any

from tasks_server import DECLARING

from mcpkit.ext.tasks import TaskOptions

EXAMPLE = Path(__file__).resolve().parents[3] / "examples" / "long_job" / "server.py"


def load_example() -> Any:
    spec = importlib.util.spec_from_file_location("long_job_example", EXAMPLE)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module.server


async def get(wire: Any, task_id: str) -> dict[str, Any]:
    reply = await wire.request("tasks/get", {"taskId": task_id, "_meta": DECLARING})
    return reply["result"]  # type: ignore[no-any-return]


async def test_the_report_task_asks_then_completes(wire_factory: Any) -> None:
    server = load_example()
    server.options = dataclasses.replace(
        server.options, extensions={"tasks": TaskOptions(store="memory:", sync_budget_s=0.05)})
    wire = wire_factory(server)
    created = await wire.request("tools/call", {
        "name": "build_report", "_meta": DECLARING,
        "arguments": {"topic": "tides", "sections": 2, "seconds_per_section": 0.1}})
    task_id = created["result"]["taskId"]
    messages = set()
    for _ in range(300):
        task = await get(wire, task_id)
        messages.add(task.get("statusMessage"))
        if task["status"] == "input_required":
            break
        await asyncio.sleep(0.01)
    assert task["inputRequests"]["publish"]["method"] == "elicitation/create"
    assert "wrote section 1 of 2 (1/3)" in messages or "wrote section 2 of 2 (2/3)" in messages
    await wire.request("tasks/update", {"taskId": task_id, "_meta": DECLARING, "inputResponses": {
        "publish": {"action": "accept", "content": {"publish": True}}}})
    for _ in range(300):
        task = await get(wire, task_id)
        if task["status"] == "completed":
            break
        await asyncio.sleep(0.01)
    text = task["result"]["content"][0]["text"]
    assert text.startswith("Report on tides (published):") and "2. tides: part 2" in text
