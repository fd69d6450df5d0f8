"""Registered tools: their definitions, `tools/list` and `tools/call`.

A tool's wire definition, its argument validator, its output conversion and the table of its
`x-mcp-header` parameters (which Streamable HTTP checks against the mirrored headers) are all
built once, when it is registered; `tools/call` then costs a dict lookup, the compiled
validation and the call itself, however many tools there are.

A tool that fails is answered `isError: true`, for the model to see and act on (TOOL-13): a
`ToolError` with its own text, a result that cannot be sent (content that is not content, a
value that is not JSON data, an integer JSON cannot carry) saying what is wrong with it, and
any other exception with an error id (`mcpkit.server.failures`). JSON-RPC errors are kept for
the request being wrong (an unknown tool, arguments that are not an object, a bad
`requestState`), for the `RPCError`s a tool raises on purpose (a missing client capability),
and for the server breaking its own promise: structured content that does not match the
advertised outputSchema, or is missing (-32603 saying which, TOOL-12).
"""

from __future__ import annotations

import inspect
import logging
import re
import time
from collections.abc import Awaitable, Callable, Mapping, Sequence
from contextlib import AsyncExitStack
from dataclasses import dataclass, field
from functools import partial
from typing import Any, Final, TypedDict, Unpack

from mcpkit.errors import InternalError, InvalidParamsError, RPCError, ToolError
from mcpkit.protocol.mcp_headers import header_params
from mcpkit.schema import ArgumentsError, Signature, derive_signature, output_to_json
from mcpkit.server.content import (
    JSON_INTEGERS,
    ContentBlock,
    ToolResult,
    big_integer,
    json_problem,
    json_refusal,
    json_text,
    text_block,
    to_content,
)
from mcpkit.server.context import Context, inject, raise_failures, raises_failures
from mcpkit.server.dependencies import Depends, check_dependencies, provide
from mcpkit.server.failures import failure_text
from mcpkit.server.handles import HandleError
from mcpkit.server.listing import require
from mcpkit.server.mrtr import in_rounds
from mcpkit.server.scopes import scopes_of
from mcpkit.server.threads import run_in_worker
from mcpkit.server.tool_filters import tool_page
from mcpkit.server.tool_output import output_checker, typed_output_checker
from mcpkit.types.constants import SERVER_INFO_KEY
from mcpkit.types.methods import Method

__all__ = ["CORE_TOOL_OPTIONS", "Tool", "ToolOptions", "build_tool", "call_result", "call_tool",
           "error_result", "list_tools", "run_handler", "run_tool", "tool_failure"]

log = logging.getLogger("mcpkit.server")

_NAME = re.compile(r"^[A-Za-z0-9_.-]{1,128}$")


@dataclass(slots=True)
class Tool:
    name: str
    fn: Callable[..., Any]
    signature: Signature
    definition: dict[str, Any]
    is_async: bool
    check_output: Callable[[Any], None] | None
    header_params: dict[str, tuple[str, ...]]
    """Its `x-mcp-header` table: header name -> property path (empty when it declares none)."""
    scans_arguments: bool = True
    """Whether a checked argument may hold a container to look through for an integer the
    wire rounded (`arguments_of`); False when every parameter is declared a scalar."""
    scopes: tuple[str, ...] = ()
    """The OAuth scopes a call needs (`ToolOptions.scopes`)."""
    extension_options: Mapping[str, Any] = field(default_factory=dict)
    """The options it was registered with that the core does not know, for the extensions
    that take them (`Server.take_tool_options`); none left at None or False."""
    intercepted: bool = False
    """Whether its calls go to the server's tool interceptor (`Server.intercept_tool_calls`),
    as the extensions taking its options said when it was admitted."""
    delegate: Callable[[dict[str, Any], Context], Awaitable[dict[str, Any]]] | None = None
    """Who serves its calls instead: the mounted server it came from (`Server.mount`)."""
    blocking: bool = True
    """Whether it runs in a worker thread (`ToolOptions.blocking`): a plain function not
    declared `blocking=False`. False: it runs on the event loop's thread."""


class ToolOptions(TypedDict, total=False):
    """What may be said about a tool besides its function (all optional).

    These are the core's; an extension may take more (`Server.take_tool_options`, the Tasks
    extension's `task=` and `resumable=`), which the core keeps on the `Tool` for it and
    refuses on a server where no extension takes them."""

    title: str
    description: str
    """Defaults to the function's docstring."""
    annotations: Mapping[str, Any]
    input_schema: dict[str, Any]
    """A raw JSON Schema, used verbatim instead of the one derived from the type hints."""
    output_schema: dict[str, Any]
    structured_output: bool
    """False: never structured; True: the return annotation must give an output schema."""
    icons: list[dict[str, Any]]
    meta: Mapping[str, Any]
    scopes: Sequence[str]
    """OAuth scopes a call needs (`mcpkit.server.scopes`); none: any authorized caller."""
    blocking: bool
    """For a plain (non-async) function: False declares that it never waits (no I/O, no
    sleep, no lock another thread holds long, nothing slow), so it runs on the event loop's
    thread instead of a worker thread, without the hop each call of a plain function pays
    (about 10 µs of CPU). While it runs, nothing else of the server does: a function
    declared so that does block stalls every request. Left out (True): a worker thread. A
    coroutine function always runs on the loop; `blocking=True` is refused for one."""


CORE_TOOL_OPTIONS: Final = ToolOptions.__required_keys__ | ToolOptions.__optional_keys__
"""The tool options the core reads itself; any other is an extension's (`Tool.extension_options`)."""


def build_tool(
    fn: Callable[..., Any], name: str | None = None, **options: Unpack[ToolOptions]
) -> Tool:
    # Only a name left out falls back to the function's: an empty one given is refused below.
    tool_name = fn.__name__ if name is None else name
    title = options.get("title")
    description = options.get("description")
    annotations = options.get("annotations")
    output_schema = options.get("output_schema")
    icons = options.get("icons")
    meta = options.get("meta")
    if not _NAME.match(tool_name):
        raise ValueError(
            f"tool name {tool_name!r} is invalid: use 1-128 characters from A-Z a-z 0-9 _ - ."
        )
    try:
        sig = derive_signature(
            fn,
            injectables=(Context,),
            markers=(Depends,),
            input_schema=options.get("input_schema"),
            output_schema=output_schema,
            structured_output=options.get("structured_output"),
            # A `-> ToolResult` tool spells its result out itself: the dataclass's own fields
            # are not its output, so they must not become an advertised outputSchema.
            passthrough_types=(ContentBlock, ToolResult),
            clock=time.monotonic,  # the wall-clock budget of a call checked against input_schema
        )
    except (ValueError, TypeError) as exc:
        # The function's name is in the message; a tool registered under another name is
        # known to its author by that one.
        if name is None:
            raise
        raise type(exc)(f"tool {tool_name!r}: {exc}") from None
    check_dependencies(sig.provided, f"tool {tool_name!r}")
    schema = sig.input_schema
    if schema.get("type") != "object":
        raise ValueError(f"tool {tool_name!r}: inputSchema must have \"type\": \"object\" at its root")
    try:
        headers = header_params(schema)
    except ValueError as exc:
        raise ValueError(f"tool {tool_name!r}: {exc}") from None
    definition: dict[str, Any] = {"name": tool_name}
    if title:
        definition["title"] = title
    desc = description if description is not None else sig.description
    if desc:
        definition["description"] = desc
    if icons:
        definition["icons"] = list(icons)
    definition["inputSchema"] = schema
    if sig.output_schema is not None:
        definition["outputSchema"] = sig.output_schema
    if annotations:
        definition["annotations"] = dict(annotations)
    if meta:
        definition["_meta"] = dict(meta)
    check_output = None
    if output_schema is not None:
        check_output = output_checker(tool_name, output_schema)
    elif sig.output_schema is not None:
        check_output = typed_output_checker(tool_name, fn, sig.wrap_output)
    is_async = inspect.iscoroutinefunction(fn)
    blocking = options.get("blocking", not is_async)
    if type(blocking) is not bool or (blocking and is_async):
        raise ValueError(f"tool {tool_name!r}: blocking must be True or False, and True only for "
                         f"a plain function (a coroutine function runs on the event loop), not "
                         f"{blocking!r}")
    return Tool(tool_name, fn, sig, definition, is_async, check_output,
                headers, _may_hold_containers(definition["inputSchema"], fn),
                scopes_of(options.get("scopes"), f"tool {tool_name!r}"),
                {key: value for key, value in options.items()
                 if key not in CORE_TOOL_OPTIONS and value is not None and value is not False},
                blocking=blocking)


_SCALAR_TYPES = frozenset({"string", "integer", "number", "boolean", "null"})


def _may_hold_containers(schema: Mapping[str, Any], fn: Callable[..., Any]) -> bool:
    """False when the input schema declares every property a scalar and the function takes
    no others (no `**kwargs`: the check drops the arguments it does not declare)."""
    properties = schema.get("properties")
    if type(properties) is not dict or any(
            p.kind is inspect.Parameter.VAR_KEYWORD
            for p in inspect.signature(fn).parameters.values()):
        return True
    for prop in properties.values():
        kinds = prop.get("type") if type(prop) is dict else None
        kinds = [kinds] if type(kinds) is str else kinds
        if type(kinds) is not list or not kinds or not _SCALAR_TYPES.issuperset(kinds):
            return True
    return False


def error_result(message: str) -> dict[str, Any]:
    return {"resultType": "complete", "content": [text_block(message)], "isError": True}


def _refused(tool: Tool, problem: str) -> ToolError:
    """The tool error of a result that cannot be sent; logged too, for the tool's author."""
    message = f"tool {tool.name!r} returned {problem}"
    log.warning("%s", message)
    return ToolError(message)


def _json_data(tool: Tool, value: Any) -> Any:
    """A returned value as JSON data; what cannot be (a generator, a socket) is the tool's
    failure, told in words that name the tool."""
    try:
        return output_to_json(value)
    except TypeError as exc:
        raise _refused(tool, f"a value that is not JSON data: {exc}") from None


def _structured_text(tool: Tool, structured: Any, field: str | None) -> str:
    """The JSON text of a returned value, refusing what JSON cannot carry; `field` is where
    the value goes besides the text (`structuredContent`), named in the refusal."""
    try:
        return json_text(structured)
    except TypeError as exc:
        named = structured if field is None else {field: structured}
        raise _refused(tool, json_refusal(named, exc)) from None


def _spelled_out(tool: Tool, value: ToolResult) -> dict[str, Any]:
    """The CallToolResult a `ToolResult` spells out: its fields as they are, checked."""
    result: dict[str, Any] = {"resultType": "complete"}
    empty = isinstance(value.content, list | tuple) and not value.content
    content = [] if empty else to_content(value.content)
    if content is None:
        # Data that is not content would otherwise vanish from the result without a word.
        raise _refused(
            tool, "a ToolResult whose content is not content: give a str, bytes, a content "
            "helper (Text, Image, Audio, Blob, ResourceLink), a content block dict or a list "
            "of those; data belongs in ToolResult.structured"
        )
    result["content"] = content
    if value.structured is not None:
        structured = _json_data(tool, value.structured)
        if tool.signature.wrap_output:
            # The value of a non-object return type, sent as {"result": value} like a plain
            # return of it is, since that is the object the outputSchema describes.
            structured = {"result": structured}
        if tool.check_output is not None:
            tool.check_output(structured)
        result["structuredContent"] = structured
    elif tool.check_output is not None and not value.is_error:
        # A client holding the tool to its advertised outputSchema refuses a result without
        # structured content (the TypeScript SDK does): a broken promise, like content that
        # does not match the schema, and refused as that is.
        raise InternalError(
            f"tool {tool.name!r} has an outputSchema, so its ToolResult must carry structured "
            "content (ToolResult.structured), unless it reports an error (is_error=True)"
        )
    if value.is_error:
        result["isError"] = True
    if value.meta:
        result["_meta"] = dict(value.meta)
    problem = json_problem(result)
    if problem is not None:
        raise _refused(tool, problem)
    return result


def call_result(tool: Tool, value: Any) -> dict[str, Any]:
    """The CallToolResult for what a tool returned; raises ToolError for what cannot be sent."""
    sig = tool.signature
    if type(value) is str and sig.output_schema is None:  # text, the commonest: no more to ask
        return {"resultType": "complete", "content": [text_block(value)]}
    if isinstance(value, ToolResult):
        return _spelled_out(tool, value)
    if sig.output_schema is None:
        content = to_content(value)
        if content is not None:
            if (content and type(value) is not str
                    and not isinstance(value, ContentBlock | bytes | bytearray)):
                # Block dicts are the tool's own data: they may hold what JSON cannot carry.
                problem = json_problem({"content": content})
                if problem is not None:
                    raise _refused(tool, problem)
            return {"resultType": "complete", "content": content}
        structured = _json_data(tool, value)
        text = _structured_text(tool, structured, None)
        return {"resultType": "complete", "content": [text_block(text)]}
    structured = _json_data(tool, value)
    if sig.wrap_output:
        structured = {"result": structured}
    if tool.check_output is not None:
        tool.check_output(structured)
    return {
        "resultType": "complete",
        "content": [text_block(_structured_text(tool, structured, "structuredContent"))],
        "structuredContent": structured,
    }


def lookup(tools: Mapping[str, Tool], params: Mapping[str, Any]) -> Tool:
    name = params["name"]  # a string: the row's params check (guards.py) saw to it
    tool = tools.get(name)
    if tool is None:
        raise InvalidParamsError(f"Unknown tool: {name!r}", {"name": name})
    return tool


def arguments_of(tool: Tool, params: Mapping[str, Any]) -> dict[str, Any] | dict[str, Any]:
    """Validated keyword arguments, or an isError result the model can act on."""
    args = params.get("arguments")  # an object or null: the row's params check saw to it
    try:
        kwargs = tool.signature.validate(args)
    except ArgumentsError as exc:
        raise ToolError(f"Invalid arguments for tool {tool.name!r}: {exc}") from None
    if not tool.scans_arguments:
        return kwargs
    for key, value in kwargs.items():
        kind = type(value)
        if kind in _SCALARS:
            continue
        raw = args.get(key) if args is not None else None
        found = big_integer(value)
        place = found[0] if found is not None else _rounded(raw, value)
        if place is not None:
            raise ToolError(f"Invalid arguments for tool {tool.name!r}: {_out_of_range(key, place)}")
    return kwargs


_SCALARS = frozenset({str, int, float, bool, type(None)})
"""Argument types the check leaves nothing to look at in: a typed integer made from a double
past 64 bits is refused by the check itself (`schema.checkers.check_int`), and any other integer
came from the wire as one, so in range."""


def _faithful(raw: Any, value: int) -> bool:
    """Whether an integer argument is the number the client sent.

    The wire decodes an integer literal inside the 64-bit range as that integer and one
    outside it as the nearest double, which the argument check then takes as an integer: so
    an integer made from a double is the client's only strictly inside the range (-2**63 - 1
    arrives as the double -2**63).
    """
    if type(raw) is float:
        return -(2**63) < value < 2**64
    return value in JSON_INTEGERS


def _rounded(raw: Any, value: Any) -> str | None:
    """The place of the first integer in `value` (arguments after the check) that is not the
    number the client sent in `raw` (as decoded), walking both alike.

    Walked with a stack rather than by recursion: an argument may be nested as deep as the
    decoder allows (1024 levels), past Python's recursion limit. A place is kept as a chain
    of (parent, step) and spelled out only for the integer found."""
    stack: list[tuple[Any, Any, Any]] = [(raw, value, None)]
    while stack:
        sent, item, path = stack.pop()
        kind = type(item)
        if kind is int:
            if not _faithful(sent, item):
                return _spelled(path)
        elif kind is dict and type(sent) is dict:
            stack.extend(reversed([(sent.get(key), inner, (path, f".{key}"))
                                   for key, inner in item.items()]))
        elif isinstance(item, list | tuple) and isinstance(sent, list):
            stack.extend(reversed([(got, inner, (path, f"[{i}]"))
                                   for i, (got, inner) in enumerate(zip(sent, item, strict=False))]))
    return None


def _spelled(path: Any) -> str:
    steps: list[str] = []
    while path is not None:
        path, step = path
        steps.append(step)
    return "".join(reversed(steps))


def _out_of_range(key: str, place: str) -> str:
    """Why an integer argument is refused: taking it would give the tool a number the client
    never sent (the wire hands a literal past 64 bits over as the nearest double)."""
    where = f"{key}{'' if not place or place[0] in '.[' else '.'}{place}"
    return (
        f"arguments.{where}: an integer outside the 64-bit range a JSON integer can carry "
        "(-2**63 to 2**64-1); send it as a string"
    )


async def list_tools(params: dict[str, Any], ctx: Context) -> dict[str, Any]:
    require(ctx.server, "tools", Method.TOOLS_LIST)
    return tool_page(params, ctx)  # what this caller may see: scopes, `Server.add_tool_filter`


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


def tool_failure(name: str, exc: Exception, ctx: Context) -> dict[str, Any]:
    """The `isError` result of the tool `name` that raised `exc` (a `ToolError` or a
    `HandleError` with its own text, anything else with an error id, the traceback logged)."""
    if isinstance(exc, ToolError | HandleError):
        return error_result(str(exc) or f"tool {name!r} failed")
    text, _ = failure_text("tool", name, exc, expose=ctx.server.options.expose_errors)
    return error_result(text)


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
