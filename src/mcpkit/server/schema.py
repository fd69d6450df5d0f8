"""The one place where type hints become JSON Schema (2020-12), and tool arguments get checked.

A tool, prompt or resource-template function is read once, at registration: its parameters
become an input schema and, alongside it, compiled checkers (in `mcpkit.server.validation`), so
each call is checked without interpreting a schema; its return annotation becomes an output
schema. A user's raw JSON Schema is kept verbatim and checked with a validator built once.

Everything that can be wrong with a function's annotations is reported here, at registration, as
a `TypeError` naming the function, the parameter and the type, never on the first call.

Imports: the standard library, `mcpkit.types`, `mcpkit.errors` and `mcpkit.server.validation`
only. Pydantic is never imported (a model is recognised only when pydantic is already loaded),
and `jsonschema` only when a raw schema is registered.
"""

from __future__ import annotations

import collections.abc as cabc
import copy
import dataclasses
import enum
import functools
import inspect
import itertools
import re
import sys
import types
import typing
import uuid
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from datetime import date, datetime, time
from decimal import Decimal
from pathlib import PurePath
from typing import Any, Final, Literal, NotRequired, Required, Union, get_args, get_origin

from mcpkit.server import validation as v
from mcpkit.server.validation import ArgumentsError, ArgumentsValidator, Checker, FieldPlan

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
class Param:
    """Metadata for `Annotated[X, Param(...)]`; `header` mirrors the argument into the HTTP
    header `Mcp-Param-{header}` (the `x-mcp-header` annotation), for top-level string, integer
    or boolean parameters only."""

    description: str | None = None
    title: str | None = None
    header: str | None = None


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
    _validator: ArgumentsValidator = field(repr=False, compare=False)

    def validate(self, arguments: Mapping[str, Any] | None) -> dict[str, Any]:
        """The keyword arguments to call the function with, coerced to the annotated types.

        Raises `ArgumentsError` listing every problem. Arguments the function does not take are
        dropped, except into a `**kwargs` parameter.
        """
        return self._validator(arguments)


# -- annotations --------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class _Meta:
    description: str | None = None
    title: str | None = None
    header: str | None = None


def _split_annotated(annotation: Any) -> tuple[Any, _Meta]:
    """Strip `Annotated`; read a description from a str, a `Param` or a pydantic-like Field."""
    if get_origin(annotation) is not typing.Annotated:
        return annotation, _Meta()
    description = title = header = None
    for item in annotation.__metadata__:
        if isinstance(item, str):
            description = description or item
        elif isinstance(item, Param):
            description = item.description or description
            title = item.title or title
            header = item.header or header
        else:
            found = getattr(item, "description", None)
            if isinstance(found, str):
                description = found
            found = getattr(item, "title", None)
            if isinstance(found, str):
                title = found
    return annotation.__origin__, _Meta(description, title, header)


def _is_union(annotation: Any) -> bool:
    return get_origin(annotation) in (Union, types.UnionType)


def _strip_optional(annotation: Any) -> tuple[Any, bool]:
    if not _is_union(annotation):
        return annotation, annotation is None or annotation is _NONE
    rest = [arg for arg in get_args(annotation) if arg is not _NONE]
    if len(rest) == len(get_args(annotation)):
        return annotation, False
    return (rest[0] if len(rest) == 1 else Union[tuple(rest)]), True  # noqa: UP007


def _is_pydantic_model(annotation: Any) -> bool:
    return (
        "pydantic" in sys.modules
        and isinstance(annotation, type)
        and hasattr(annotation, "model_json_schema")
        and hasattr(annotation, "model_validate")
    )


def _is_object_annotation(annotation: Any) -> bool:
    base = _split_annotated(annotation)[0]
    if isinstance(base, type) and (
        dataclasses.is_dataclass(base) or typing.is_typeddict(base) or _is_pydantic_model(base)
    ):
        return True
    return (get_origin(base) or base) in _MAPPINGS


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
    return "object" if "$ref" in schema else "a valid value"


def _refers_to(node: Any, ref: str) -> bool:
    if isinstance(node, dict):
        return node.get("$ref") == ref or any(_refers_to(item, ref) for item in node.values())
    if isinstance(node, list):
        return any(_refers_to(item, ref) for item in node)
    return False


def _rename_refs(node: Any, renames: Mapping[str, str]) -> Any:
    if isinstance(node, dict):
        out = {key: _rename_refs(item, renames) for key, item in node.items()}
        ref = out.get("$ref")
        if isinstance(ref, str) and ref.startswith("#/$defs/") and ref[8:] in renames:
            out["$ref"] = "#/$defs/" + renames[ref[8:]]
        return out
    if isinstance(node, list):
        return [_rename_refs(item, renames) for item in node]
    return node


def _dataclass_doc(cls: type) -> str | None:
    doc = cls.__doc__
    if not doc or doc.startswith(f"{cls.__name__}("):  # the text dataclasses makes up
        return None
    return inspect.cleandoc(doc)


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
_MAPPINGS: Final = frozenset({dict, cabc.Mapping, cabc.MutableMapping})
_SUPPORTED: Final = (
    "supported: str, int, float, bool, None, Any, Optional/unions, Literal, Enum, datetime, "
    "date, time, UUID, list/tuple/set/Sequence, dict[str, X], dataclasses, TypedDict, "
    "pydantic models"
)


_Field = tuple[str, Any, Any, bool, str | None]


def _fields_of(cls: type, hints: Mapping[str, Any]) -> list[_Field]:
    """(name, annotation, default, required, description) of a dataclass or TypedDict."""
    if not dataclasses.is_dataclass(cls):
        fields: list[_Field] = []
        for key, hint in hints.items():
            origin = get_origin(hint)
            if origin is NotRequired or origin is Required:  # unreliable in __required_keys__
                fields.append((key, get_args(hint)[0], _EMPTY, origin is Required, None))
            else:
                fields.append(
                    (key, hint, _EMPTY, key in getattr(cls, "__required_keys__", ()), None)
                )
        return fields
    out: list[_Field] = []
    for f in dataclasses.fields(cls):
        if not f.init:
            continue
        missing = dataclasses.MISSING
        described = f.metadata.get("description") if f.metadata else None
        out.append(
            (
                f.name,
                hints.get(f.name, Any),
                _EMPTY if f.default is missing else f.default,
                f.default is missing and f.default_factory is missing,
                described if isinstance(described, str) else None,
            )
        )
    return out


@dataclass(frozen=True, slots=True)
class _Node:
    schema: dict[str, Any]
    checker: Checker
    fast: frozenset[type] = frozenset()


class _Compiler:
    """Turns annotations into (schema, checker) pairs that share one `$defs` table."""

    def __init__(self, *, mode: Literal["validation", "serialization"]) -> None:
        self.mode = mode
        self.defs: dict[str, dict[str, Any]] = {}
        self._names: dict[type, str] = {}
        self._cells: dict[type, list[Checker]] = {}

    def _alloc(self, wanted: str) -> str:
        name, n = wanted, 2
        while name in self.defs:
            name, n = f"{wanted}{n}", n + 1
        self.defs[name] = {}
        return name

    def node(self, annotation: Any, where: str) -> _Node:
        base, meta = _split_annotated(annotation)
        if meta.header is not None:
            raise TypeError(f"{where}: Param(header=...) is only allowed on top-level parameters")
        node = self._node(base, where)
        if meta.description is None and meta.title is None:
            return node
        schema = dict(node.schema)
        if meta.title is not None:
            schema["title"] = meta.title
        if meta.description is not None:
            schema["description"] = meta.description
        return _Node(schema, node.checker, node.fast)

    def _node(self, ann: Any, where: str) -> _Node:
        if ann is Any or ann is object:
            return _Node({}, v.check_any, frozenset())
        primitive = _PRIMITIVES.get(ann) if isinstance(ann, type) or ann is None else None
        if primitive is not None:
            kind, checker, fast = primitive
            return _Node({"type": kind}, checker, fast)
        if isinstance(ann, type) and issubclass(ann, enum.Enum):
            return self._enum(ann, where)
        if ann in _FORMATS:
            fmt, parse, expected = _FORMATS[ann]
            return _Node({"type": "string", "format": fmt}, v.make_parsed(ann, parse, expected))
        origin, args = get_origin(ann), get_args(ann)
        if origin is Literal:
            return self._literal(args, where)
        if _is_union(ann):
            return self._union(args, where)
        if origin is tuple or ann in (tuple, typing.Tuple):  # noqa: UP006
            return self._tuple(ann, args, where)
        if (origin or ann) in _ARRAYS:
            item = self.node(args[0], where) if args else _Node({}, v.check_any)
            schema: dict[str, Any] = {"type": "array", "items": item.schema}
            build = _ARRAYS[origin or ann]
            if build is not list:
                schema["uniqueItems"] = True
            return _Node(
                schema,
                v.make_array(item.checker, build, unique=build is not list, item_fast=item.fast),
            )
        if (origin or ann) in _MAPPINGS:
            if args and args[0] is not str:
                raise TypeError(f"{where}: mapping keys must be str, got {args[0]!r}")
            value = self.node(args[1], where) if args else _Node({}, v.check_any)
            return _Node(
                {"type": "object", "additionalProperties": value.schema},
                v.make_mapping(value.checker),
            )
        if isinstance(ann, type) and (
            dataclasses.is_dataclass(ann) or typing.is_typeddict(ann) or _is_pydantic_model(ann)
        ):
            return self._class(ann, where)
        raise TypeError(f"{where} has unsupported type annotation {ann!r} ({_SUPPORTED})")

    def _enum(self, cls: type[enum.Enum], where: str) -> _Node:
        values = [member.value for member in cls]
        try:
            schema = _enum_schema(values)
        except TypeError:
            raise TypeError(
                f"{where}: enum {cls.__name__} has values that are not JSON scalars"
            ) from None
        return _Node(schema, v.make_enum(cls))

    def _literal(self, args: tuple[Any, ...], where: str) -> _Node:
        choices = {(a.value if isinstance(a, enum.Enum) else a): a for a in args}
        try:
            schema = _enum_schema(list(choices))
        except TypeError:
            raise TypeError(f"{where}: Literal values must be str, int, bool or None") from None
        return _Node(schema, v.make_literal(choices))

    def _union(self, args: tuple[Any, ...], where: str) -> _Node:
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
            return _Node(schema, v.make_optional(inner.checker), inner.fast | {_NONE})
        nodes = [self.node(a, where) for a in args]
        options = [(_expected(n.schema), n.checker) for n in nodes]
        fast = frozenset().union(*(n.fast for n in nodes))
        return _Node({"anyOf": [n.schema for n in nodes]}, v.make_union(options), fast)

    def _tuple(self, ann: Any, args: tuple[Any, ...], where: str) -> _Node:
        if ann in (tuple, typing.Tuple) or (len(args) == 2 and args[1] is Ellipsis):  # noqa: UP006
            item = self.node(args[0], where) if args else _Node({}, v.check_any)
            return _Node(
                {"type": "array", "items": item.schema},
                v.make_array(item.checker, tuple, unique=False, item_fast=item.fast),
            )
        nodes = [self.node(a, where) for a in args]
        schema: dict[str, Any] = {"type": "array", "minItems": len(nodes), "maxItems": len(nodes)}
        if nodes:
            schema["prefixItems"] = [n.schema for n in nodes]
            schema["items"] = False
        return _Node(schema, v.make_tuple([n.checker for n in nodes]))

    def _class(self, cls: type, where: str) -> _Node:
        if cls in self._names:
            ref = {"$ref": f"#/$defs/{self._names[cls]}"}
            pending = self._cells[cls]
            if pending:
                return _Node(ref, pending[0])

            def later(value: Any, path: str, problems: list[str]) -> Any:  # a recursive type
                return pending[0](value, path, problems)

            return _Node(ref, later)
        if _is_pydantic_model(cls):
            return self._pydantic(cls)
        name = self._alloc(cls.__name__)
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
            _dataclass_doc(cls)
            if dataclasses.is_dataclass(cls)
            else (inspect.cleandoc(cls.__doc__) if cls.__doc__ else None)
        )
        if doc:
            schema["description"] = doc
        is_dataclass = dataclasses.is_dataclass(cls)
        properties: dict[str, Any] = {}
        plans: list[FieldPlan] = []
        for key, ann, default, is_required, described in _fields_of(cls, hints):
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
        build: Callable[..., Any] | None = cls if is_dataclass else None
        required = [p.name for p in plans if p.required]
        schema["properties"] = properties
        if required:
            schema["required"] = required
        self.defs[name] = schema
        cell.append(v.make_object(cls if build is not None else None, plans, build))
        return _Node({"$ref": f"#/$defs/{name}"}, cell[0])

    def _pydantic(self, cls: Any) -> _Node:
        raw = cls.model_json_schema(mode=self.mode)
        theirs: dict[str, Any] = raw.pop("$defs", {})
        renames: dict[str, str] = {}
        fresh: list[str] = []
        for old, schema in theirs.items():
            if old in self.defs and self.defs[old] == schema:
                renames[old] = old
            else:
                renames[old] = self._alloc(old)
                fresh.append(old)
        for old in fresh:
            self.defs[renames[old]] = _rename_refs(theirs[old], renames)
        raw = _rename_refs(raw, renames)
        if raw.keys() == {"$ref"}:  # a recursive model is itself one of its $defs
            name = raw["$ref"][8:]
        elif cls.__name__ in self.defs and self.defs[cls.__name__] == raw:
            name = cls.__name__
        else:
            name = self._alloc(cls.__name__)
            self.defs[name] = raw
        self._names[cls] = name
        checker = v.make_pydantic(cls)
        self._cells[cls] = [checker]
        return _Node({"$ref": f"#/$defs/{name}"}, checker)

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
        """One property's schema (with description, default, header) and its checker."""
        base, meta = _split_annotated(annotation)
        inner, optional = _strip_optional(base)
        if optional and get_origin(inner) is typing.Annotated:  # Optional[Annotated[X, ...]]
            inner, inner_meta = _split_annotated(inner)
            base = typing.Optional[inner]  # noqa: UP045
            meta = _Meta(
                meta.description or inner_meta.description,
                meta.title or inner_meta.title,
                meta.header or inner_meta.header,
            )
        if default is None and not _strip_optional(base)[1] and base is not Any:
            base = typing.Optional[base]  # noqa: UP045 -- `= None` means "may be null"
        if meta.header is not None:
            if not allow_header:
                raise TypeError(
                    f"{where}: Param(header=...) is only allowed on top-level parameters"
                )
            inner, optional = _strip_optional(base)
            node = self.node(inner, where)
            if node.schema.get("type") not in ("string", "integer", "boolean"):
                raise TypeError(
                    f"{where}: Param(header={meta.header!r}) needs a str, int or bool parameter, "
                    f"not {inner!r}"
                )
            if optional:  # absent and null both mean "no header", so the schema stays one type
                node = _Node(node.schema, v.make_optional(node.checker), node.fast | {_NONE})
        else:
            node = self.node(base, where)
        schema = dict(node.schema)
        if meta.title is not None:
            schema["title"] = meta.title
        description = meta.description or fallback
        if description:
            schema["description"] = description
        if default is not _EMPTY:
            try:
                wire = output_to_json(default)
            except TypeError:
                wire = _EMPTY
            if wire is not _EMPTY and v.is_finite_json(wire):
                schema["default"] = copy.deepcopy(wire)
        if meta.header is not None:
            schema["x-mcp-header"] = meta.header
        return schema, FieldPlan(name, node.checker, required, node.fast)


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


def _docstring(fn: Callable[..., Any]) -> str | None:
    target: Any = fn
    while isinstance(target, functools.partial):
        target = target.func
    doc = inspect.getdoc(target)
    return doc or None


_GOOGLE_HEADER = re.compile(r"(Args|Arguments|Parameters|Params|Keyword Args)\s*:\s*\Z")
_GOOGLE_ENTRY = re.compile(r"\*{0,2}([A-Za-z_]\w*)\s*(?:\([^)]*\))?\s*:\s*(.*)\Z")
_NUMPY_ENTRY = re.compile(r"([A-Za-z_]\w*(?:\s*,\s*[A-Za-z_]\w*)*)\s*(?::.*)?\Z")


def _doc_param_descriptions(doc: str | None) -> dict[str, str]:
    """Parameter descriptions from a Google-style "Args:" or NumPy-style "Parameters" section."""
    if not doc:
        return {}
    lines = doc.splitlines()
    found: dict[str, list[str]] = {}
    i = 0
    while i < len(lines):
        text = lines[i].strip()
        indent = len(lines[i]) - len(lines[i].lstrip())
        numpy = (
            text in ("Parameters", "Arguments", "Args")
            and i + 1 < len(lines)
            and set(lines[i + 1].strip()) == {"-"}
        )
        if not (numpy or _GOOGLE_HEADER.match(text)):
            i += 1
            continue
        i += 2 if numpy else 1
        entry_indent: int | None = indent if numpy else None
        current: list[str] | None = None
        while i < len(lines):
            line = lines[i]
            if not line.strip():
                i += 1
                continue
            here = len(line) - len(line.lstrip())
            next_is_rule = i + 1 < len(lines) and set(lines[i + 1].strip()) == {"-"}
            if here < (entry_indent if entry_indent is not None else indent + 1) or (
                numpy and next_is_rule
            ):
                break
            if entry_indent is None:
                entry_indent = here
            match = (_NUMPY_ENTRY if numpy else _GOOGLE_ENTRY).match(line.strip())
            if here == entry_indent and match:
                names = [n.strip() for n in match.group(1).split(",")]
                current = []
                for n in names:
                    found[n] = current
                if not numpy and match.group(2):
                    current.append(match.group(2))
            elif current is not None and here > entry_indent:
                current.append(line.strip())
            elif here <= indent and not numpy:
                break
            i += 1
    return {name: " ".join(parts) for name, parts in found.items() if parts}


def _injectable(annotation: Any, injectables: tuple[type, ...]) -> type | None:
    if not injectables or annotation is _EMPTY:
        return None
    base = _strip_optional(_split_annotated(annotation)[0])[0]
    origin = get_origin(base) or base
    if isinstance(origin, type):
        for candidate in injectables:
            if issubclass(origin, candidate):
                return candidate
    return None


def _split_parameters(
    sig: inspect.Signature, injectables: tuple[type, ...], name: str
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
        kind = _injectable(p.annotation, injectables)
        if kind is not None:
            injected[p.name] = kind
        else:
            params.append(p)
    return injected, params, pass_extra


def _parameter_info(p: inspect.Parameter, documented: Mapping[str, str]) -> ParameterInfo:
    meta = _split_annotated(p.annotation)[1] if p.annotation is not _EMPTY else _Meta()
    return ParameterInfo(
        name=p.name,
        description=meta.description or documented.get(p.name),
        required=p.default is _EMPTY,
        default=None if p.default is _EMPTY else p.default,
        title=meta.title,
    )


def describe_parameters(
    fn: Callable[..., Any], *, injectables: tuple[type, ...] = ()
) -> tuple[ParameterInfo, ...]:
    """Name, description, requiredness and default of each parameter, in declaration order."""
    name = _name_of(fn)
    sig = _inspect(fn, name)
    documented = _doc_param_descriptions(_docstring(fn))
    params = _split_parameters(sig, injectables, name)[1]
    return tuple(_parameter_info(p, documented) for p in params)


def _mentions(annotation: Any, kinds: tuple[type, ...]) -> bool:
    try:
        if isinstance(annotation, type) and issubclass(annotation, kinds):
            return True
    except TypeError:  # a generic alias posing as a class
        pass
    return any(_mentions(arg, kinds) for arg in get_args(annotation))


def _with_defs(schema: dict[str, Any], defs: dict[str, dict[str, Any]]) -> dict[str, Any]:
    if defs:
        schema["$defs"] = defs
    return schema


def _derive_output(
    sig: inspect.Signature,
    name: str,
    structured: bool | None,
    output_schema: Mapping[str, Any] | None,
    passthrough: tuple[type, ...],
) -> tuple[dict[str, Any] | None, bool]:
    if structured is False:
        return None, False
    if output_schema is not None:
        v.prepare_raw_schema(output_schema, f"{name}: output schema")
        return copy.deepcopy(dict(output_schema)), False
    forced = structured is True
    ret = sig.return_annotation
    base = _split_annotated(ret)[0]
    if ret is _EMPTY or base is None or base is _NONE:
        if forced:
            raise TypeError(f"{name}: structured output needs a return annotation other than None")
        return None, False
    if passthrough and _mentions(base, passthrough):
        return None, False
    if not forced and base in (str, Any, object):
        return None, False
    compiler = _Compiler(mode="serialization")
    try:
        node = compiler.node(ret, f"{name}: return annotation")
    except TypeError:
        if forced:
            raise
        return None, False
    defs = compiler.defs
    if not _is_object_annotation(base):
        wrapped = {"type": "object", "properties": {"result": node.schema}, "required": ["result"]}
        return _with_defs(wrapped, defs), True
    ref = node.schema.get("$ref")
    if not isinstance(ref, str):
        return _with_defs(dict(node.schema), defs), False
    root = dict(defs[ref[8:]])
    if not _refers_to(root, ref) and not any(
        _refers_to(d, ref) for n, d in defs.items() if n != ref[8:]
    ):
        del defs[ref[8:]]
    return _with_defs(root, defs), False


def derive_signature(
    fn: Callable[..., Any],
    *,
    injectables: tuple[type, ...] = (),
    input_schema: Mapping[str, Any] | None = None,
    output_schema: Mapping[str, Any] | None = None,
    structured_output: bool | None = None,
    passthrough_types: tuple[type, ...] = (),
) -> Signature:
    """Read a function once: its schemas, its injected parameters and its argument checker.

    `input_schema`/`output_schema` replace the derived ones verbatim (checked for dialect and
    remote `$ref` here). A return annotation of `str`, of a `passthrough_types` class (content
    blocks), `None` or none at all is unstructured; objects become the output schema as they
    are; anything else is wrapped as `{"result": value}`. `structured_output` forces either way.
    """
    name = _name_of(fn)
    sig = _inspect(fn, name)
    description = _docstring(fn)
    documented = _doc_param_descriptions(description)
    injected, params, pass_extra = _split_parameters(sig, injectables, name)
    parameters = tuple(_parameter_info(p, documented) for p in params)
    if input_schema is not None:
        schema = copy.deepcopy(dict(input_schema))
        validator = v.compile_raw(
            schema,
            f"{name}: input schema",
            parameter_names=frozenset(p.name for p in params),
            pass_extra=pass_extra,
        )
    else:
        compiler = _Compiler(mode="validation")
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
            _with_defs(schema, compiler.defs)
        validator = v.compile_arguments(plans, closed=closed, pass_extra=pass_extra)
    out_schema, wrap = _derive_output(
        sig, name, structured_output, output_schema, passthrough_types
    )
    return Signature(schema, out_schema, wrap, injected, description, parameters, validator)


# -- results ------------------------------------------------------------------------------------

_SCALARS: Final = frozenset({str, int, float, bool, _NONE})


def _json_key(key: Any) -> str:
    if isinstance(key, str):
        return str(key)
    converted = output_to_json(key)
    return converted if isinstance(converted, str) else str(converted)


def output_to_json(value: Any) -> Any:
    """Make a tool's return value JSON data; plain JSON comes back as the very same object."""
    kind = type(value)
    if kind in _SCALARS:
        return value
    if kind is dict:
        changed: dict[str, Any] | None = None
        for i, (key, item) in enumerate(value.items()):
            if type(item) in _SCALARS and type(key) is str:
                if changed is not None:
                    changed[key] = item
                continue
            new = output_to_json(item)
            new_key = key if type(key) is str else _json_key(key)
            if changed is None:
                if new is item and new_key is key:
                    continue
                changed = dict(itertools.islice(value.items(), i))
            changed[new_key] = new
        return value if changed is None else changed
    if kind is list:
        copied: list[Any] | None = None
        for i, item in enumerate(value):
            if type(item) in _SCALARS:
                if copied is not None:
                    copied.append(item)
                continue
            new = output_to_json(item)
            if copied is None:
                if new is item:
                    continue
                copied = value[:i]
            copied.append(new)
        return value if copied is None else copied
    if isinstance(value, enum.Enum):
        return output_to_json(value.value)
    if isinstance(value, (datetime, date, time)):
        return value.isoformat()
    if isinstance(value, (uuid.UUID, Decimal, PurePath)):
        return str(value)
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return {f.name: output_to_json(getattr(value, f.name)) for f in dataclasses.fields(value)}
    dump = getattr(value, "model_dump", None)
    if callable(dump) and not isinstance(value, type):
        return dump(mode="json", by_alias=True)
    if isinstance(value, Mapping):
        return {_json_key(key): output_to_json(item) for key, item in value.items()}
    if isinstance(value, (list, tuple, set, frozenset)):
        return [output_to_json(item) for item in value]
    for scalar in (bool, str, int, float):
        if isinstance(value, scalar):
            return scalar(value)
    raise TypeError(
        f"cannot convert {kind.__name__} to JSON; return JSON data, a dataclass or a model"
    )
