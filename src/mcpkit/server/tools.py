"""Registered tools: their definitions and `tools/list`.

A tool's wire definition, its argument validator, its output conversion and the table of its
`x-mcp-header` parameters (which Streamable HTTP checks against the mirrored headers) are all
built once, when it is registered (`build_tool`); `tools/call` (`tool_calls.py`) then costs a
dict lookup, the compiled validation (`tool_arguments.py`), the call itself and the making of
its result (`tool_results.py`), however many tools there are.
"""

from __future__ import annotations

import inspect
import re
import time
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Final, TypedDict, Unpack

from mcpkit.protocol.mcp_headers import header_params
from mcpkit.schema import Signature, derive_signature
from mcpkit.server.content import ContentBlock, ToolResult
from mcpkit.server.context import Context
from mcpkit.server.dependencies import Depends, check_dependencies
from mcpkit.server.listing import require
from mcpkit.server.scopes import scopes_of
from mcpkit.server.tool_filters import tool_page
from mcpkit.server.tool_output import output_checker, typed_output_checker
from mcpkit.types.methods import Method

__all__ = [
    "CORE_TOOL_OPTIONS",
    "Tool",
    "ToolOptions",
    "build_tool",
    "list_tools",
]

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


async def list_tools(params: dict[str, Any], ctx: Context) -> dict[str, Any]:
    require(ctx.server, "tools", Method.TOOLS_LIST)
    return tool_page(params, ctx)  # what this caller may see: scopes, `Server.add_tool_filter`
