"""The one place where a function becomes JSON Schema (2020-12) and an argument checker.

A tool, prompt or resource-template function is read once, at registration: its parameters
become an input schema and, alongside it, compiled checkers, so each call is checked without
interpreting a schema; its return annotation becomes an output schema. A user's raw JSON Schema
is kept verbatim, checked once and applied with a validator built once.

Everything that can be wrong with a function's annotations is reported at registration, as a
`TypeError` naming the function, the parameter and the type, never on the first call.

This module is the public face; the work is split by subject, each in its own module of
`mcpkit.schema`: `hints` and `compiler` (one annotation -> schema and checker), `defs` (the
shared `$defs` table), `checkers` and `validators` (the compiled per-call checks), `raw` and
`bounds` (a user's raw JSON Schema, its bounds and its validator), `docstrings` (descriptions
from docstrings) and `values` (return values as JSON data).

Imports: the standard library and the `mcpkit.schema` modules named above only. Importing it
loads neither pydantic nor `jsonschema`: a pydantic model is recognised only when pydantic is
already loaded (a model in a signature means the user's module imported pydantic, so it is
there), and `jsonschema` is imported only when a raw schema is registered, input or output,
whether or not the output is structured; without the `schema` extra, that registration raises
`MissingExtraError`, before any call.
"""

from __future__ import annotations

import functools
import inspect
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Annotated, Any, Final, get_args, get_origin

from mcpkit.schema.checkers import FieldPlan
from mcpkit.schema.compiler import Compiler
from mcpkit.schema.docstrings import docstring_of, parameter_descriptions
from mcpkit.schema.hints import (
    Param,
    default_of,
    field_default,
    is_object_annotation,
    split_annotated,
    strip_optional,
)
from mcpkit.schema.problems import ArgumentsError
from mcpkit.schema.raw import (
    Clock,
    compile_raw,
    copied_schema,
    prepare_raw_schema,
    require_jsonschema,
)
from mcpkit.schema.validators import ArgumentsValidator, compile_arguments
from mcpkit.schema.values import output_to_json

__all__ = [
    "ArgumentsError",
    "Param",
    "ParameterInfo",
    "Signature",
    "derive_signature",
    "describe_parameters",
    "output_to_json",
]

_NONE: Final = type(None)
_EMPTY = inspect.Parameter.empty


@dataclass(frozen=True, slots=True)
class ParameterInfo:
    """What a client is told about one parameter; also the source of prompt arguments."""

    name: str
    description: str | None = None
    required: bool = True
    default: Any = None
    """The Python default; meaningful only when `required` is False."""
    title: str | None = None


@dataclass(frozen=True, slots=True)
class Signature:
    """Everything the server needs to list and call one function, derived once."""

    input_schema: dict[str, Any]
    output_schema: dict[str, Any] | None
    wrap_output: bool
    injected: dict[str, type]
    description: str | None
    parameters: tuple[ParameterInfo, ...]
    validate: ArgumentsValidator = field(repr=False, compare=False)
    """`validate(arguments)`: the keyword arguments to call the function with, coerced to the
    annotated types. Raises `ArgumentsError` listing every problem. Arguments the function does
    not take are dropped, except into a `**kwargs` parameter. (The compiled check itself, not a
    method around it: every tool call makes it.)"""
    provided: dict[str, Any] = field(default_factory=dict)
    """Parameters the server fills and the client never sees, by name: each one's marker (an
    instance of a `markers` type, in its `Annotated` metadata or as its default), which says
    how (`mcpkit.server.dependencies.Depends`). Left out of the input schema and the checks."""


# -- functions ----------------------------------------------------------------------------------


def _name_of(fn: Callable[..., Any]) -> str:
    target = fn.func if isinstance(fn, functools.partial) else fn
    name = getattr(target, "__qualname__", None) or getattr(target, "__name__", None)
    return f"function {name or type(target).__name__!r}"


def _inspect(fn: Callable[..., Any], name: str) -> inspect.Signature:
    try:
        return inspect.signature(fn, eval_str=True)
    except (NameError, SyntaxError, TypeError, AttributeError) as exc:
        raise TypeError(f"{name}: cannot evaluate the type annotations: {exc}") from None


def _injectable(annotation: Any, injectables: tuple[type, ...]) -> type | None:
    if not injectables or annotation is _EMPTY:
        return None
    base = strip_optional(split_annotated(annotation)[0])[0]
    origin = get_origin(base) or base
    if isinstance(origin, type):
        for candidate in injectables:
            if issubclass(origin, candidate):
                return candidate
    return None


def _marker(p: inspect.Parameter, markers: tuple[type, ...]) -> Any:
    """The marker saying the server provides `p` (in its `Annotated` metadata, or its default,
    as `db: Pool = Depends(get_pool)`), or None."""
    if not markers:
        return None
    if isinstance(p.default, markers):
        return p.default
    if p.annotation is not _EMPTY and get_origin(p.annotation) is Annotated:
        for item in p.annotation.__metadata__:
            if isinstance(item, markers):
                return item
    return None


def _split_parameters(
    sig: inspect.Signature, injectables: tuple[type, ...], name: str,
    markers: tuple[type, ...] = (), provided: dict[str, Any] | None = None,
) -> tuple[dict[str, type], list[inspect.Parameter], bool]:
    injected: dict[str, type] = {}
    params: list[inspect.Parameter] = []
    pass_extra = False
    for p in sig.parameters.values():
        if p.kind is p.VAR_KEYWORD:
            pass_extra = True
            continue
        if p.kind is p.VAR_POSITIONAL:
            continue
        if p.kind is p.POSITIONAL_ONLY:
            raise TypeError(
                f"{name}: parameter {p.name!r} is positional-only; arguments are passed by name"
            )
        marker = _marker(p, markers)
        if marker is not None:
            if provided is not None:
                provided[p.name] = marker
            continue
        kind = _injectable(p.annotation, injectables)
        if kind is not None:
            injected[p.name] = kind
        else:
            params.append(p)
    return injected, params, pass_extra


def _parameter_info(p: inspect.Parameter, documented: Mapping[str, str]) -> ParameterInfo:
    annotation, default = field_default(
        Any if p.annotation is _EMPTY else p.annotation, p.default)
    meta = split_annotated(annotation)[1]
    default = default_of(default, meta)
    return ParameterInfo(
        name=p.name,
        description=meta.description or documented.get(p.name),
        required=default is _EMPTY and meta.factory is None,
        default=None if default is _EMPTY else default,
        title=meta.title,
    )


def describe_parameters(
    fn: Callable[..., Any], *, injectables: tuple[type, ...] = (),
    markers: tuple[type, ...] = (),
) -> tuple[ParameterInfo, ...]:
    """Name, description, requiredness and default of each parameter, in declaration order."""
    name = _name_of(fn)
    sig = _inspect(fn, name)
    documented = parameter_descriptions(docstring_of(fn))
    params = _split_parameters(sig, injectables, name, markers)[1]
    return tuple(_parameter_info(p, documented) for p in params)


def _mentions(annotation: Any, kinds: tuple[type, ...]) -> bool:
    try:
        if isinstance(annotation, type) and issubclass(annotation, kinds):
            return True
    except TypeError:  # a generic alias posing as a class
        pass
    return any(_mentions(arg, kinds) for arg in get_args(annotation))


def _derive_output(
    sig: inspect.Signature,
    name: str,
    structured: bool | None,
    output_schema: Mapping[str, Any] | None,
    passthrough: tuple[type, ...],
) -> tuple[dict[str, Any] | None, bool]:
    if output_schema is not None:
        # Even unstructured, a raw output schema is held to its tool's results by jsonschema.
        require_jsonschema(f"{name}: output schema")
    if structured is False:
        return None, False
    if output_schema is not None:
        copied = copied_schema(output_schema, f"{name}: output schema")
        prepare_raw_schema(copied, f"{name}: output schema")
        return copied, False
    forced = structured is True
    ret = sig.return_annotation
    base = split_annotated(ret)[0]
    if ret is _EMPTY or base is None or base is _NONE:
        if forced:
            raise TypeError(f"{name}: structured output needs a return annotation other than None")
        return None, False
    if passthrough and _mentions(base, passthrough):
        # Content blocks or a result spelled out (`-> ToolResult`): what the function returns
        # is the result itself, so its class's own fields are no output to describe.
        if forced:
            raise TypeError(
                f"{name}: structured output needs a schema, and a return annotation of content "
                "or a ToolResult describes none; pass output_schema= to publish one"
            )
        return None, False
    if not forced and strip_optional(base)[0] in (str, Any, object):
        # Text (or nothing) is content, like a plain `str`; `Any` promises no shape at all.
        return None, False
    compiler = Compiler(mode="serialization")
    try:
        node = compiler.node(ret, f"{name}: return annotation")
    except TypeError:
        if forced:
            raise
        return None, False
    defs = compiler.defs
    if not is_object_annotation(base):
        wrapped = {"type": "object", "properties": {"result": node.schema}, "required": ["result"]}
        return defs.attach(wrapped), True
    ref = node.schema.get("$ref")
    if not isinstance(ref, str):
        return defs.attach(dict(node.schema)), False
    return defs.attach(defs.hoist(ref)), False


def derive_signature(
    fn: Callable[..., Any],
    *,
    injectables: tuple[type, ...] = (),
    markers: tuple[type, ...] = (),
    input_schema: Mapping[str, Any] | None = None,
    output_schema: Mapping[str, Any] | None = None,
    structured_output: bool | None = None,
    passthrough_types: tuple[type, ...] = (),
    clock: Clock | None = None,
) -> Signature:
    """Read a function once: its schemas, its injected parameters and its argument checker.

    `input_schema`/`output_schema` replace the derived ones verbatim (checked here for dialect,
    `$ref`s and cost; see `mcpkit.schema.raw`). A return annotation of `str` (or `str | None`),
    `Any`, one that mentions a `passthrough_types` class (content blocks, a spelled-out result),
    `None` or none at all is unstructured; objects become the output schema as they are;
    anything else is wrapped as `{"result": value}`. `structured_output` forces either way, but
    a passthrough annotation cannot be forced: it describes no schema (`output_schema` does).
    `clock` times each call checked against a raw `input_schema` (its `MAX_SECONDS` budget);
    without one, only its steps are counted. A parameter marked by an instance of a `markers`
    type is the server's to fill (`Signature.provided`) and no part of either.
    """
    name = _name_of(fn)
    sig = _inspect(fn, name)
    description = docstring_of(fn)
    documented = parameter_descriptions(description)
    provided: dict[str, Any] = {}
    injected, params, pass_extra = _split_parameters(sig, injectables, name, markers, provided)
    parameters = tuple(_parameter_info(p, documented) for p in params)
    if input_schema is not None:
        schema = copied_schema(input_schema, f"{name}: input schema")
        validator = compile_raw(
            schema,
            f"{name}: input schema",
            parameter_names=frozenset(p.name for p in params),
            pass_extra=pass_extra,
            clock=clock,
        )
    else:
        compiler = Compiler(mode="validation")
        properties: dict[str, Any] = {}
        plans: list[FieldPlan] = []
        for p in params:
            prop, plan = compiler.property(
                p.name,
                Any if p.annotation is _EMPTY else p.annotation,
                default=p.default,
                required=p.default is _EMPTY,
                where=f"{name}: parameter {p.name!r}",
                fallback=documented.get(p.name),
                allow_header=True,
            )
            properties[p.name] = prop
            plans.append(plan)
        closed = not params and not pass_extra
        if closed:
            schema = {"type": "object", "additionalProperties": False}
        else:
            schema = {"type": "object", "properties": properties}
            required = [plan.name for plan in plans if plan.required]
            if required:
                schema["required"] = required
            compiler.defs.attach(schema)
        validator = compile_arguments(plans, closed=closed, pass_extra=pass_extra)
    out_schema, wrap = _derive_output(
        sig, name, structured_output, output_schema, passthrough_types
    )
    return Signature(schema, out_schema, wrap, injected, description, parameters, validator,
                     provided)
