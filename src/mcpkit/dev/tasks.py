"""The tasks that calls became (the Tasks extension), followed live for the page.

A call made "as a task" goes out through `Client.start_tool`; when the server makes it a task,
its handle is followed here in the background, and each state it reaches (status, status
message, the questions it waits on, its result or error) is published as the task's state
event. A question the task asks is answered through the page (the client's handlers, then
`tasks/update`), exactly as in a call. A task known only by its id (started by another client,
or before a reconnection) is reattached with `Client.task(id)` and followed the same way.
`get` asks the server once (`tasks/get`), `cancel` asks it to stop (`tasks/cancel`; the task's
own state then says whether it did), `update` sends answers written by hand.

Following ends with the connection (a stdio server's tasks end with its process); an HTTP
server's tasks can be reattached after a reconnection.
"""

from __future__ import annotations

import asyncio
from collections.abc import Mapping
from typing import Any

from mcpkit.dev.events import EventHub
from mcpkit.dev.meanings import meaning
from mcpkit.errors import MCPError, RPCError, TaskCancelledError
from mcpkit.ext.tasks import TaskHandle

__all__ = [
    "TaskBoard",
    "raw",
]


def raw(result: Any) -> dict[str, Any]:
    """A call's result as the wire carried it (a typed result's `.raw`, or the dict itself)."""
    wire = getattr(result, "raw", result)
    return dict(wire) if isinstance(wire, Mapping) else {}


class TaskBoard:
    def __init__(self, hub: EventHub) -> None:
        self.hub = hub
        self._handles: dict[str, TaskHandle[Any]] = {}
        self._about: dict[str, dict[str, Any]] = {}
        self._following: dict[str, asyncio.Task[None]] = {}

    def follow(self, handle: TaskHandle[Any], tool: str | None = None,
               arguments: Any = None, call: str | None = None) -> str:
        """Follow `handle` until its task ends; its id."""
        ident = handle.task_id
        assert ident is not None
        self._handles[ident] = handle
        self._about[ident] = {"tool": tool, "arguments": arguments, "call": call}
        running = self._following.get(ident)
        if running is None or running.done():
            self._following[ident] = asyncio.ensure_future(self._follow(ident, handle))
        return ident

    def handle(self, ident: str) -> TaskHandle[Any] | None:
        return self._handles.get(ident)

    def publish(self, ident: str, latest: Mapping[str, Any], **extra: Any) -> None:
        data = {"id": ident, **self._about.get(ident, {}), "latest": dict(latest),
                "status": latest.get("status"), "statusMessage": latest.get("statusMessage"),
                "following": ident in self._following and not self._following[ident].done(),
                **extra}
        self.hub.publish("task", data, key=f"task:{ident}")

    async def _follow(self, ident: str, handle: TaskHandle[Any]) -> None:
        def heard(task: dict[str, Any]) -> None:
            self.publish(ident, task)

        try:
            result = await handle.wait(on_status=heard)
        except TaskCancelledError:
            self._done(ident, handle, status="cancelled")
        except RPCError as exc:
            self._done(ident, handle, status="failed", error={
                "code": exc.code, "message": exc.message, "meaning": meaning(exc.code)})
        except MCPError as exc:
            self._done(ident, handle, error={"message": str(exc)})
        except asyncio.CancelledError:
            self._following.pop(ident, None)
            self.publish(ident, handle.latest, note="no longer followed (the connection "
                                                    "closed); reattach by its id")
            raise
        else:
            self._done(ident, handle, status="completed", result=raw(result))

    def _done(self, ident: str, handle: TaskHandle[Any], status: str | None = None,
              **extra: Any) -> None:
        self._following.pop(ident, None)
        latest = dict(handle.latest)
        if status is not None:
            latest.setdefault("status", status)
        self.publish(ident, latest, **extra)

    def stop(self) -> None:
        """Stop following every task (the connection is closing); the tasks go on."""
        for task in list(self._following.values()):
            task.cancel()
        self._handles.clear()
