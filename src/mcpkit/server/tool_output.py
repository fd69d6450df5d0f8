"""The checks that hold a tool's structured content to the outputSchema it advertises (TOOL-12).

Built once when a tool is registered (`mcpkit.server.tools.build_tool`): a raw `output_schema`
is checked with jsonschema, a typed return annotation with the same compiled checkers that check
arguments. Either raises `InternalError` naming the tool, since a broken promise is the server's
fault, not the caller's.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable
from typing import Any

from mcpkit.errors import InternalError
from mcpkit.schema import Compiler, compile_output

__all__ = [
    "output_checker",
    "typed_output_checker",
]


def output_checker(tool_name: str, schema: dict[str, Any]) -> Callable[[Any], None]:
    from jsonschema import validators

    cls = validators.validator_for(schema)
    validator = cls(schema)

    def check(value: Any) -> None:
        error = next(iter(validator.iter_errors(value)), None)
        if error is not None:
            raise InternalError(
                f"tool {tool_name!r} returned structured content that does not match its "
                f"outputSchema: {error.message}"
            )

    return check


def typed_output_checker(
    tool_name: str, fn: Callable[..., Any], wrap: bool
) -> Callable[[Any], None]:
    """Hold a typed tool's structured content to the outputSchema derived from its return type.

    The advertised schema is a promise (TOOL-12): a `-> Sum` tool returning `{"sum": "x"}`, or
    `-> int` returning a string, must not send it. The return annotation is compiled once more
    into the same kind of checkers that check arguments (no schema interpreter, no jsonschema on
    the call path), in serialization mode, so they take the JSON form actually sent and accept
    whatever the server made of a value of the declared type.
    """
    annotation = inspect.signature(fn, eval_str=True).return_annotation
    node = Compiler(mode="serialization").node(annotation, f"tool {tool_name!r}: return annotation")
    validate = compile_output(node.checker, wrap=wrap, fast=node.fast)

    def check(value: Any) -> None:
        problems = validate(value)
        if problems:
            raise InternalError(
                f"tool {tool_name!r} returned structured content that does not match its "
                f"outputSchema: {'; '.join(problems)}"
            )

    return check
