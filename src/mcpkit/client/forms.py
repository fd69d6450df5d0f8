"""Elicitation forms on the client side: reading a server's `requestedSchema`, checking answers.

A form-mode elicitation carries a restricted schema (ELIC-5): a flat object whose properties
are strings (with `minLength`/`maxLength`/`format`), numbers and integers (with `minimum`/
`maximum`), booleans, single-selects (`enum`, `oneOf` of `{const, title}`, or the legacy
`enumNames`) and multi-selects (`array` of such choices, `minItems`/`maxItems`). The schema
comes from the server, so `read_form` checks its shape and bounds it before anyone renders it,
and a host's answer is checked against it (`check_answer`) before it is sent (ELIC-14): a
handler's mistake becomes a clear error here rather than a confused server. Any host can use
`Form`/`FormField` (`mcpkit.client.form_fields`) to render the fields and to check one value
as it is typed.

Keywords outside the restricted vocabulary are ignored (`pattern` among them: no server regex is
ever compiled or run); the known ones must have the types the schema defines. Content may hold
only the form's fields, and a number only what the wire carries (64-bit integers, finite
floats). A refusal describes a wrong value, never repeats it (the user may have typed something
private in the wrong field), and shows server text with control characters escaped.

May import `mcpkit.errors` and the form it builds (`mcpkit.client.form_fields`).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Final

from mcpkit.client.form_fields import Form, FormField, is_wire_number, shown_text
from mcpkit.errors import ElicitationAnswerError, FormSchemaError

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


def _is_int(value: Any) -> bool:
    return type(value) is int


def _show(value: Any) -> str:
    text = repr(value) if not isinstance(value, bool) else str(value).lower()
    return text if len(text) <= 60 else text[:57] + "..."


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
            not (_is_int(value) and value >= 0) if whole else not is_wire_number(value)
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
        listed = "; ".join(f"{shown_text(name)}: {problem}" for name, problem in problems.items())
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
