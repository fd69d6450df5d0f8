"""`tools/call`: the call path of every tool, from the name it asks for to its result.

The path is every request's hot one, counted in Python calls (`bench/compare.py --calls`): a
call of a plain tool finds the tool, checks its arguments (`tool_arguments.py`), hops to a
worker thread (`threads.py`) or runs on the loop, and makes its result (`tool_results.py`),
with no frame it can do without. A mounted server's tool is handed to its own server, an
intercepted one to the extension that takes its calls.
"""

from __future__ import annotations

from collections.abc import Awaitable, Mapping
from contextlib import AsyncExitStack
from functools import partial
from typing import TYPE_CHECKING, Any

from mcpkit.errors import InvalidParamsError, RPCError, ToolError
from mcpkit.server.context import Context, inject, raise_failures, raises_failures
from mcpkit.server.dependencies import provide
from mcpkit.server.handles import HandleError
from mcpkit.server.listing import require
from mcpkit.server.mrtr import in_rounds
from mcpkit.server.threads import run_in_worker
from mcpkit.server.tool_arguments import arguments_of
from mcpkit.server.tool_results import call_result, error_result, tool_failure
from mcpkit.types.constants import SERVER_INFO_KEY
from mcpkit.types.methods import Method

if TYPE_CHECKING:
    from mcpkit.server.tools import Tool

__all__ = [
    "call_tool",
    "run_handler",
    "run_tool",
]


def lookup(tools: Mapping[str, Tool], params: Mapping[str, Any]) -> Tool:
    name = params["name"]  # a string: the row's params check (guards.py) saw to it
    tool = tools.get(name)
    if tool is None:
        raise InvalidParamsError(f"Unknown tool: {name!r}", {"name": name})
    return tool


def call_tool(params: dict[str, Any], ctx: Context) -> Awaitable[dict[str, Any]]:
    """`tools/call`: the named tool on its checked arguments, as a CallToolResult.

    A plain function handing back the coroutine that runs the tool, so the call every tool
    takes costs one coroutine, not two; an unknown tool is refused before any is made.
    """
    tools = ctx.server.tools
    # `require` and `lookup` are asked only when the name finds no tool (a string: the row's
    # params check, guards.py, saw to it): then the refusal says whether any tool is offered.
    tool: Tool | None = tools.get(params["name"])
    if tool is None:
        require(ctx.server, "tools", Method.TOOLS_CALL)
        tool = lookup(tools, params)
    if tool.delegate is not None:
        return tool.delegate(params, ctx)
    if tool.intercepted and ctx.server.tool_interceptor is not None:
        raise_failures(ctx, False)  # the interceptor answers the call's failures itself
        return ctx.server.tool_interceptor(tool, params, ctx)  # type: ignore[no-any-return]
    # `run_tool`, inlined: this is every plain call's path, and a frame costs it measurably.
    if tool.signature.injected:
        return in_rounds(ctx, tool.name, params.get("arguments"), params,
                         partial(run_handler, tool, params, ctx))
    return run_handler(tool, params, ctx)


def run_tool(tool: Tool, params: dict[str, Any], ctx: Context) -> Awaitable[dict[str, Any]]:
    """A tool's call in this request, its input rounds included (what a plain call does)."""
    if tool.signature.injected:
        # Only a tool that takes the Context can ask, so only then is there a round to keep.
        return in_rounds(ctx, tool.name, params.get("arguments"), params,
                         partial(run_handler, tool, params, ctx))
    return run_handler(tool, params, ctx)


async def _value(tool: Tool, kwargs: dict[str, Any], ctx: Context) -> Any:
    """What the tool's function returns, run where its declaration says (`ToolOptions.blocking`)."""
    if tool.blocking:
        return await run_in_worker(tool.fn, kwargs)
    if tool.is_async:
        return await tool.fn(**kwargs)
    if tool.signature.injected:
        return await ctx.run_inline(tool.fn, kwargs)
    return tool.fn(**kwargs)  # declared never to wait: on this thread, at once


async def run_handler(tool: Tool, params: dict[str, Any], ctx: Context) -> dict[str, Any]:
    """Run the tool and make its result; every failure of either is an `isError` result
    (`tool_failure`), or, under a middleware chain, passes up through it to be made there.

    Passed through: `RPCError`s but `HandleError` (refusals of the request, or errors the
    tool means as JSON-RPC errors: a missing client capability, a URL elicitation) and the
    `BaseException`s that are not failures (an input round's `InputRequired`, cancellation).
    """
    try:
        kwargs = arguments_of(tool, params)
        injected = tool.signature.injected
        if injected:
            inject(injected, kwargs, ctx)
        provided = tool.signature.provided
        if provided:
            async with AsyncExitStack() as stack:
                await provide(provided, kwargs, ctx, stack)
                result = call_result(tool, await _value(tool, kwargs, ctx))
        elif tool.blocking:  # `_value`'s cases, inlined for the calls that need no more
            result = call_result(tool, await run_in_worker(tool.fn, kwargs))
        elif tool.is_async:
            result = call_result(tool, await tool.fn(**kwargs))
        elif not injected:
            result = call_result(tool, tool.fn(**kwargs))
        else:
            result = call_result(tool, await _value(tool, kwargs, ctx))
    except (ToolError, HandleError) as exc:
        if raises_failures(ctx):
            raise
        return error_result(str(exc) or f"tool {tool.name!r} failed")
    except RPCError:
        raise
    except Exception as exc:
        if raises_failures(ctx):
            raise
        return tool_failure(tool.name, exc, ctx)
    meta = result.get("_meta")
    if meta is not None and SERVER_INFO_KEY not in meta:
        result["_meta"] = {**meta, **ctx.server.result_meta}
    return result
