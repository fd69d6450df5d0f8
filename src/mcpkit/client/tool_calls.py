"""A `tools/call` as the client makes it, under `Client.call_tool` and `Client.start_tool`.

Three things every tool call needs beyond the request path (`mcpkit.client.calls`): the one
retry after -32020 (HTTP-17: the mirrored headers came from an old tool list, so the list is
fetched again first), the checks of the result (`content` is a list; `structuredContent` fits
the tool's `outputSchema` when `ClientOptions.validate_output` asks), and, when the server
made the call a task, the `TaskHandle` whose final result gets those same checks.

Takes the client's `ClientCore` (`mcpkit.client.core`), whose `tools` are the last tool list
read, and how to read it again (`Relist`), so it does not import `mcpkit.client.client`. May import
`mcpkit.types`, `mcpkit.errors` and the client's own lower modules.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Protocol, TypedDict

from mcpkit.client.calls import call
from mcpkit.client.core import ClientCore
from mcpkit.client.messages import require_list
from mcpkit.client.options import LogHandler, ProgressHandler
from mcpkit.client.results import CallToolResult
from mcpkit.client.structured import ResultReader
from mcpkit.client.task_watch import TaskWatch
from mcpkit.client.tasks import StatusHandler, TaskHandle
from mcpkit.errors import HeaderMismatchError, InvalidParamsError
from mcpkit.types.methods import Method

__all__ = [
    "CallOptions",
    "Relist",
    "StartOptions",
    "call_once",
    "checked_result",
    "handle_for",
    "know_tool",
    "reattached",
    "tool_call",
]


class StartOptions(TypedDict, total=False):
    """The options of one tool call, by keyword (`start_tool(..., progress=show)`)."""

    progress: ProgressHandler | None
    """Hears this call's `notifications/progress`: `(progress, total, message)`."""
    log: LogHandler | None
    """Hears this call's log messages: `(level, data, logger)`."""
    log_level: str | None
    """The least level of log message this call asks for."""
    timeout: float | None
    """Seconds to wait for each round trip (None: forever; absent: `ClientOptions.timeout`)."""
    meta: Mapping[str, Any] | None
    """Added to the request's `_meta`."""


class CallOptions(StartOptions, total=False):
    """`StartOptions`, and what `call_tool` hears of a call the server makes a task."""

    on_status: StatusHandler | None
    """Hears each state of the task, when the call became one."""


class Relist(Protocol):
    """Reads the tool list again (`Client.list_tools`), as a call does before it retries."""

    async def __call__(self, *, fresh: bool = ...) -> object: ...


def tool_call(name: str, arguments: Mapping[str, Any] | None) -> tuple[dict[str, Any], str]:
    """The params of a `tools/call` of `name`, and how errors name the call."""
    fields: dict[str, Any] = {"name": name}
    if arguments is not None:
        fields["arguments"] = arguments
    return fields, f"tools/call {name!r}"


async def call_once(core: ClientCore, relist: Relist, fields: dict[str, Any], what: str,
                    **kw: Any) -> dict[str, Any]:
    """The call's round trip(s): a complete result, or a CreateTaskResult already admitted."""
    try:
        result, _ = await call(core, Method.TOOLS_CALL, fields, what, **kw)
    except HeaderMismatchError:
        # HTTP-17: the headers came from an old tool list; list again, retry once.
        await relist(fresh=True)
        result, _ = await call(core, Method.TOOLS_CALL, fields, what, **kw)
    except InvalidParamsError:
        core.cache.drop(Method.TOOLS_LIST)  # evidence the tool list changed (CACHE-4)
        raise
    return result


async def know_tool(core: ClientCore, relist: Relist, name: str) -> None:
    """Read the tool list when `name` is not in it yet: a typed call checks the result
    against the tool's `outputSchema` (a cached list costs no round trip)."""
    if name not in core.tools:
        await relist()


def checked_result(core: ClientCore, name: str | None, result: dict[str, Any], what: str,
                   reader: ResultReader[Any] | None = None) -> CallToolResult[Any]:
    """`result` once it passed the checks of a CallToolResult (and of the tool's output
    schema, when asked for or when the call names a type and the tool is known), with its
    structured content read by `reader` when the call named a type."""
    require_list(result, "content", what)
    tool = core.tools.get(name) if name is not None else None
    if tool is not None and (core.options.validate_output or reader is not None):
        core.outputs.check(tool.raw, result)
    if reader is None or result.get("isError") is True:
        return CallToolResult(result, what)
    return CallToolResult(result, what, data=reader.read(result.get("structuredContent"), what))


def handle_for(core: ClientCore, created: Mapping[str, Any], what: str, name: str,
               reader: ResultReader[Any] | None = None) -> TaskHandle[Any]:
    """The handle of the task a call to tool `name` became."""
    watch = TaskWatch.created(created, what, core.options.max_rounds)
    return TaskHandle(core, watch, None, lambda r: checked_result(core, name, r, what, reader))


def reattached(core: ClientCore, task_id: str, reader: ResultReader[Any] | None = None
               ) -> TaskHandle[Any]:
    """The handle of a task known by id only (the tool is unknown: its result gets the
    CallToolResult checks, not a tool's output schema)."""
    if not isinstance(task_id, str) or not task_id:
        raise ValueError(f"task: a task id is a non-empty string, not {task_id!r}")
    what = "tasks/get"  # messages then read "tasks/get: task '...' was cancelled"
    watch = TaskWatch.reattached(task_id, what, core.options.max_rounds)
    return TaskHandle(core, watch, None, lambda r: checked_result(core, None, r, what, reader))
