"""`TaskClient`: the Tasks extension's half of `mcpkit.Client` (`start_tool`, `task`, and
`call_tool` waiting on a call the server made a task).

The core `mcpkit.client.Client` knows no tasks: its request path admits a `task` answer only
because `mcpkit.ext.tasks.handles` registered the kind (`mcpkit.client.result_kinds`), and its
`call_tool` refuses to pass one off as a result. This mixin, which `mcpkit.clients.Client`
puts before the core class, follows it, built on the core's public seams only: `Client.core`,
and the pieces of a tool call in `mcpkit.client.tool_calls` (the reader of `result=`, the
round trip with its -32020 retry, the checks of the result).

May import the client's public modules and this extension's own.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, TypeVar, Unpack, overload

from mcpkit.client.client import Structured
from mcpkit.client.core import DEFAULT_TIMEOUT, ClientCore
from mcpkit.client.results import CallToolResult, Tool
from mcpkit.client.structured import reader_for
from mcpkit.client.tool_calls import (
    CallOptions,
    call_once,
    checked_result,
    reader_of,
    tool_call,
)
from mcpkit.ext.tasks.handles import StatusHandler, TaskHandle, handle_for, reattached, task_meta
from mcpkit.ext.tasks.wire import is_create_task_result

__all__ = [
    "TaskCallOptions",
    "TaskClient",
]

T = TypeVar("T")


class TaskCallOptions(CallOptions, total=False):
    """`CallOptions`, and what `call_tool` hears of a call the server makes a task."""

    on_status: StatusHandler | None
    """Hears each state of the task, when the call became one."""


class TaskClient:
    """Mixed into a core `Client` (`class Client(TaskClient, CoreClient)`): tool calls that
    may become tasks."""

    if TYPE_CHECKING:  # what the core `Client` it is mixed into gives it
        @property
        def core(self) -> ClientCore: ...

        async def list_tools(self, *, fresh: bool = False) -> list[Tool]: ...

    @overload
    async def call_tool(self, name: str, arguments: Mapping[str, Any] | None = None, *,
                        result: None = None, **options: Unpack[TaskCallOptions]
                        ) -> CallToolResult[Structured]: ...

    @overload
    async def call_tool(self, name: str, arguments: Mapping[str, Any] | None = None, *,
                        result: type[T], **options: Unpack[TaskCallOptions]
                        ) -> CallToolResult[T]: ...

    async def call_tool(self, name: str, arguments: Mapping[str, Any] | None = None, *,
                        result: Any = None, **options: Unpack[TaskCallOptions]
                        ) -> CallToolResult[Any]:
        """Call a tool; returns its `CallToolResult` (`mcpkit.client.Client.call_tool`).

        When the request declares Tasks (`ClientOptions.extensions`) and the server makes it a
        task, the task is waited on (`on_status` hears each state) and its result returned;
        then `timeout` also bounds the whole wait, and a wait that times out, fails on this
        side or is cancelled cancels the task (`tasks/cancel`, best effort).
        """
        on_status = options.pop("on_status", None)
        core = self.core
        reader = await reader_of(core, self.list_tools, name, result)
        fields, what = tool_call(name, arguments)
        answer = await call_once(core, self.list_tools, fields, what, **options)
        if not is_create_task_result(answer):
            return checked_result(core, name, answer, what, reader)
        handle = handle_for(core, answer, what, name, reader)
        timeout = options.get("timeout", DEFAULT_TIMEOUT)
        try:
            return await handle.wait(on_status=on_status, timeout=core.options.timeout
                                     if timeout is DEFAULT_TIMEOUT else timeout)
        except BaseException:
            if not handle.done:
                await handle.cancel_quietly()
            raise

    @overload
    async def start_tool(self, name: str, arguments: Mapping[str, Any] | None = None, *,
                         result: None = None, **options: Unpack[CallOptions]
                         ) -> TaskHandle[Structured]: ...

    @overload
    async def start_tool(self, name: str, arguments: Mapping[str, Any] | None = None, *,
                         result: type[T], **options: Unpack[CallOptions]
                         ) -> TaskHandle[T]: ...

    async def start_tool(self, name: str, arguments: Mapping[str, Any] | None = None, *,
                         result: Any = None, **options: Unpack[CallOptions]
                         ) -> TaskHandle[Any]:
        """Call a tool and return its task's handle at once, declaring Tasks for this request
        whatever `ClientOptions.extensions` says. A server that answers at once gives a
        handle already done (`task_id` None); `handle.wait()` returns the result either way,
        read into `result=` as `call_tool` reads it. The options are `call_tool`'s.
        """
        core = self.core
        await core.connect()
        reader = await reader_of(core, self.list_tools, name, result)
        fields, what = tool_call(name, arguments)
        options["meta"] = task_meta(core, options.get("meta"))
        answer = await call_once(core, self.list_tools, fields, what, **options)
        if is_create_task_result(answer):
            return handle_for(core, answer, what, name, reader)
        return TaskHandle(core, None, checked_result(core, name, answer, what, reader))

    @overload
    def task(self, task_id: str, *, result: None = None) -> TaskHandle[Structured]: ...

    @overload
    def task(self, task_id: str, *, result: type[T]) -> TaskHandle[T]: ...

    def task(self, task_id: str, *, result: Any = None) -> TaskHandle[Any]:
        """The handle of a task started earlier, by its id (after a restart, say); its first
        `status()` or `wait()` asks the server about it. `result=` reads its result's
        structured content as `call_tool` does (the tool is unknown, so its `outputSchema`
        is not checked)."""
        return reattached(self.core, task_id, None if result is None else reader_for(result))
