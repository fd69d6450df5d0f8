"""The compiled checkers behind a derived schema: one closure per annotation, no schema
interpreter on the hot path.

`mcpkit.schema.compiler` turns type hints into a schema and, alongside, into the checker
closures defined here. A checker type-checks a value, coerces it into the annotated Python type
and words each problem with its JSON path (`mcpkit.schema.problems`); the per-call validators
built from them are in `mcpkit.schema.validators`.

Imports: the standard library and `mcpkit.schema.problems`.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Final

from mcpkit.schema.problems import describe_value, property_path

__all__ = [
    "Checker",
    "FieldPlan",
    "Row",
    "check_any",
    "check_bool",
    "check_fields",
    "check_float",
    "check_int",
    "check_none",
    "check_str",
    "make_array",
    "make_enum",
    "make_literal",
    "make_mapping",
    "make_object",
    "make_optional",
    "make_parsed",
    "make_pydantic",
    "make_pydantic_output",
    "make_tuple",
    "make_union",
    "rows_of",
]

Checker = Callable[[Any, str, list[str]], Any]
"""(value, path, problems) -> the coerced value; a failure appends to `problems` instead of
raising, so one call reports every problem at once."""

_MISSING: Final = object()


def _problem(problems: list[str], path: str, expected: str, value: Any) -> Any:
    problems.append(f"{path}: expected {expected}, got {describe_value(value)}")
    return value


# -- primitives ---------------------------------------------------------------------------------

_INT_SPAN = 2**63


def check_any(value: Any, path: str, problems: list[str]) -> Any:
    return value


def check_str(value: Any, path: str, problems: list[str]) -> Any:
    if isinstance(value, str):
        return value
    return _problem(problems, path, "string", value)


def check_int(value: Any, path: str, problems: list[str]) -> Any:
    # JSON Schema counts 3.0 as an integer, so a client may legitimately send it. The wire
    # decodes an integer literal past 64 bits as the nearest double: taking that as an integer
    # would hand the function a number the client never sent (-2**63 - 1 arrives as -2**63,
    # hence the strict bounds).
    if isinstance(value, float) and value.is_integer():
        if -_INT_SPAN < value < 2 * _INT_SPAN:
            return int(value)
        problems.append(f"{path}: an integer outside the 64-bit range a JSON integer can carry "
                        "(-2**63 to 2**64-1); send it as a string")
        return value
    if isinstance(value, int) and not isinstance(value, bool):
        return value
    return _problem(problems, path, "integer", value)


def check_float(value: Any, path: str, problems: list[str]) -> Any:
    if isinstance(value, float):
        return value
    if isinstance(value, int) and not isinstance(value, bool):
        try:
            return float(value)
        except OverflowError:
            problems.append(f"{path}: number {value} is too large")
            return value
    return _problem(problems, path, "number", value)


def check_bool(value: Any, path: str, problems: list[str]) -> Any:
    if isinstance(value, bool):
        return value
    return _problem(problems, path, "boolean", value)


def check_none(value: Any, path: str, problems: list[str]) -> Any:
    if value is None:
        return None
    return _problem(problems, path, "null", value)


# -- combinators --------------------------------------------------------------------------------


def make_optional(inner: Checker) -> Checker:
    def check(value: Any, path: str, problems: list[str]) -> Any:
        if value is None:
            return None
        return inner(value, path, problems)

    return check


def make_union(options: Sequence[tuple[str, Checker]]) -> Checker:
    """First option that accepts the value wins, so declaration order decides coercion."""
    names = " or ".join(name for name, _ in options)

    def check(value: Any, path: str, problems: list[str]) -> Any:
        for _, option in options:
            scratch: list[str] = []
            result = option(value, path, scratch)
            if not scratch:
                return result
        return _problem(problems, path, names, value)

    return check


def _literal_key(value: Any) -> tuple[type, Any]:
    # Keyed by type too, because True == 1 and a bool must not match an integer literal.
    return (type(value), value)


def make_literal(choices: Mapping[Any, Any]) -> Checker:
    """`choices` maps each allowed JSON value to what the function receives."""
    table = {_literal_key(wire): python for wire, python in choices.items()}
    shown = ", ".join(repr(wire) if isinstance(wire, str) else json.dumps(wire) for wire in choices)
    expected = f"one of {shown}" if len(choices) > 1 else shown

    def check(value: Any, path: str, problems: list[str]) -> Any:
        try:
            return table[_literal_key(value)]
        except (KeyError, TypeError):
            pass
        if isinstance(value, float) and value.is_integer() and (int, int(value)) in table:
            return table[(int, int(value))]
        return _problem(problems, path, expected, value)

    return check


def make_enum(cls: type[Any]) -> Checker:
    members = {member.value: member for member in cls}
    inner = make_literal(members)

    def check(value: Any, path: str, problems: list[str]) -> Any:
        if isinstance(value, cls):
            return value
        return inner(value, path, problems)

    return check


def make_parsed(cls: type, parse: Callable[[str], Any], expected: str) -> Checker:
    """Strings in a format (date-time, uuid...) become the annotated Python type."""

    def check(value: Any, path: str, problems: list[str]) -> Any:
        if isinstance(value, cls):
            return value
        if isinstance(value, str):
            try:
                return parse(value)
            except ValueError:
                pass
        return _problem(problems, path, expected, value)

    return check


def make_array(
    item: Checker,
    build: Callable[[list[Any]], Any],
    *,
    unique: bool,
    item_fast: frozenset[type] = frozenset(),
) -> Checker:
    identity = item is check_any

    def check(value: Any, path: str, problems: list[str]) -> Any:
        if not isinstance(value, (list, tuple)):
            return _problem(problems, path, "array", value)
        if identity or (item_fast and all(type(v) in item_fast for v in value)):
            items = list(value)
        else:
            items = [item(v, f"{path}[{i}]", problems) for i, v in enumerate(value)]
        if unique:
            try:
                duplicated = len(set(items)) != len(items)
            except TypeError:
                # Unhashable items cannot be built into a set; kept as a list (a set's JSON form,
                # checked on its way out), they are compared as JSON values instead.
                duplicated = build is not list or len({_json_key(i) for i in items}) != len(items)
            if duplicated:
                problems.append(f"{path}: items must be unique")
                return value
        return build(items)

    return check


def _json_key(value: Any) -> Any:
    """A hashable stand-in equal for equal JSON values (uniqueItems: 1 and 1.0 are one value,
    true and 1 are not, objects compare by content)."""
    if isinstance(value, bool):  # True == 1 in Python
        return ("boolean", value)
    if isinstance(value, Mapping):
        return ("object", frozenset((k, _json_key(v)) for k, v in value.items()))
    if isinstance(value, list | tuple):
        return ("array", tuple(_json_key(v) for v in value))
    return ("value", value)


def make_tuple(items: Sequence[Checker]) -> Checker:
    count = len(items)

    def check(value: Any, path: str, problems: list[str]) -> Any:
        if not isinstance(value, (list, tuple)):
            return _problem(problems, path, f"array of {count} items", value)
        if len(value) != count:
            problems.append(f"{path}: expected exactly {count} items, got {len(value)}")
            return value
        return tuple(
            checker(v, f"{path}[{i}]", problems)
            for i, (checker, v) in enumerate(zip(items, value, strict=True))
        )

    return check


def make_mapping(item: Checker) -> Checker:
    def check(value: Any, path: str, problems: list[str]) -> Any:
        if not isinstance(value, Mapping):
            return _problem(problems, path, "object", value)
        out: dict[str, Any] = {}
        for key, v in value.items():
            if not isinstance(key, str):
                problems.append(f"{path}: object keys must be strings, got {describe_value(key)}")
                continue
            out[key] = item(v, property_path(path, key), problems)
        return out

    return check


@dataclass(frozen=True, slots=True)
class FieldPlan:
    """One property of an object: how to find, check and (maybe) skip checking it."""

    name: str
    checker: Checker
    required: bool
    fast_types: frozenset[type] = frozenset()
    """Exact types accepted unchanged without calling `checker` (the primitive fast path)."""
    fill: Callable[[], Any] | None = None
    """Makes the value of an absent property whose default the function cannot supply itself
    (one given by pydantic's `Field(default=...)`); None leaves it out."""


Row = tuple[str, str, Checker, bool, frozenset[type], Callable[[], Any] | None]
"""A `FieldPlan` laid out for the loop in `check_fields`: name, path suffix, checker, required,
fast types, fill."""


def rows_of(fields: Iterable[FieldPlan]) -> tuple[Row, ...]:
    """The rows of `fields`, with each path suffix spelled once rather than on every call."""
    return tuple(
        (f.name, property_path("", f.name), f.checker, f.required, f.fast_types, f.fill)
        for f in fields
    )


def check_fields(
    value: Mapping[str, Any], path: str, problems: list[str], rows: tuple[Row, ...]
) -> dict[str, Any]:
    """The checked properties of an object (nested, or the arguments themselves)."""
    out: dict[str, Any] = {}
    for name, suffix, checker, required, fast, fill in rows:
        v = value.get(name, _MISSING)
        if v is _MISSING:
            if required:
                problems.append(f"{path}{suffix}: missing required property")
            elif fill is not None:
                out[name] = fill()
        elif type(v) in fast:
            out[name] = v
        else:
            out[name] = checker(v, path + suffix, problems)
    return out


def make_object(
    cls: type | None, fields: Sequence[FieldPlan], build: Callable[..., Any] | None
) -> Checker:
    """Check a nested object; `build(**values)` makes the dataclass, None keeps a dict."""
    rows = rows_of(fields)

    def check(value: Any, path: str, problems: list[str]) -> Any:
        if cls is not None and isinstance(value, cls) and build is not None:
            return value
        if not isinstance(value, Mapping):
            return _problem(problems, path, "object", value)
        before = len(problems)
        out = check_fields(value, path, problems, rows)
        if build is None or len(problems) != before:
            return out
        try:
            return build(**out)
        except (TypeError, ValueError) as exc:
            problems.append(f"{path}: {exc}")
            return value

    return check


def make_pydantic(cls: Any) -> Checker:
    """Pydantic validates its own models, with its own (lax) rules and messages."""

    def check(value: Any, path: str, problems: list[str]) -> Any:
        if isinstance(value, cls):
            return value
        try:
            return cls.model_validate(value)
        except Exception as exc:
            errors = getattr(exc, "errors", None)
            if not callable(errors):
                raise
            for error in errors():
                where = path
                for part in error.get("loc", ()):
                    where = (
                        f"{where}[{part}]"
                        if isinstance(part, int)
                        else property_path(where, str(part))
                    )
                problems.append(f"{where}: {error.get('msg', 'invalid value')}")
            return value

    return check


def _json_kind(value: Any) -> str:
    """A JSON value's kind as a schema's "type" sees it; an integer is also a number."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, int | float):
        return "number"
    if isinstance(value, str):
        return "string"
    if isinstance(value, Mapping):
        return "object"
    if isinstance(value, list | tuple):
        return "array"
    return type(value).__name__


def _same_kinds(sent: Any, given: Any, path: str, problems: list[str]) -> None:
    """Report where `given` is of another JSON kind than pydantic's own JSON form `sent`.

    Only places both hold are compared: a key pydantic fills with a default or drops as extra
    says nothing about the given value, and values of one kind may differ (normalised text, a
    set's order) without leaving the schema.
    """
    if _json_kind(sent) != _json_kind(given):
        problems.append(f"{path}: expected {describe_value(sent)}, got {describe_value(given)}")
    elif isinstance(sent, Mapping):
        for key, item in sent.items():
            if key in given:
                _same_kinds(item, given[key], property_path(path, key), problems)
    elif isinstance(sent, list | tuple):
        if len(sent) != len(given):
            problems.append(f"{path}: expected {len(sent)} items, got {len(given)}")
        else:
            for i, (item, other) in enumerate(zip(sent, given, strict=True)):
                _same_kinds(item, other, f"{path}[{i}]", problems)


def make_pydantic_output(cls: Any) -> Checker:
    """Check a model's JSON form, as a tool sends it, against the model.

    Pydantic's lax validation alone would let `"5"` stand for an integer field the advertised
    schema says is an integer, so the value pydantic makes of it is dumped again and each place
    must be of the kind pydantic itself would send. Computed fields are part of the JSON form
    but no input, so they are left out of the validation (a model that forbids extra keys would
    refuse its own dump otherwise); the serialization schema still requires them, as it may
    require other keys validation would fill in, so those are looked for first.
    """
    validate = make_pydantic(cls)
    computed = frozenset(getattr(cls, "model_computed_fields", None) or ())
    required = tuple(cls.model_json_schema(mode="serialization").get("required", ()))

    def check(value: Any, path: str, problems: list[str]) -> Any:
        given = value  # not always an object: a RootModel's JSON form is its root's
        if isinstance(value, Mapping):
            missing = [key for key in required if key not in value]
            if missing:
                problems.extend(f"{property_path(path, k)}: missing required property" for k in missing)
                return value
            if computed:
                given = {k: item for k, item in value.items() if k not in computed}
        before = len(problems)
        model = validate(given, path, problems)
        if len(problems) == before:
            _same_kinds(model.model_dump(mode="json", by_alias=True), value, path, problems)
        return value

    return check
