"""Form-mode elicitation: the restricted form schema (ELIC-5), no secrets in forms (ELIC-7),
and reading the answers a client sends back.

A form is given either as field name -> Python type (`{"startsAt": datetime}`; the types
become JSON Schema in `mcpkit.schema.functions`, the one place that does so, and answers come
back as those types) or as a JSON Schema object kept verbatim. Either way it is checked at
the call site against what a client can render: a flat object of string, number, integer,
boolean, single- and multi-select properties. A string field whose name says it holds a
password, token, API key or card number is refused with a pointer to URL mode. Checked forms
are cached, so asking the same question on every round costs a dict lookup.

Imports: `mcpkit.schema.problems`, and `mcpkit.schema.functions` only when a form is built from
types.
"""

from __future__ import annotations

import inspect
import keyword
import re
import types
import typing
from collections.abc import Callable, Mapping
from datetime import date, datetime
from typing import Any, Final

import orjson

from mcpkit.schema.problems import json_type

__all__ = [
    "Form",
    "check_form_schema",
    "form_of",
    "looks_secret",
]

_ROOT_KEYS: Final = frozenset({"$schema", "type", "properties", "required", "title", "description"})
_COMMON: Final = frozenset({"type", "title", "description", "default"})
_STRING: Final = _COMMON | {"minLength", "maxLength", "format"}
_STRING_ENUM: Final = _COMMON | {"enum", "enumNames"}
_STRING_ONE_OF: Final = _COMMON | {"oneOf"}
_NUMBER: Final = _COMMON | {"minimum", "maximum"}
_ARRAY: Final = _COMMON | {"items", "minItems", "maxItems"}
_FORMATS: Final = ("email", "uri", "date", "date-time")
_SECRET: Final = re.compile(
    r"pass(word|wd|phrase|code)|secret|token|api_?key|access_?key|private_?key|credential"
    r"|(^|_)pin(_|$)|cvv|cvc|card_?number|iban"
)
_MAX_CACHED: Final = 512

Validate = Callable[[Mapping[str, Any]], dict[str, Any]]


class Form:
    """A checked form: its wire schema and how to read an accepted answer's content."""

    __slots__ = ("_validate", "schema")

    def __init__(self, schema: dict[str, Any], validate: Validate) -> None:
        self.schema = schema
        self._validate = validate

    def read(self, content: Mapping[str, Any]) -> dict[str, Any]:
        """The content, checked (and converted to the form's Python types); ValueError lists
        each problem."""
        return self._validate(content)


_cache: dict[Any, Form] = {}


def form_of(spec: Mapping[str, Any] | None, where: str) -> Form:
    """The checked form for `spec` (field name -> type, or a JSON Schema object)."""
    if spec is None:
        spec = {}
    if not isinstance(spec, Mapping):
        raise TypeError(
            f"{where}: an elicitation form is a mapping of field name to type, or a JSON "
            f"Schema object; got {type(spec).__name__}"
        )
    raw = spec.get("type") == "object"
    key: Any
    try:
        key = ("schema", orjson.dumps(spec, option=orjson.OPT_SORT_KEYS)) if raw else (
            "types", tuple(spec.items()))
        hash(key)
    except TypeError:
        key = None
    found = _cache.get(key) if key is not None else None
    if found is not None:
        return found
    form = _from_schema(dict(spec), where) if raw else _from_types(spec, where)
    if key is not None:
        if len(_cache) >= _MAX_CACHED:
            _cache.clear()
        _cache[key] = form
    return form


def looks_secret(name: str) -> bool:
    """Whether a field name (or title) says the field holds a secret."""
    words = re.sub(r"([a-z0-9])([A-Z])", r"\1_\2", name).lower()
    return _SECRET.search(re.sub(r"[^a-z0-9]+", "_", words)) is not None


def check_form_schema(schema: Any, where: str) -> None:
    """Raise TypeError unless `schema` is a form a client can render (ELIC-5, ELIC-7)."""
    if not isinstance(schema, dict) or schema.get("type") != "object":
        raise TypeError(f'{where}: an elicitation form schema must be {{"type": "object", ...}}')
    extra = set(schema) - _ROOT_KEYS
    if extra:
        raise TypeError(
            f"{where}: elicitation forms allow only {', '.join(sorted(_ROOT_KEYS))} at the top; "
            f"remove {', '.join(sorted(extra))}"
        )
    properties = schema.get("properties")
    if not isinstance(properties, dict):
        raise TypeError(f"{where}: an elicitation form needs a \"properties\" object")
    required = schema.get("required", [])
    if not isinstance(required, list) or not all(isinstance(r, str) for r in required):
        raise TypeError(f"{where}: \"required\" must be a list of field names")
    unknown = [r for r in required if r not in properties]
    if unknown:
        raise TypeError(f"{where}: required fields {unknown} are not in the form's properties")
    for name, prop in properties.items():
        _check_property(name, prop, f"{where}: form field {name!r}")


def _check_property(name: str, prop: Any, where: str) -> None:
    if not isinstance(prop, dict):
        raise TypeError(f"{where} must be a schema object")
    kind = prop.get("type")
    if kind == "string":
        if "enum" in prop:
            allowed, values = _STRING_ENUM, prop["enum"]
            if not _strings(values):
                raise TypeError(f"{where}: enum must be a non-empty list of strings")
            names = prop.get("enumNames")
            if names is not None and (not _strings(names) or len(names) != len(values)):
                raise TypeError(f"{where}: enumNames must be one string per enum value")
        elif "oneOf" in prop:
            allowed = _STRING_ONE_OF
            _check_titled(prop["oneOf"], where, "oneOf")
        else:
            allowed = _STRING
            fmt = prop.get("format")
            if fmt is not None and fmt not in _FORMATS:
                raise TypeError(
                    f"{where}: format {fmt!r} is not one a form can ask for; use one of "
                    f"{', '.join(_FORMATS)} or none"
                )
            title = prop.get("title")
            if looks_secret(name) or (isinstance(title, str) and looks_secret(title)):
                raise TypeError(
                    f"{where} looks like a password, token, API key or card number; forms must "
                    "not collect secrets (ELIC-7): send the user to a page you control with "
                    "ctx.elicit_url(...) instead (or rename the field if it holds no secret)"
                )
    elif kind in ("number", "integer"):
        allowed = _NUMBER
    elif kind == "boolean":
        allowed = _COMMON
    elif kind == "array":
        allowed = _ARRAY
        items = prop.get("items")
        if not isinstance(items, dict):
            raise TypeError(f"{where}: a multi-select needs an \"items\" object")
        if "anyOf" in items and set(items) == {"anyOf"}:
            _check_titled(items["anyOf"], where, "items.anyOf")
        elif items.get("type") != "string" or not _strings(items.get("enum")) or set(items) - {
            "type", "enum"
        }:
            raise TypeError(
                f"{where}: forms allow arrays only as multi-selects: "
                '{"type": "array", "items": {"type": "string", "enum": [...]}}'
            )
    else:
        raise TypeError(
            f"{where} has type {kind!r}; forms allow only string, number, integer, boolean and "
            "multi-select arrays (no nested objects)"
        )
    extra = set(prop) - allowed
    if extra:
        raise TypeError(
            f"{where}: {', '.join(sorted(extra))} not allowed in an elicitation form (it is a flat "
            "form of primitive fields)"
        )


def _strings(values: Any) -> bool:
    return isinstance(values, list) and bool(values) and all(isinstance(v, str) for v in values)


def _check_titled(options: Any, where: str, what: str) -> None:
    if not isinstance(options, list) or not options or not all(
        isinstance(o, dict) and set(o) == {"const", "title"} and isinstance(o["const"], str)
        and isinstance(o["title"], str) for o in options
    ):
        raise TypeError(f'{where}: {what} must be a list of {{"const": str, "title": str}}')


# -- forms from Python types ----------------------------------------------------------------------


def _from_types(fields: Mapping[str, Any], where: str) -> Form:
    if not fields:  # a plain confirmation: accept or decline, nothing to fill in
        return Form({"type": "object", "properties": {}}, lambda content: {})
    from mcpkit.schema.functions import ArgumentsError, derive_signature

    params = []
    for name, annotation in fields.items():
        if not isinstance(name, str) or not name.isidentifier() or keyword.iskeyword(name):
            raise TypeError(
                f"{where}: form field {name!r} is not a Python identifier; pass a JSON Schema "
                '({"type": "object", "properties": ...}) to use that name'
            )
        optional = _is_optional(annotation)
        params.append(inspect.Parameter(
            name, inspect.Parameter.KEYWORD_ONLY, annotation=annotation,
            default=None if optional else inspect.Parameter.empty,
        ))

    def form(**values: Any) -> None:
        """An elicitation form."""

    form.__signature__ = inspect.Signature(params)  # type: ignore[attr-defined]
    form.__doc__ = None
    try:
        signature = derive_signature(form)
    except TypeError as exc:
        raise TypeError(f"{where}: {str(exc).split(': ', 1)[-1]}") from None
    schema = signature.input_schema
    for prop in schema["properties"].values():
        _drop_null(prop)
    check_form_schema(schema, where)
    names = tuple(fields)

    def validate(content: Mapping[str, Any]) -> dict[str, Any]:
        try:
            values = signature.validate(content)
        except ArgumentsError as exc:
            raise ValueError("; ".join(p.replace("arguments.", "", 1) for p in exc.problems)) from None
        return {n: values.get(n) for n in names}

    return Form(schema, validate)


def _is_optional(annotation: Any) -> bool:
    base = annotation
    if typing.get_origin(base) is typing.Annotated:
        base = typing.get_args(base)[0]
    origin = typing.get_origin(base)
    return (origin is typing.Union or origin is types.UnionType) and type(None) in typing.get_args(base)


def _drop_null(prop: dict[str, Any]) -> None:
    """`X | None` means "may be left empty" in a form, which has no null."""
    kind = prop.get("type")
    if isinstance(kind, list) and "null" in kind:
        rest = [k for k in kind if k != "null"]
        prop["type"] = rest[0] if len(rest) == 1 else rest
    options = prop.get("anyOf")
    if isinstance(options, list) and {"type": "null"} in options:
        rest = [o for o in options if o != {"type": "null"}]
        if len(rest) == 1 and isinstance(rest[0], dict):
            del prop["anyOf"]
            prop.update(rest[0])
    if "default" in prop and prop["default"] is None:
        del prop["default"]


# -- forms given as JSON Schema -------------------------------------------------------------------


def _from_schema(schema: dict[str, Any], where: str) -> Form:
    check_form_schema(schema, where)
    properties: dict[str, Any] = schema["properties"]
    required = frozenset(schema.get("required", ()))

    def validate(content: Mapping[str, Any]) -> dict[str, Any]:
        problems: list[str] = []
        out: dict[str, Any] = {}
        for name, prop in properties.items():
            if name not in content:
                if name in required:
                    problems.append(f"{name}: missing required field")
                continue
            problem = _field_problem(content[name], prop)
            if problem:
                problems.append(f"{name}: {problem}")
            else:
                out[name] = content[name]
        if problems:
            raise ValueError("; ".join(problems))
        return out

    return Form(schema, validate)


def _field_problem(value: Any, prop: Mapping[str, Any]) -> str | None:
    kind = prop["type"]
    if kind == "string":
        if not isinstance(value, str):
            return f"expected a string, got {json_type(value)}"
        if "enum" in prop and value not in prop["enum"]:
            return f"expected one of {prop['enum']}, got {value!r}"
        if "oneOf" in prop and value not in [o["const"] for o in prop["oneOf"]]:
            return f"{value!r} is not one of the choices"
        if len(value) < prop.get("minLength", 0) or len(value) > prop.get("maxLength", len(value)):
            return "length out of range"
        return _format_problem(value, prop.get("format"))
    if kind in ("number", "integer"):
        if isinstance(value, bool) or not isinstance(value, int | float) or (
            kind == "integer" and not (isinstance(value, int) or value.is_integer())
        ):
            return f"expected {'an integer' if kind == 'integer' else 'a number'}, got {json_type(value)}"
        if value < prop.get("minimum", value) or value > prop.get("maximum", value):
            return f"{value} is out of range"
        return None
    if kind == "boolean":
        return None if isinstance(value, bool) else f"expected a boolean, got {json_type(value)}"
    items = prop["items"]
    choices = items["enum"] if "enum" in items else [o["const"] for o in items["anyOf"]]
    if not isinstance(value, list) or not all(isinstance(v, str) and v in choices for v in value):
        return f"expected a list of {choices}"
    if len(value) < prop.get("minItems", 0) or len(value) > prop.get("maxItems", len(value)):
        return "number of choices out of range"
    return None


def _format_problem(value: str, fmt: Any) -> str | None:
    try:
        if fmt == "date-time":
            datetime.fromisoformat(value)
        elif fmt == "date":
            date.fromisoformat(value)
    except ValueError:
        return f"{value!r} is not a {fmt}"
    if fmt == "email" and "@" not in value:
        return f"{value!r} is not an email address"
    if fmt == "uri" and ":" not in value:
        return f"{value!r} is not a URI"
    return None

