"""`SyncTaskClient` and `SyncTaskHandle`: the Tasks extension's half of `mcpkit.SyncClient`.

The core `SyncClient` is the core `Client` without `await`; the `Client` it wraps in
`mcpkit.SyncClient` is `mcpkit.Client`, which has `start_tool` and `task`
(`mcpkit.ext.tasks.client.TaskClient`), and this mixin gives them to the sync client the same
way, each running on the client's own loop through the core's public `SyncClient.run`.

May import the client's public modules and this extension's own.
"""

from __future__ import annotations

from collections.abc import Callable, Coroutine, Mapping
from typing import TYPE_CHECKING, Any, Generic, TypeVar, Unpack, overload

from mcpkit.client.client import Structured
from mcpkit.client.results import CallToolResult
from mcpkit.client.tool_calls import CallOptions
from mcpkit.ext.tasks.client import TaskCallOptions, TaskClient
from mcpkit.ext.tasks.handles import StatusHandler, TaskHandle

__all__ = [
    "SyncTaskClient",
    "SyncTaskHandle",
]

T = TypeVar("T")
R = TypeVar("R")
Runner = Callable[[Coroutine[Any, Any, Any]], Any]
"""Runs a coroutine on the client's loop and returns what it returned (`SyncClient.run`)."""


class SyncTaskHandle(Generic[T]):
    """`TaskHandle` without `await` (`SyncClient.start_tool`, `SyncClient.task`)."""

    def __init__(self, handle: TaskHandle[T], run: Runner) -> None:
        self._handle = handle
        self._run = run

    @property
    def task_id(self) -> str | None:
        return self._handle.task_id

    @property
    def latest(self) -> dict[str, Any]:
        return self._handle.latest

    @property
    def done(self) -> bool:
        return self._handle.done

    def status(self) -> dict[str, Any]:
        status: dict[str, Any] = self._run(self._handle.status())
        return status

    def update(self, responses: Mapping[str, Mapping[str, Any]]) -> None:
        self._run(self._handle.update(responses))

    def cancel(self) -> None:
        self._run(self._handle.cancel())

    def wait(self, *, on_status: StatusHandler | None = None,
             timeout: float | None = None) -> CallToolResult[T]:
        result: CallToolResult[T] = self._run(
            self._handle.wait(on_status=on_status, timeout=timeout))
        return result


class SyncTaskClient:
    """Mixed into a core `SyncClient` whose `client` is a `TaskClient` (`mcpkit.SyncClient`)."""

    if TYPE_CHECKING:  # what the core `SyncClient` it is mixed into gives it
        client: Any

        def run(self, coro: Coroutine[Any, Any, R]) -> R: ...

    def _tasks(self) -> TaskClient:
        client = self.client
        if not isinstance(client, TaskClient):
            raise TypeError("start_tool and task need a client that follows tasks "
                            f"(mcpkit.Client), not {type(client).__name__}")
        return client

    @overload
    def call_tool(self, name: str, arguments: Mapping[str, Any] | None = None, *,
                  result: None = None, **options: Unpack[TaskCallOptions]
                  ) -> CallToolResult[Structured]: ...

    @overload
    def call_tool(self, name: str, arguments: Mapping[str, Any] | None = None, *,
                  result: type[T], **options: Unpack[TaskCallOptions]) -> CallToolResult[T]: ...

    def call_tool(self, name: str, arguments: Mapping[str, Any] | None = None, *,
                  result: Any = None, **options: Unpack[TaskCallOptions]
                  ) -> CallToolResult[Any]:
        """`Client.call_tool`, waiting on a call the server made a task (`on_status`)."""
        called: CallToolResult[Any] = self.run(
            self._tasks().call_tool(name, arguments, result=result, **options))
        return called

    @overload
    def start_tool(self, name: str, arguments: Mapping[str, Any] | None = None, *,
                   result: None = None, **options: Unpack[CallOptions]
                   ) -> SyncTaskHandle[Structured]: ...

    @overload
    def start_tool(self, name: str, arguments: Mapping[str, Any] | None = None, *,
                   result: type[T], **options: Unpack[CallOptions]) -> SyncTaskHandle[T]: ...

    def start_tool(self, name: str, arguments: Mapping[str, Any] | None = None, *,
                   result: Any = None, **options: Unpack[CallOptions]) -> SyncTaskHandle[Any]:
        """`Client.start_tool`: the task's handle, at once."""
        handle: TaskHandle[Any] = self.run(
            self._tasks().start_tool(name, arguments, result=result, **options))
        return SyncTaskHandle(handle, self.run)

    @overload
    def task(self, task_id: str, *, result: None = None) -> SyncTaskHandle[Structured]: ...

    @overload
    def task(self, task_id: str, *, result: type[T]) -> SyncTaskHandle[T]: ...

    def task(self, task_id: str, *, result: Any = None) -> SyncTaskHandle[Any]:
        """`Client.task`: the handle of a task started earlier."""
        return SyncTaskHandle(self._tasks().task(task_id, result=result), self.run)
