"""A `tools/call` as the client makes it, under `Client.call_tool` (and an extension's client
half: `mcpkit.ext.tasks` starts and follows calls that become tasks with these same pieces).

Three things every tool call needs beyond the request path (`mcpkit.client.calls`): the reader
of the type a call names, compiled before anything is sent (`reader_of`); the one retry after
-32020 (HTTP-17: the mirrored headers came from an old tool list, so the list is fetched again
first); and the checks of the result (`content` is a list; `structuredContent` fits the tool's
`outputSchema` when `ClientOptions.validate_output` asks).

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
from mcpkit.client.structured import ResultReader, reader_for
from mcpkit.errors import HeaderMismatchError, InvalidParamsError
from mcpkit.types.methods import Method

__all__ = [
    "CallOptions",
    "Relist",
    "call_once",
    "checked_result",
    "know_tool",
    "reader_of",
    "tool_call",
]


class CallOptions(TypedDict, total=False):
    """The options of one tool call, by keyword (`call_tool(..., progress=show)`)."""

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
    """The call's round trip(s): a complete result, or an extension's kind already admitted."""
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


async def reader_of(core: ClientCore, relist: Relist, name: str, result: Any
                    ) -> ResultReader[Any] | None:
    """The reader of the type a call names (`result=`, None: none), compiled before anything
    is sent, with the tool list read first when the tool is not known yet."""
    if result is None:
        return None
    reader = reader_for(result)
    await core.connect()
    await know_tool(core, relist, name)
    return reader


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
