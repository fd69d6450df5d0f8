"""A scripted Tasks server in this process, for the client's edge cases.

mcpkit's own runtime behaves; the client must also cope with servers that do not (a zero or a
day-long `pollIntervalMs`, the same input key asked again and again, a task for a request that
never declared the extension, a state about another task). `TaskPeer` is a `Connector` whose
transport answers by hand from a script: each tool maps to the list of states its task goes
through, one step per `tasks/get` (and one per `tasks/update`), and the listen stream pushes
the same states as `notifications/tasks` when asked to. Every message the client sends passes
through the test's `SchemaTap`.
"""

from __future__ import annotations

import asyncio
import itertools
from typing import Any

from helpers.client.schema_tap import SchemaTap

MODERN = "2026-07-28"
TASKS = "io.modelcontextprotocol/tasks"
STAMP = "2026-07-28T12:00:00.000Z"
_ids = itertools.count(1)


def state(task_id: str, status: str, **extra: Any) -> dict[str, Any]:
    """One DetailedTask."""
    return {"taskId": task_id, "status": status, "createdAt": STAMP, "lastUpdatedAt": STAMP,
            "ttlMs": 60000, "pollIntervalMs": 0, **extra}


def done(task_id: str, text: str) -> dict[str, Any]:
    return state(task_id, "completed", result={"content": [{"type": "text", "text": text}]})


def confirm(key: str = "confirm") -> dict[str, Any]:
    return {key: {"method": "elicitation/create", "params": {
        "mode": "form", "message": "Go on?", "requestedSchema": {
            "type": "object", "properties": {"ok": {"type": "boolean"}}, "required": ["ok"]}}}}


class TaskPeer:
    """`tasks`: tool name -> (the CreateTaskResult's fields, the states tasks/get walks)."""

    kind = "memory"

    def __init__(self, tap: SchemaTap, tasks: dict[str, tuple[dict[str, Any], list[Any]]], *,
                 offer: bool = True, notify: bool = False, always_task: bool = False) -> None:
        self.tap = tap
        self.tasks = tasks
        self.offer = offer
        self.notify = notify
        self.always_task = always_task
        self.key = f"task-peer#{next(_ids)}"
        self.steps: dict[str, list[Any]] = {}
        self.received: list[dict[str, Any]] = []
        self.listeners: list[tuple[list[str], Any]] = []
        self.updates: list[dict[str, Any]] = []
        self.cancelled: list[str] = []

    async def connect(self) -> TaskPeer:
        return self

    def set_request_handler(self, handler: Any) -> None:
        return None

    async def notify(self, message: dict[str, Any]) -> None:
        self.tap("send", message)

    async def close(self) -> None:
        return None

    async def request(self, message: dict[str, Any], *, on_notification: Any = None
                      ) -> dict[str, Any]:
        self.tap("send", message)
        self.received.append(message)
        result = await self.answer(message["method"], message.get("params") or {},
                                   on_notification)
        if "code" in result:
            return {"jsonrpc": "2.0", "id": message["id"], "error": result}
        return {"jsonrpc": "2.0", "id": message["id"], "result": result}

    def declared(self, params: dict[str, Any]) -> bool:
        caps = params.get("_meta", {}).get("io.modelcontextprotocol/clientCapabilities", {})
        return TASKS in caps.get("extensions", {})

    async def answer(self, method: str, params: dict[str, Any], on_note: Any) -> dict[str, Any]:
        if method == "server/discover":
            caps: dict[str, Any] = {"tools": {}}
            if self.offer:
                caps["extensions"] = {TASKS: {}}
            return {"resultType": "complete", "supportedVersions": [MODERN],
                    "capabilities": caps, "_meta": {
                        "io.modelcontextprotocol/serverInfo": {"name": "peer", "version": "1"}}}
        if method == "tools/call":
            name = params["name"]
            created, steps = self.tasks[name]
            if not (self.declared(params) or self.always_task):
                return {"resultType": "complete", "content": [{"type": "text", "text": "sync"}]}
            self.steps[created["taskId"]] = list(steps)
            return {"resultType": "task", **state(created["taskId"], "working"), **created}
        if method == "resources/read":  # a task is never a valid answer here (TASK-2)
            return {"resultType": "task", **state("read-task-0000000000000000", "working")}
        if method in ("tasks/get", "tasks/update", "tasks/cancel"):
            if not self.declared(params):
                return {"code": -32021, "message": "Missing required client capability",
                        "data": {"requiredCapabilities": {"extensions": {TASKS: {}}}}}
            task_id = params["taskId"]
            if task_id not in self.steps:
                return {"code": -32602, "message": "Failed to retrieve task: Task not found"}
            if method == "tasks/cancel":
                self.cancelled.append(task_id)
                self.steps[task_id] = [state(task_id, "cancelled")]
                return {"resultType": "complete"}
            if method == "tasks/update":
                self.updates.append(params["inputResponses"])
                self._advance(task_id)
                return {"resultType": "complete"}
            return {"resultType": "complete", **self._current(task_id, advance=True)}
        if method == "subscriptions/listen":
            wanted = params["notifications"].get("taskIds", [])
            agreed = [t for t in wanted if t in self.steps] if self.notify else []
            await on_note({"jsonrpc": "2.0", "method": "notifications/subscriptions/acknowledged",
                           "params": {"notifications": {"taskIds": agreed}}})
            for task_id in agreed:  # push every remaining state, then hold the stream open
                while len(self.steps[task_id]) > 1:
                    self._advance(task_id)
                    await on_note({"jsonrpc": "2.0", "method": "notifications/tasks",
                                   "params": self._current(task_id)})
                    await asyncio.sleep(0)
            await asyncio.Event().wait()
        return {"code": -32601, "message": f"Method not found: {method}"}

    def _current(self, task_id: str, advance: bool = False) -> dict[str, Any]:
        steps = self.steps[task_id]
        current = steps[0]
        if advance:
            self._advance(task_id)
        return current  # type: ignore[no-any-return]

    def _advance(self, task_id: str) -> None:
        steps = self.steps[task_id]
        if len(steps) > 1:
            steps.pop(0)

    def sent(self, method: str) -> list[dict[str, Any]]:
        return [m for m in self.received if m["method"] == method]
