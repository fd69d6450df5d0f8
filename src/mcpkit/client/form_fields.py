"""What a client holds of an elicitation form once it is read: `Form` and its `FormField`s, and
whether a value fits a field.

`mcpkit.client.forms` reads a server's `requestedSchema` into these and checks a whole answer;
a host renders the fields from them and may check one value as it is typed
(`FormField.problem`). A number fits only as the wire carries it (64-bit integers, finite
floats), a format only as the restricted vocabulary defines it (no server regex is ever run),
and a refusal describes a wrong value without repeating it (the user may have typed something
private in the wrong field), showing server text with control characters escaped.

The standard library only.
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import date, datetime
from typing import Any, Final

__all__ = [
    "Form",
    "FormField",
    "is_wire_number",
    "shown_text",
]

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


def is_wire_number(value: Any) -> bool:
    """A number the wire carries: a 64-bit integer or a finite float (never a bool)."""
    if type(value) is int:
        return value in _WIRE_INTEGERS
    return type(value) is float and math.isfinite(value)


def _plural(n: int, word: str) -> str:
    return f"{n} {word}{'' if n == 1 else 's'}"


def shown_text(text: str) -> str:
    """Server text for a message: control and format characters escaped."""
    return text if text.isprintable() else repr(text)[1:-1]


def _choices(choices: tuple[str, ...]) -> str:
    shown = ", ".join(shown_text(c) for c in choices[:10])
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
            ok = is_wire_number(value) and (kind == "number" or float(value).is_integer())
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
