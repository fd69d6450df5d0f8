"""What a tool's call answers: the CallToolResult made from what its function returned, and
the `isError` result of a tool that failed.

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

import logging
from typing import TYPE_CHECKING, Any

from mcpkit.errors import InternalError, ToolError
from mcpkit.schema import output_to_json
from mcpkit.server.content import (
    ContentBlock,
    ToolResult,
    json_problem,
    json_refusal,
    json_text,
    text_block,
    to_content,
)
from mcpkit.server.failures import failure_text
from mcpkit.server.handles import HandleError

if TYPE_CHECKING:
    from mcpkit.server.context import Context
    from mcpkit.server.tools import Tool

__all__ = [
    "call_result",
    "error_result",
    "tool_failure",
]

log = logging.getLogger("mcpkit.server")


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

def tool_failure(name: str, exc: Exception, ctx: Context) -> dict[str, Any]:
    """The `isError` result of the tool `name` that raised `exc` (a `ToolError` or a
    `HandleError` with its own text, anything else with an error id, the traceback logged)."""
    if isinstance(exc, ToolError | HandleError):
        return error_result(str(exc) or f"tool {name!r} failed")
    text, _ = failure_text("tool", name, exc, expose=ctx.server.options.expose_errors)
    return error_result(text)
