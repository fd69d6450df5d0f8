"""The per-call validators of a derived schema: a tool's or prompt's arguments, and a typed
tool's structured content (`compile_output`, TOOL-12).

Both run the compiled checkers (`mcpkit.schema.checkers`) over the whole value and raise or
return every problem at once. A user's raw JSON Schema is applied elsewhere
(`mcpkit.schema.raw`), with the same error type and paths (`mcpkit.schema.problems`).

Imports: the standard library and `mcpkit.schema.checkers`, `mcpkit.schema.problems`.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from types import MappingProxyType
from typing import Any, Final

from mcpkit.schema.checkers import Checker, FieldPlan, check_fields, make_object, rows_of
from mcpkit.schema.problems import TOO_DEEP, ArgumentsError, describe_value, property_path

__all__ = [
    "ArgumentsValidator",
    "OutputValidator",
    "compile_arguments",
    "compile_output",
]

ArgumentsValidator = Callable[[Mapping[str, Any] | None], dict[str, Any]]

OutputValidator = Callable[[Any], list[str]]
"""(structured content) -> its problems, each with its JSON path; empty when it fits."""

_EMPTY: Final[Mapping[str, Any]] = MappingProxyType({})


def compile_output(
    checker: Checker, *, wrap: bool, fast: frozenset[type] = frozenset()
) -> OutputValidator:
    """Build the per-call check of a typed tool's structured content (TOOL-12).

    `checker` comes from the return annotation compiled in serialization mode, so it takes the
    JSON form the server sends (dates as strings, dataclasses as dicts) and builds nothing.
    `wrap` checks the `{"result": value}` object a non-object return type is sent as; `fast`
    lists the value types it accepts unchanged, so a plain `-> int` costs one type lookup.
    """
    root = make_object(None, [FieldPlan("result", checker, True, fast)], None) if wrap else checker

    def validate(value: Any) -> list[str]:
        problems: list[str] = []
        try:
            root(value, "structuredContent", problems)
        except RecursionError:  # a recursive type met a value nested deeper than the stack
            return ["structuredContent: nested too deeply to check"]
        return problems

    return validate


def compile_arguments(
    fields: Sequence[FieldPlan], *, closed: bool, pass_extra: bool
) -> ArgumentsValidator:
    """Build the per-call validator for a derived schema.

    `closed` reports unknown properties (the schema said additionalProperties false);
    `pass_extra` hands them to a `**kwargs` function; otherwise they are dropped.
    """
    rows = rows_of(fields)
    names = frozenset(f.name for f in fields)

    def not_an_object(arguments: Any) -> ArgumentsError:
        return ArgumentsError([f"arguments: expected object, got {describe_value(arguments)}"])

    def extras(arguments: Mapping[str, Any]) -> list[str]:
        return [k for k in arguments if k not in names]

    if not rows and closed:

        def validate_empty(arguments: Mapping[str, Any] | None) -> dict[str, Any]:
            if arguments is None:
                return {}
            if type(arguments) is not dict and not isinstance(arguments, Mapping):
                raise not_an_object(arguments)
            if not arguments:
                return {}
            raise ArgumentsError(
                [
                    f"{property_path('arguments', k)}: unexpected property (this takes no arguments)"
                    for k in arguments
                ]
            )

        return validate_empty

    def validate(arguments: Mapping[str, Any] | None) -> dict[str, Any]:
        if arguments is None:
            arguments = _EMPTY
        elif type(arguments) is not dict and not isinstance(arguments, Mapping):
            raise not_an_object(arguments)
        problems: list[str] = []
        try:
            out = check_fields(arguments, "arguments", problems, rows)
        except RecursionError:  # a recursive type met a value nested deeper than the stack
            raise ArgumentsError([TOO_DEEP]) from None
        if closed:
            problems.extend(
                f"{property_path('arguments', k)}: unexpected property" for k in extras(arguments)
            )
        if problems:
            raise ArgumentsError(problems)
        if pass_extra:
            for key in extras(arguments):
                out[key] = arguments[key]
        return out

    return validate
