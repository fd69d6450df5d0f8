"""A method's params check: its row's params `TypedDict`, compiled once into checker closures.

The method table (`mcpkit.types.methods`) says what each request's params look like as a
`TypedDict` (`mcpkit.types.params`); `params_check` hands the server one function per row that
refuses params of any other shape with one -32602 naming the method and every wrong place
("tools/call 'add': params.arguments: expected object, got array"). It is compiled by the same
`Compiler` as a tool's arguments, so the words are those a model already reads, and it runs on
every request: a field whose value is an object of anything (`arguments`, `inputResponses`)
is taken as it is once it is an object, rather than walked key by key.

Only what a params check needs is checked here; the check returns nothing and leaves the
params as they came (the handler reads them, the same dict, after). `_meta` is not in the
shapes: `mcpkit.protocol.envelope.read_meta` checks it first.

Imports: the standard library, `mcpkit.errors`, `mcpkit.types` and `mcpkit.schema`.
"""

from __future__ import annotations

import dataclasses
import functools
import typing
from collections.abc import Callable, Mapping
from typing import Any, Final

from mcpkit.errors import InvalidParamsError
from mcpkit.schema.checkers import FieldPlan, check_fields, rows_of
from mcpkit.schema.compiler import Compiler
from mcpkit.schema.hints import fields_of
from mcpkit.schema.problems import property_path
from mcpkit.types.methods import MethodInfo

__all__ = [
    "ParamsCheck",
    "compile_params",
    "params_check",
]

ParamsCheck = Callable[[Mapping[str, Any]], None]
"""Raises InvalidParamsError when the params do not have the method's shape."""

_ANY_OBJECT: Final = {"type": "object", "additionalProperties": {}}
_ABSENT: Final = object()


def _takes_any_object(schema: Mapping[str, Any]) -> bool:
    """The schema of `dict[str, Any]` (or of it or null): any object passes as it is."""
    schema = {k: v for k, v in schema.items() if k != "description"}
    if schema == _ANY_OBJECT:
        return True
    options = schema.get("anyOf")
    return isinstance(options, list) and _ANY_OBJECT in options and all(
        o == _ANY_OBJECT or o == {"type": "null"} for o in options)


def compile_params(method: str, shape: type, target: str | None = None) -> ParamsCheck:
    """The check of `method`'s params against `shape`, a `TypedDict`; TypeError when the
    server is built (never on a request) for a shape the compiler cannot describe. `target`:
    the params field naming what the request is for (a tool's `name`), quoted after the
    method in a refusal when it is a string."""
    if not typing.is_typeddict(shape):
        raise TypeError(f"{method}: a params shape is a TypedDict, not {shape!r}")
    compiler = Compiler(mode="validation")
    hints = typing.get_type_hints(shape, include_extras=True)
    plans: list[FieldPlan] = []
    words: list[tuple[str, str]] = []  # (the field's path, what it holds)
    fields = sorted(fields_of(shape, hints), key=lambda f: not f[3])  # the required first
    for key, annotation, default, required, described in fields:
        schema, plan = compiler.property(
            key, annotation, default=default, required=required,
            where=f"{method} params: key {key!r}", fallback=described, allow_header=False,
        )
        if _takes_any_object(schema):
            plan = dataclasses.replace(plan, fast_types=plan.fast_types | {dict})
        plans.append(plan)
        if "description" in schema:
            words.append((property_path("params", key), schema["description"]))
    rows = rows_of(plans)
    quick = tuple((plan.name, plan.required, plan.fast_types) for plan in plans)

    def check(params: Mapping[str, Any]) -> None:
        # The hot path: every field absent (and optional) or of a type taken as it is, so no
        # checker runs and nothing is built; anything else goes to the checkers, which decide.
        for name, required, fast in quick:
            value = params.get(name, _ABSENT)
            if value is _ABSENT:
                if required:
                    break
            elif type(value) not in fast:
                break
        else:
            return
        problems: list[str] = []
        check_fields(params, "params", problems, rows)
        if problems:
            named = params.get(target) if target is not None else None
            where = f"{method} {named!r}" if type(named) is str else method
            raise InvalidParamsError(f"{where}: {'; '.join(map(said, problems))}")

    def said(problem: str) -> str:
        for path, holds in words:
            if problem.startswith(path + ":"):
                return f"{problem} ({holds})"
            if problem.startswith(path) and problem[len(path)] in ".[":
                return f"{problem} ({path.removeprefix('params.')}: {holds})"
        return problem

    return check


@functools.cache
def params_check(info: MethodInfo) -> ParamsCheck | None:
    """The check of a row's params, compiled the first time a server routes the row (and then
    shared by every server); None for a row without a params shape, or with a shape of no
    fields (`server/discover`: nothing but `_meta`)."""
    if info.params is None or not typing.get_type_hints(info.params):
        return None
    return compile_params(info.name, info.params, info.mcp_name)
