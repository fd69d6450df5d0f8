"""One type annotation at a time: its JSON Schema (2020-12) and, alongside, its checker.

`Compiler.node` turns an annotation into a schema fragment and the compiled checker (from
`mcpkit.schema.checkers`) that checks and coerces a value of that shape, so a call never
interprets a schema. Nested classes go into one shared `$defs` table (`mcpkit.schema.defs`).
Everything that cannot be described is a `TypeError` naming the function, the parameter and the
type, raised at registration. What the annotation says besides its type (`Annotated` metadata,
`Optional`, a class's fields) is read by `mcpkit.schema.hints`.

Imports: the standard library and `mcpkit.schema` (checkers, defs, hints, limits, values) only.
Pydantic is never imported: a model is recognised only when pydantic is already loaded.
"""

from __future__ import annotations

import collections.abc as cabc
import copy
import dataclasses
import enum
import inspect
import typing
import uuid
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from datetime import date, datetime, time
from typing import Any, Final, Literal, get_args, get_origin

from mcpkit.schema import checkers as v
from mcpkit.schema.checkers import Checker, FieldPlan
from mcpkit.schema.defs import Defs, ref_to
from mcpkit.schema.hints import (
    MAPPINGS,
    Meta,
    dataclass_doc,
    default_of,
    field_default,
    fields_of,
    is_pydantic_model,
    is_union,
    split_annotated,
    strip_optional,
)
from mcpkit.schema.limits import NO_DEFAULT, apply_limits
from mcpkit.schema.values import is_finite_json, output_to_json

__all__ = [
    "Compiler",
    "Node",
]

_NONE: Final = type(None)
_EMPTY = inspect.Parameter.empty


def _json_type(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, int):
        return "integer"
    if isinstance(value, float):
        return "number"
    if isinstance(value, str):
        return "string"
    raise TypeError(type(value).__name__)


def _enum_schema(values: list[Any]) -> dict[str, Any]:
    kinds = {_json_type(value) for value in values}
    schema: dict[str, Any] = {"type": kinds.pop()} if len(kinds) == 1 else {}
    if len(values) == 1:
        schema["const"] = values[0]
    else:
        schema["enum"] = values
    return schema


def _expected(schema: Mapping[str, Any]) -> str:
    kind = schema.get("type")
    if isinstance(kind, str):
        return kind
    if isinstance(kind, list):
        return " or ".join(map(str, kind))
    ref = schema.get("$ref")
    if isinstance(ref, str):  # a class of the shared `$defs`: its name says which object
        return f"{ref.rsplit('/', 1)[-1]} object"
    return "a valid value"



_PRIMITIVES: Final[dict[Any, tuple[str, Checker, frozenset[type]]]] = {
    str: ("string", v.check_str, frozenset({str})),
    int: ("integer", v.check_int, frozenset({int})),
    float: ("number", v.check_float, frozenset({float})),
    bool: ("boolean", v.check_bool, frozenset({bool})),
    _NONE: ("null", v.check_none, frozenset({_NONE})),
    None: ("null", v.check_none, frozenset({_NONE})),
}
_FORMATS: Final[dict[type, tuple[str, Callable[[str], Any], str]]] = {
    datetime: ("date-time", datetime.fromisoformat, "date-time string (ISO 8601)"),
    date: ("date", date.fromisoformat, "date string (YYYY-MM-DD)"),
    time: ("time", time.fromisoformat, "time string (HH:MM[:SS])"),
    uuid.UUID: ("uuid", uuid.UUID, "UUID string"),
}
_ARRAYS: Final[dict[Any, Callable[[list[Any]], Any]]] = {
    list: list,
    cabc.Sequence: list,
    cabc.MutableSequence: list,
    set: set,
    cabc.Set: set,
    cabc.MutableSet: set,
    frozenset: frozenset,
}
_SUPPORTED: Final = (
    "supported: str, int, float, bool, None, Any, Optional/unions, Literal, Enum, datetime, "
    "date, time, UUID, list/tuple/set/Sequence, dict[str, X], dataclasses, TypedDict, "
    "pydantic models"
)


@dataclass(frozen=True, slots=True)
class Node:
    """An annotation's schema fragment and checker; `fast` lists the exact types the checker
    would return unchanged, so a caller may skip calling it for them."""

    schema: dict[str, Any]
    checker: Checker
    fast: frozenset[type] = frozenset()


class Compiler:
    """Turns annotations into (schema, checker) pairs that share one `$defs` table.

    `mode="validation"` describes arguments, and its checkers coerce them into the annotated
    Python types; `mode="serialization"` describes a return value, and its checkers take the
    value's JSON form (what `output_to_json` made of it) and only report what breaks the schema.
    """

    def __init__(self, *, mode: Literal["validation", "serialization"]) -> None:
        self.mode = mode
        self.defs = Defs()
        self._names: dict[type, str] = {}
        self._cells: dict[type, list[Checker]] = {}

    def node(self, annotation: Any, where: str) -> Node:
        base, meta = split_annotated(annotation)
        if meta.header is not None:
            raise TypeError(f"{where}: Param(header=...) is only allowed on top-level parameters")
        if meta.default is not NO_DEFAULT or meta.factory is not None:
            raise TypeError(f"{where}: a Field default means something only for a parameter or "
                            "a field; move it there")
        node = self._limited(self._node(base, where), meta, where)
        if meta.description is None and meta.title is None and not meta.keywords:
            return node
        schema = dict(node.schema)
        if meta.title is not None:
            schema["title"] = meta.title
        if meta.description is not None:
            schema["description"] = meta.description
        schema.update(meta.keywords)
        return Node(schema, node.checker, node.fast)

    @staticmethod
    def _limited(node: Node, meta: Meta, where: str) -> Node:
        """`node` held to the limits its metadata sets, in its schema and its checker (which
        then runs for every value: no fast path skips it)."""
        if meta.problem is not None:
            raise TypeError(f"{where}: {meta.problem}")
        if not meta.limits:
            return node
        schema, checker = apply_limits(node.schema, node.checker, list(meta.limits), where)
        return Node(schema, checker)

    def _node(self, ann: Any, where: str) -> Node:
        if ann is Any or ann is object:
            return Node({}, v.check_any, frozenset())
        primitive = _PRIMITIVES.get(ann) if isinstance(ann, type) or ann is None else None
        if primitive is not None:
            kind, checker, fast = primitive
            return Node({"type": kind}, checker, fast)
        if isinstance(ann, type) and issubclass(ann, enum.Enum):
            return self._enum(ann, where)
        if ann in _FORMATS:
            fmt, parse, expected = _FORMATS[ann]
            return Node({"type": "string", "format": fmt}, v.make_parsed(ann, parse, expected))
        origin, args = get_origin(ann), get_args(ann)
        if origin is Literal:
            return self._literal(args, where)
        if is_union(ann):
            return self._union(args, where)
        if origin is tuple or ann in (tuple, typing.Tuple):  # noqa: UP006
            return self._tuple(ann, args, where)
        if (origin or ann) in _ARRAYS:
            item = self.node(args[0], where) if args else Node({}, v.check_any)
            schema: dict[str, Any] = {"type": "array", "items": item.schema}
            build = _ARRAYS[origin or ann]
            unique = build is not list
            if unique:
                schema["uniqueItems"] = True
            if self.mode == "serialization":
                build = list  # a set's JSON form holds objects as dicts, which no set can hold
            return Node(
                schema,
                v.make_array(item.checker, build, unique=unique, item_fast=item.fast),
            )
        if (origin or ann) in MAPPINGS:
            if args and args[0] is not str:
                raise TypeError(f"{where}: mapping keys must be str, got {args[0]!r}")
            value = self.node(args[1], where) if args else Node({}, v.check_any)
            return Node(
                {"type": "object", "additionalProperties": value.schema},
                v.make_mapping(value.checker),
            )
        if isinstance(ann, type) and (
            dataclasses.is_dataclass(ann) or typing.is_typeddict(ann) or is_pydantic_model(ann)
        ):
            return self._class(ann, where)
        raise TypeError(f"{where} has unsupported type annotation {ann!r} ({_SUPPORTED})")

    def _enum(self, cls: type[enum.Enum], where: str) -> Node:
        values = [member.value for member in cls]
        try:
            schema = _enum_schema(values)
        except TypeError:
            raise TypeError(
                f"{where}: enum {cls.__name__} has values that are not JSON scalars"
            ) from None
        return Node(schema, v.make_enum(cls))

    def _literal(self, args: tuple[Any, ...], where: str) -> Node:
        choices = {(a.value if isinstance(a, enum.Enum) else a): a for a in args}
        try:
            schema = _enum_schema(list(choices))
        except TypeError:
            raise TypeError(f"{where}: Literal values must be str, int, bool or None") from None
        return Node(schema, v.make_literal(choices))

    def _union(self, args: tuple[Any, ...], where: str) -> Node:
        rest = [a for a in args if a is not _NONE]
        if len(rest) == 1:
            inner = self.node(rest[0], where)
            simple = inner.schema.keys() <= {"type", "format"} and isinstance(
                inner.schema.get("type"), str
            )
            if simple:
                schema = {**inner.schema, "type": [inner.schema["type"], "null"]}
            else:
                schema = {"anyOf": [inner.schema, {"type": "null"}]}
            return Node(schema, v.make_optional(inner.checker), inner.fast | {_NONE})
        nodes = [self.node(a, where) for a in args]
        options = [(_expected(n.schema), n.checker) for n in nodes]
        fast = frozenset().union(*(n.fast for n in nodes))
        return Node({"anyOf": [n.schema for n in nodes]}, v.make_union(options), fast)

    def _tuple(self, ann: Any, args: tuple[Any, ...], where: str) -> Node:
        if ann in (tuple, typing.Tuple) or (len(args) == 2 and args[1] is Ellipsis):  # noqa: UP006
            item = self.node(args[0], where) if args else Node({}, v.check_any)
            return Node(
                {"type": "array", "items": item.schema},
                v.make_array(item.checker, tuple, unique=False, item_fast=item.fast),
            )
        nodes = [self.node(a, where) for a in args]
        schema: dict[str, Any] = {"type": "array", "minItems": len(nodes), "maxItems": len(nodes)}
        if nodes:
            schema["prefixItems"] = [n.schema for n in nodes]
            schema["items"] = False
        return Node(schema, v.make_tuple([n.checker for n in nodes]))

    def _class(self, cls: type, where: str) -> Node:
        if cls in self._names:
            ref = ref_to(self._names[cls])
            pending = self._cells[cls]
            if pending:
                return Node(ref, pending[0])

            def later(value: Any, path: str, problems: list[str]) -> Any:  # a recursive type
                return pending[0](value, path, problems)

            return Node(ref, later)
        if is_pydantic_model(cls):
            return self._pydantic(cls)
        name = self.defs.alloc(cls.__name__)
        self._names[cls] = name
        cell: list[Checker] = []
        self._cells[cls] = cell
        inner = f"{where} (in {cls.__name__})"
        try:
            hints = typing.get_type_hints(cls, include_extras=True)
        except Exception as exc:
            raise TypeError(f"{inner}: cannot evaluate the type annotations: {exc}") from None
        schema: dict[str, Any] = {"type": "object"}
        doc = (
            dataclass_doc(cls)
            if dataclasses.is_dataclass(cls)
            else (inspect.cleandoc(cls.__doc__) if cls.__doc__ else None)
        )
        if doc:
            schema["description"] = doc
        is_dataclass = dataclasses.is_dataclass(cls)
        properties: dict[str, Any] = {}
        plans: list[FieldPlan] = []
        for key, ann, default, is_required, described in fields_of(cls, hints):
            prop, plan = self.property(
                key,
                ann,
                default=default,
                required=is_required,
                where=f"{inner}: {'field' if is_dataclass else 'key'} {key!r}",
                fallback=described,
                allow_header=False,
            )
            properties[key] = prop
            plans.append(plan)
        # In serialization mode the checker takes the JSON form a tool's result is sent as: it
        # checks the dict and builds no instance (building would run __post_init__ on output and
        # could not supply InitVar fields, refusing values the class itself produced).
        build: Callable[..., Any] | None = (
            cls if is_dataclass and self.mode == "validation" else None
        )
        required = [p.name for p in plans if p.required]
        schema["properties"] = properties
        if required:
            schema["required"] = required
        self.defs.table[name] = schema
        cell.append(v.make_object(cls if build is not None else None, plans, build))
        return Node(ref_to(name), cell[0])

    def _pydantic(self, cls: Any) -> Node:
        name = self.defs.add_model(cls.__name__, cls.model_json_schema(mode=self.mode))
        self._names[cls] = name
        checker = (
            v.make_pydantic(cls) if self.mode == "validation" else v.make_pydantic_output(cls)
        )
        self._cells[cls] = [checker]
        return Node(ref_to(name), checker)

    def property(
        self,
        name: str,
        annotation: Any,
        *,
        default: Any,
        required: bool,
        where: str,
        fallback: str | None,
        allow_header: bool,
    ) -> tuple[dict[str, Any], FieldPlan]:
        """One property's schema (with description, default, header) and its checker; a
        default its metadata gives makes it optional, filled in when absent."""
        annotation, default = field_default(annotation, default)
        base, meta = split_annotated(annotation)
        inner, optional = strip_optional(base)
        if optional and get_origin(inner) is typing.Annotated:  # Optional[Annotated[X, ...]]
            inner, inner_meta = split_annotated(inner)
            base = typing.Optional[inner]  # noqa: UP045
            meta = meta.merged(inner_meta)
        fill: Callable[[], Any] | None = None
        if default is _EMPTY and (meta.factory is not None or meta.default is not NO_DEFAULT):
            default = default_of(default, meta)
            fill = meta.factory or _copies(default)
            required = False
        if default is None and not strip_optional(base)[1] and base is not Any:
            base = typing.Optional[base]  # noqa: UP045 -- `= None` means "may be null"
        if meta.header is not None:
            if not allow_header:
                raise TypeError(
                    f"{where}: Param(header=...) is only allowed on top-level parameters"
                )
            inner, optional = strip_optional(base)
            node = self.node(inner, where)
            if node.schema.get("type") not in ("string", "integer", "boolean"):
                raise TypeError(
                    f"{where}: Param(header={meta.header!r}) needs a str, int or bool parameter, "
                    f"not {inner!r}"
                )
            if optional:  # absent and null both mean "no header", so the schema stays one type
                node = Node(node.schema, v.make_optional(node.checker), node.fast | {_NONE})
        else:
            node = self.node(base, where)
        node = self._limited(node, meta, where)
        schema = dict(node.schema)
        if meta.title is not None:
            schema["title"] = meta.title
        description = meta.description or fallback
        if description:
            schema["description"] = description
        schema.update(meta.keywords)
        if default is not _EMPTY:
            try:
                wire = output_to_json(default)
            except TypeError:
                wire = _EMPTY
            if wire is not _EMPTY and is_finite_json(wire):
                schema["default"] = copy.deepcopy(wire)
        if meta.header is not None:
            schema["x-mcp-header"] = meta.header
        return schema, FieldPlan(name, node.checker, required, node.fast, fill)


def _copies(value: Any) -> Callable[[], Any]:
    """Each call's own copy of a default (a list default is never shared between calls)."""
    if value is None or isinstance(value, str | int | float | bool | tuple | frozenset):
        return lambda: value
    return lambda: copy.deepcopy(value)
