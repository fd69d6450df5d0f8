"""A `tools/call` as the client makes it, under `Client.call_tool` and `Client.start_tool`.

Three things every tool call needs beyond the request path (`mcpkit.client.calls`): the one
retry after -32020 (HTTP-17: the mirrored headers came from an old tool list, so the list is
fetched again first), the checks of the result (`content` is a list; `structuredContent` fits
the tool's `outputSchema` when `ClientOptions.validate_output` asks), and, when the server
made the call a task, the `TaskHandle` whose final result gets those same checks.

Sees its client through `ToolCaller`, so it does not import `mcpkit.client.client`. May import
`mcpkit.types`, `mcpkit.errors` and the client's own lower modules.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Protocol

from mcpkit.client.adapter import ClientCore
from mcpkit.client.messages import require_list
from mcpkit.client.options import LogHandler, ProgressHandler
from mcpkit.client.task_watch import TaskWatch
from mcpkit.client.tasks import TaskHandle
from mcpkit.client.tools import OutputChecker
from mcpkit.errors import HeaderMismatchError, InvalidParamsError
from mcpkit.types.constants import Method

__all__ = ["ToolCaller", "call_once", "checked_result", "handle_for", "reattached", "tool_call"]


class ToolCaller(ClientCore, Protocol):
    """The parts of a `Client` a tool call works with."""

    tools: dict[str, dict[str, Any]]
    _outputs: OutputChecker

    async def list_tools(self, *, fresh: bool = ...) -> list[dict[str, Any]]: ...

    async def _call(self, method: str, fields: dict[str, Any], what: str, *,
                    progress: ProgressHandler | None = ..., log: LogHandler | None = ...,
                    log_level: str | None = ..., timeout: float | None = ...,
                    meta: Mapping[str, Any] | None = ...) -> tuple[dict[str, Any], bool]: ...


def tool_call(name: str, arguments: Mapping[str, Any] | None) -> tuple[dict[str, Any], str]:
    """The params of a `tools/call` of `name`, and how errors name the call."""
    fields: dict[str, Any] = {"name": name}
    if arguments is not None:
        fields["arguments"] = arguments
    return fields, f"tools/call {name!r}"


async def call_once(client: ToolCaller, fields: dict[str, Any], what: str, **kw: Any
                    ) -> dict[str, Any]:
    """The call's round trip(s): a complete result, or a CreateTaskResult already admitted."""
    try:
        result, _ = await client._call(Method.TOOLS_CALL, fields, what, **kw)
    except HeaderMismatchError:
        # HTTP-17: the headers came from an old tool list; list again, retry once.
        await client.list_tools(fresh=True)
        result, _ = await client._call(Method.TOOLS_CALL, fields, what, **kw)
    except InvalidParamsError:
        client._cache.drop(Method.TOOLS_LIST)  # evidence the tool list changed (CACHE-4)
        raise
    return result


def checked_result(client: ToolCaller, name: str | None, result: dict[str, Any], what: str
                   ) -> dict[str, Any]:
    """`result` once it passed the checks of a CallToolResult (and of the tool's output
    schema, when asked for and the tool is known)."""
    require_list(result, "content", what)
    tool = client.tools.get(name) if name is not None else None
    if client.options.validate_output and tool is not None:
        client._outputs.check(tool, result)
    return result


def handle_for(client: ToolCaller, created: Mapping[str, Any], what: str, name: str
               ) -> TaskHandle:
    """The handle of the task a call to tool `name` became."""
    watch = TaskWatch.created(created, what, client.options.max_rounds)
    return TaskHandle(client, watch, None, lambda r: checked_result(client, name, r, what))


def reattached(client: ToolCaller, task_id: str) -> TaskHandle:
    """The handle of a task known by id only (the tool is unknown: its result gets the
    CallToolResult checks, not a tool's output schema)."""
    if not isinstance(task_id, str) or not task_id:
        raise ValueError(f"task: a task id is a non-empty string, not {task_id!r}")
    what = "tasks/get"  # messages then read "tasks/get: task '...' was cancelled"
    watch = TaskWatch.reattached(task_id, what, client.options.max_rounds)
    return TaskHandle(client, watch, None, lambda r: checked_result(client, None, r, what))
