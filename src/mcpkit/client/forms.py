"""Elicitation forms on the client side: reading a server's `requestedSchema`, checking answers.

A form-mode elicitation carries a restricted schema (ELIC-5): a flat object whose properties
are strings (with `minLength`/`maxLength`/`format`), numbers and integers (with `minimum`/
`maximum`), booleans, single-selects (`enum`, `oneOf` of `{const, title}`, or the legacy
`enumNames`) and multi-selects (`array` of such choices, `minItems`/`maxItems`). The schema
comes from the server, so `read_form` checks its shape and bounds it before anyone renders it,
and a host's answer is checked against it (`check_answer`) before it is sent (ELIC-14): a
handler's mistake becomes a clear error here rather than a confused server. Any host can use
`Form`/`FormField` to render the fields and to check one value as it is typed.

Keywords outside the restricted vocabulary are ignored (`pattern` among them: no server regex is
ever compiled or run); the known ones must have the types the schema defines. Content may hold
only the form's fields, and a number only what the wire carries (64-bit integers, finite
floats). A refusal describes a wrong value, never repeats it (the user may have typed something
private in the wrong field), and shows server text with control characters escaped.

May import `mcpkit.errors`.
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import date, datetime
from typing import Any, Final

from mcpkit.errors import MCPError, ProtocolViolation

__all__ = [
    "ACTIONS",
    "ElicitationAnswerError",
    "Form",
    "FormField",
    "FormSchemaError",
    "check_answer",
    "check_url_answer",
    "read_form",
]

ACTIONS: Final = ("accept", "decline", "cancel")
FORMATS: Final = ("email", "uri", "date", "date-time")
KINDS: Final = ("string", "number", "integer", "boolean", "array")
MAX_FIELDS: Final = 100
MAX_CHOICES: Final = 1000
MAX_TEXT: Final = 4096
"""Longest title, description, choice or default string a form may carry."""

_EMAIL: Final = re.compile(
    r'(?:[^@\s"]{1,64}|"(?:[^"\\\r\n]|\\.){0,62}")@[^@\s.][^@\s]{0,254}'  # RFC 5321 Mailbox
)
_URI: Final = re.compile(r"[A-Za-z][A-Za-z0-9+.\-]*:\S*")
_DATE: Final = re.compile(r"[0-9]{4}-[0-9]{2}-[0-9]{2}")
_DATE_TIME: Final = re.compile(  # RFC 3339 5.6: any fraction; second 60 is a leap second
    r"([0-9]{4}-[0-9]{2}-[0-9]{2})[Tt]([0-9]{2}:[0-9]{2}):([0-9]{2})(\.[0-9]+)?"
    r"([Zz]|[+-][0-9]{2}:[0-9]{2})"
)
_WIRE_INTEGERS: Final = range(-(2**63), 2**64)
"""The integers a JSON encoder sends exactly (and this client's can send at all)."""
_EXAMPLES: Final = {
    "email": "an email address like ada@example.com",
    "uri": "an absolute URI like https://example.com/page",
    "date": "a date like 2031-03-04",
    "date-time": "a date-time with a time zone, like 2031-03-04T09:30:00+00:00",
}
_NO_DEFAULT: Final[Any] = object()


class FormSchemaError(ProtocolViolation):
    """A server's `requestedSchema` is not a form a client can render (ELIC-5)."""


class ElicitationAnswerError(MCPError, ValueError):
    """An elicitation answer that does not match the request; nothing was sent."""

    def __init__(self, message: str, problems: Mapping[str, str] | None = None) -> None:
        super().__init__(message)
        self.problems: dict[str, str] = dict(problems or {})
        """Field name -> what is wrong with its value ("" for the answer as a whole)."""


def _is_int(value: Any) -> bool:
    return type(value) is int


def _is_number(value: Any) -> bool:
    """A number the wire carries: a 64-bit integer or a finite float (never a bool)."""
    if type(value) is int:
        return value in _WIRE_INTEGERS
    return type(value) is float and math.isfinite(value)


def _plural(n: int, word: str) -> str:
    return f"{n} {word}{'' if n == 1 else 's'}"


def _safe(text: str) -> str:
    """Server text for a message: control and format characters escaped."""
    return text if text.isprintable() else repr(text)[1:-1]


def _choices(choices: tuple[str, ...]) -> str:
    shown = ", ".join(_safe(c) for c in choices[:10])
    return shown if len(choices) <= 10 else f"{shown}, ... ({len(choices)} in all)"


@dataclass(frozen=True, slots=True)
class FormField:
    """One field of a form, read from its property schema."""

    name: str
    kind: str
    """`string`, `number`, `integer`, `boolean`, or `array` (a multi-select)."""
    required: bool = False
    title: str | None = None
    description: str | None = None
    default: Any = _NO_DEFAULT
    choices: tuple[str, ...] = ()
    """The allowed values of a single- or multi-select (empty: free input)."""
    labels: tuple[str, ...] = ()
    """Display titles, one per choice, when the server gave them."""
    min_length: int | None = None
    max_length: int | None = None
    format: str | None = None
    minimum: float | None = None
    maximum: float | None = None
    min_items: int | None = None
    max_items: int | None = None

    @property
    def label(self) -> str:
        """What to show the user for this field."""
        return self.title or self.name

    @property
    def has_default(self) -> bool:
        return self.default is not _NO_DEFAULT

    @property
    def multiple(self) -> bool:
        return self.kind == "array"

    def hint(self) -> str:
        """A short description of what the field accepts, for a prompt."""
        if self.choices:
            shown = "/".join(self.choices)
            return f"any of {shown}" if self.multiple else shown
        if self.kind == "string" and self.format:
            return self.format
        if self.kind in ("number", "integer") and (self.minimum, self.maximum) != (None, None):
            low = "" if self.minimum is None else f"{self.minimum:g}"
            high = "" if self.maximum is None else f"{self.maximum:g}"
            return f"{self.kind} {low}..{high}"
        return self.kind

    def problem(self, value: Any) -> str | None:
        """Why `value` does not fit this field (None when it does)."""
        kind = self.kind
        if kind == "string":
            return self._string_problem(value)
        if kind in ("number", "integer"):
            if type(value) is int and value not in _WIRE_INTEGERS:
                return "is too large to send: an integer must fit in 64 bits"
            ok = _is_number(value) and (kind == "number" or float(value).is_integer())
            if not ok:
                wanted = "an integer" if kind == "integer" else "a number"
                return f"expected {wanted}, got {_kind_of(value)}"
            if self.minimum is not None and value < self.minimum:
                return f"must be at least {self.minimum:g}"
            if self.maximum is not None and value > self.maximum:
                return f"must be at most {self.maximum:g}"
            return None
        if kind == "boolean":
            return None if type(value) is bool else f"expected true or false, got {_kind_of(value)}"
        if type(value) is not list or not all(type(v) is str for v in value):
            return f"expected a list of choices, got {_kind_of(value)}"
        if not set(value) <= set(self.choices):
            return f"a value given is not a choice (choose from {_choices(self.choices)})"
        if len(set(value)) != len(value):
            return "a choice is given more than once"
        if self.min_items is not None and len(value) < self.min_items:
            return f"choose at least {self.min_items}"
        if self.max_items is not None and len(value) > self.max_items:
            return f"choose at most {self.max_items}"
        return None

    def _string_problem(self, value: Any) -> str | None:
        if type(value) is not str:
            return f"expected text, got {_kind_of(value)}"
        if self.choices:
            if value in self.choices:
                return None
            return f"the value given is not a choice (choose one of {_choices(self.choices)})"
        if self.min_length is not None and len(value) < self.min_length:
            return f"must be at least {_plural(self.min_length, 'character')} long"
        if self.max_length is not None and len(value) > self.max_length:
            return f"must be at most {_plural(self.max_length, 'character')} long"
        if self.format is not None and not _fits_format(value, self.format):
            return f"expected {_EXAMPLES[self.format]}"
        return None


def _fits_format(value: str, fmt: str) -> bool:
    if fmt == "email":
        return _EMAIL.fullmatch(value) is not None
    if fmt == "uri":
        return _URI.fullmatch(value) is not None
    try:
        if fmt == "date":
            return _DATE.fullmatch(value) is not None and bool(date.fromisoformat(value))
        found = _DATE_TIME.fullmatch(value)
        if found is None:
            return False
        day, minute, second, _, zone = found.groups()
        zone = "+00:00" if zone in ("Z", "z") else zone
        second = "59" if second == "60" else second  # a leap second has no datetime of its own
        datetime.fromisoformat(f"{day}T{minute}:{second}{zone}")  # the fraction: any digits
        return True
    except ValueError:
        return False


def _show(value: Any) -> str:
    text = repr(value) if not isinstance(value, bool) else str(value).lower()
    return text if len(text) <= 60 else text[:57] + "..."


def _kind_of(value: Any) -> str:
    """What a refused value is, without its content: it may be something the user typed."""
    if type(value) is bool:
        return "true or false"
    if type(value) is int:
        return "an integer"
    if type(value) is float:
        return "a fractional number" if math.isfinite(value) else "a non-finite number"
    return {str: "text", list: "a list", dict: "an object", type(None): "null"}.get(
        type(value), type(value).__name__
    )


@dataclass(frozen=True, slots=True)
class Form:
    """A checked form: its fields in the server's order."""

    fields: tuple[FormField, ...]

    def field(self, name: str) -> FormField | None:
        for f in self.fields:
            if f.name == name:
                return f
        return None

    def problems(self, content: Mapping[str, Any]) -> dict[str, str]:
        """Field name -> what is wrong, for every field the content gets wrong."""
        out: dict[str, str] = {}
        names = {f.name for f in self.fields}
        for name in content:
            if name not in names:
                out[str(name)] = "is not a field of the form"
        for f in self.fields:
            if f.name not in content:
                if f.required:
                    out[f.name] = "is required"
                continue
            problem = f.problem(content[f.name])
            if problem is not None:
                out[f.name] = problem
        return out


# -- reading a server's schema -------------------------------------------------------------


def read_form(schema: Any, where: str) -> Form:
    """The form a `requestedSchema` describes; FormSchemaError names what is wrong."""
    if type(schema) is not dict or schema.get("type") != "object":
        raise FormSchemaError(f'{where}: requestedSchema must be {{"type": "object", ...}}')
    properties = schema.get("properties", {})
    if type(properties) is not dict:
        raise FormSchemaError(f"{where}: requestedSchema.properties must be an object")
    if len(properties) > MAX_FIELDS:
        raise FormSchemaError(
            f"{where}: the form has {len(properties)} fields; this client shows at most "
            f"{MAX_FIELDS}"
        )
    required = schema.get("required", [])
    if type(required) is not list or not all(type(r) is str for r in required):
        raise FormSchemaError(f"{where}: requestedSchema.required must be a list of field names")
    unknown = [r for r in required if r not in properties]
    if unknown:
        raise FormSchemaError(f"{where}: required fields {unknown} are not in the form")
    wanted = set(required)
    return Form(tuple(
        _read_field(name, prop, name in wanted, f"{where}: form field {name!r}")
        for name, prop in properties.items()
    ))


def _read_field(name: str, prop: Any, required: bool, where: str) -> FormField:
    if type(prop) is not dict:
        raise FormSchemaError(f"{where} must be a schema object")
    kind = prop.get("type")
    if kind not in KINDS:
        raise FormSchemaError(
            f"{where} has type {kind!r}; a form field is a string, number, integer, boolean "
            "or a multi-select array (no nested objects)"
        )
    info: dict[str, Any] = {
        "title": _opt_text(prop, "title", where),
        "description": _opt_text(prop, "description", where),
    }
    if kind == "string":
        info["choices"], info["labels"] = _single_select(prop, where)
        if not info["choices"]:
            info["min_length"], info["max_length"] = _range(prop, "minLength", "maxLength",
                                                           where, whole=True)
            fmt = prop.get("format")
            if fmt is not None and fmt not in FORMATS:
                raise FormSchemaError(
                    f"{where}: format {fmt!r} is not one a form may ask for ({', '.join(FORMATS)})"
                )
            info["format"] = fmt
    elif kind in ("number", "integer"):
        info["minimum"], info["maximum"] = _range(prop, "minimum", "maximum", where, whole=False)
    elif kind == "array":
        info["choices"], info["labels"] = _multi_select(prop, where)
        info["min_items"], info["max_items"] = _range(prop, "minItems", "maxItems", where,
                                                     whole=True)
    made = FormField(name, kind, required, **info)
    if "default" in prop:
        problem = made.problem(prop["default"])
        if problem is not None:
            raise FormSchemaError(f"{where}: its default does not fit the field: {problem}")
        made = FormField(name, kind, required, default=prop["default"], **info)
    return made


def _opt_text(prop: Mapping[str, Any], key: str, where: str) -> str | None:
    value = prop.get(key)
    if value is None:
        return None
    if type(value) is not str or len(value) > MAX_TEXT:
        raise FormSchemaError(f"{where}: {key} must be a string of at most {MAX_TEXT} characters")
    return value


def _texts(values: Any, where: str, what: str) -> tuple[str, ...]:
    if type(values) is not list or not values or not all(
        type(v) is str and len(v) <= MAX_TEXT for v in values
    ):
        raise FormSchemaError(f"{where}: {what} must be a non-empty list of strings")
    if len(values) > MAX_CHOICES:
        raise FormSchemaError(f"{where}: {what} has more than {MAX_CHOICES} choices")
    return tuple(values)


def _titled(options: Any, where: str, what: str) -> tuple[tuple[str, ...], tuple[str, ...]]:
    if type(options) is not list or not options or not all(
        type(o) is dict and type(o.get("const")) is str and type(o.get("title")) is str
        for o in options
    ):
        raise FormSchemaError(f'{where}: {what} must be a list of {{"const": str, "title": str}}')
    if len(options) > MAX_CHOICES:
        raise FormSchemaError(f"{where}: {what} has more than {MAX_CHOICES} choices")
    return (_texts([o["const"] for o in options], where, what),
            _texts([o["title"] for o in options], where, what))


def _single_select(prop: Mapping[str, Any], where: str) -> tuple[tuple[str, ...], tuple[str, ...]]:
    if "enum" in prop:
        choices = _texts(prop["enum"], where, "enum")
        names = prop.get("enumNames")
        if names is None:
            return choices, ()
        labels = _texts(names, where, "enumNames")
        if len(labels) != len(choices):
            raise FormSchemaError(f"{where}: enumNames must give one name per enum value")
        return choices, labels
    if "oneOf" in prop:
        return _titled(prop["oneOf"], where, "oneOf")
    return (), ()


def _multi_select(prop: Mapping[str, Any], where: str) -> tuple[tuple[str, ...], tuple[str, ...]]:
    items = prop.get("items")
    if type(items) is dict and "anyOf" in items:
        return _titled(items["anyOf"], where, "items.anyOf")
    if type(items) is dict and items.get("type") == "string" and "enum" in items:
        return _texts(items["enum"], where, "items.enum"), ()
    raise FormSchemaError(
        f'{where}: an array field must be a multi-select: "items": {{"type": "string", '
        '"enum": [...]}} or {"anyOf": [{"const": ..., "title": ...}]}'
    )


def _range(
    prop: Mapping[str, Any], low_key: str, high_key: str, where: str, *, whole: bool
) -> tuple[Any, Any]:
    bounds = []
    for key in (low_key, high_key):
        value = prop.get(key)
        if value is not None and (
            not (_is_int(value) and value >= 0) if whole else not _is_number(value)
        ):
            kind = "a non-negative integer" if whole else "a finite number"
            raise FormSchemaError(f"{where}: {key} must be {kind}, not {_show(value)}")
        bounds.append(value)
    low, high = bounds
    if low is not None and high is not None and low > high:
        raise FormSchemaError(f"{where}: {low_key} {low} is greater than {high_key} {high}")
    return low, high


# -- checking an answer --------------------------------------------------------------------


def _action(result: Any, where: str) -> str:
    if type(result) is not dict:
        raise ElicitationAnswerError(f"{where}: the answer must be an object with an action")
    action = result.get("action")
    if action not in ACTIONS:
        raise ElicitationAnswerError(
            f"{where}: the answer's action must be accept, decline or cancel, not {_show(action)}",
            {"": "bad action"},
        )
    if action != "accept" and "content" in result:
        raise ElicitationAnswerError(
            f"{where}: an answer that does not accept carries no content (action {action})",
            {"": "content without accept"},
        )
    return str(action)


def check_answer(form: Form, result: Any, where: str) -> None:
    """Raise ElicitationAnswerError unless `result` is an ElicitResult that fits `form`."""
    if _action(result, where) != "accept":
        return
    content = result.get("content", {})
    if type(content) is not dict:
        raise ElicitationAnswerError(f"{where}: the answer's content must be an object",
                                     {"": "content is not an object"})
    problems = form.problems(content)
    if problems:
        listed = "; ".join(f"{_safe(name)}: {problem}" for name, problem in problems.items())
        raise ElicitationAnswerError(
            f"{where}: the answer does not match the requested form ({listed}); it was not "
            "sent — fix the answer, or decline or cancel", problems,
        )


def check_url_answer(result: Any, where: str) -> None:
    """Raise ElicitationAnswerError unless `result` is an ElicitResult for a URL elicitation."""
    if _action(result, where) == "accept" and "content" in result:
        raise ElicitationAnswerError(
            f"{where}: a URL elicitation's answer carries no content (accept means the user "
            "agreed to open the page)", {"": "content in a URL answer"},
        )
