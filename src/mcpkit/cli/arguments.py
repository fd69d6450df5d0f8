"""Reading `name=value` arguments against what the server declared: a tool's input schema, a
prompt's argument list.

`mcpkit call SERVER add a=2 b=3` types each value from the schema (`2` is a number because
`a` is an integer), and a name the tool does not take is refused with the names it does take,
since a misspelt argument otherwise vanishes silently and the tool runs with its default.
Only a schema that allows extra properties (`additionalProperties` true or a schema, or a
matching `patternProperties`) lets an unknown name through. The same holds for a prompt's
arguments, which are strings with no schema. A name given twice (`b=2 b=3`) is refused, not
one value kept: a list is one JSON value (`b='[2, 3]'`). An integer no JSON number can carry
(past 64 bits) is refused before anything is sent, naming the argument, or sent as the text
written when the tool also takes a string.

Imports the standard library only.
"""

from __future__ import annotations

import json
import re
from typing import Any

from mcpkit.cli.usage import UsageError

__all__ = [
    "kind_name",
    "kinds_of",
    "prompt_arguments",
    "typed_arguments",
]


def _resolve(schema: Any, defs: dict[str, Any]) -> tuple[Any, str | None]:
    """`schema` with a local `$ref` followed, and the name the reference gives it."""
    ref = schema.get("$ref") if isinstance(schema, dict) else None
    if isinstance(ref, str) and ref.startswith(("#/$defs/", "#/definitions/")):
        name = ref.rsplit("/", 1)[1]
        return defs.get(name, {}), name
    return schema, None


def kinds_of(schema: Any, defs: dict[str, Any] | None = None) -> list[str]:
    """The JSON types a value of `schema` may have (`anyOf`/`oneOf` branches included);
    empty when the schema does not say."""
    schema, _ = _resolve(schema, defs or {})
    if not isinstance(schema, dict):
        return []
    kind = schema.get("type")
    if isinstance(kind, str):
        return [kind]
    if isinstance(kind, list):
        return [k for k in kind if isinstance(k, str)]
    out: list[str] = []
    for key in ("anyOf", "oneOf"):
        for branch in schema.get(key) or []:
            out += [k for k in kinds_of(branch, defs) if k not in out]
    return out


def kind_name(schema: Any, defs: dict[str, Any] | None = None) -> str:
    """How a parameter's type reads in a signature: a model by its title (or the name its
    `$ref` gives it), `Point[]` for a list of them, `a | b` for alternatives, a string of a
    format by the format (`date`, `date-time`, `uuid`), `any` only when the schema says
    nothing."""
    defs = defs or {}
    schema, ref_name = _resolve(schema, defs)
    if not isinstance(schema, dict):
        return "any"
    title = schema.get("title") or ref_name
    if isinstance(title, str) and title and (schema.get("type") in (None, "object")):
        return title
    branches = schema.get("anyOf") or schema.get("oneOf")
    if isinstance(branches, list) and branches:
        return " | ".join(dict.fromkeys(kind_name(b, defs) for b in branches))
    kind = schema.get("type")
    if kind == "array":
        items = schema.get("items")
        return f"{kind_name(items, defs)}[]" if isinstance(items, dict) else "array"
    fmt = schema.get("format")
    fmt = fmt if isinstance(fmt, str) and fmt else None  # a date reads as date, not string
    if isinstance(kind, list):
        return " | ".join(fmt if k == "string" and fmt else k
                          for k in kind if isinstance(k, str)) or "any"
    if isinstance(kind, str):
        return fmt if kind == "string" and fmt else kind
    if "enum" in schema or "const" in schema:
        values = schema.get("enum") or [schema.get("const")]
        return " | ".join(json.dumps(v) for v in values)
    return "any"


_JSON_INTEGERS = range(-(2**63), 2**64)
"""The integers a JSON number carries on the wire (orjson encodes every message)."""


def _too_big(value: Any) -> int | None:
    """The first integer in `value` that no JSON number on the wire can carry, if any."""
    stack = [value]
    while stack:
        item = stack.pop()
        if type(item) is int and item not in _JSON_INTEGERS:
            return item
        if isinstance(item, dict):
            stack.extend(item.values())
        elif isinstance(item, list):
            stack.extend(item)
    return None


def _refuse_big(name: str, text: str, big: int) -> UsageError:
    quoted = json.dumps(str(big))
    return UsageError(
        f"{name}={text}: the integer {big} is beyond the 64-bit range a JSON integer can carry "
        f"(-2**63 to 2**64-1), so it would not arrive as written; send it as a string instead "
        f"({quoted}), if the tool takes one")


def _loads(text: str) -> Any:
    """JSON text as a value; an object that repeats a key is refused (JSON keeps the last)."""

    def unique(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
        out: dict[str, Any] = {}
        for key, value in pairs:
            if key in out:
                raise UsageError(f"the JSON repeats the key {key!r}; give each key once")
            out[key] = value
        return out

    return json.loads(text, object_pairs_hook=unique)


def _coerce(text: str, schema: Any, name: str, defs: dict[str, Any]) -> Any:
    kinds = kinds_of(schema, defs)
    if kinds == ["string"]:
        return text
    try:
        value = _loads(text)
    except ValueError:
        if not kinds or "string" in kinds:
            return text
        raise UsageError(f"{name}={text!r}: expected {' or '.join(kinds)}") from None
    big = _too_big(value)
    if big is not None:
        if "string" in kinds and type(value) is int:
            return text  # the tool takes a string too: exact as written
        raise _refuse_big(name, text, big)
    if "integer" in kinds and isinstance(value, float) and value.is_integer():
        value = int(value)
    if kinds and not any(_is(value, k) for k in kinds):
        if "string" in kinds:
            return text
        raise UsageError(f"{name}={text!r}: expected {' or '.join(kinds)}")
    return value


def _is(value: Any, kind: str) -> bool:
    return {
        "integer": isinstance(value, int) and not isinstance(value, bool),
        "number": isinstance(value, int | float) and not isinstance(value, bool),
        "boolean": isinstance(value, bool), "string": isinstance(value, str),
        "array": isinstance(value, list), "object": isinstance(value, dict),
        "null": value is None,
    }.get(kind, True)


def _allows_extra(schema: dict[str, Any], name: str) -> bool:
    extra = schema.get("additionalProperties")
    if extra is True or (isinstance(extra, dict) and extra != {"not": {}}):
        return True
    patterns = schema.get("patternProperties")
    if isinstance(patterns, dict):
        for pattern in patterns:
            try:
                if re.search(pattern, name):
                    return True
            except re.error:
                continue
    return False


def _pairs(raw: list[str], *, lists: bool = True) -> list[tuple[str, str]]:
    """`key=value` words as pairs; a key given twice is refused rather than one of its values
    silently kept (`lists`: the hint shows a list as JSON, for a tool's arguments)."""
    pairs: dict[str, str] = {}
    for item in raw:
        key, sep, text = item.partition("=")
        if not sep or not key:
            raise UsageError(f"argument {item!r} must be key=value (or pass one JSON object)")
        if key in pairs:
            hint = (f"; to send several values, give a JSON list once: "
                    f"{key}='[{pairs[key]}, {text}]'") if lists else ""
            raise UsageError(f"{key} is given twice ({key}={pairs[key]} {key}={text}): give it "
                             f"once{hint}")
        pairs[key] = text
    return list(pairs.items())


def _json_object(raw: list[str]) -> dict[str, Any] | None:
    if len(raw) != 1 or not raw[0].lstrip().startswith("{"):
        return None
    try:
        value = _loads(raw[0])
    except UsageError:
        raise
    except ValueError as exc:
        raise UsageError(f"the arguments are not valid JSON: {exc}") from None
    if not isinstance(value, dict):
        raise UsageError("the JSON arguments must be an object")
    for key, item in value.items():
        big = _too_big(item)
        if big is not None:
            raise _refuse_big(key, json.dumps(item), big)
    return value


def _refuse_unknown(unknown: list[str], what: str, known: list[str], signature: str) -> None:
    if not unknown:
        return
    names = ", ".join(repr(n) for n in unknown)
    takes = f"it takes {signature}" if known else "it takes no arguments"
    plural = "s" if len(unknown) > 1 else ""
    raise UsageError(f"{what} has no argument{plural} {names}; {takes}")


def typed_arguments(raw: list[str], schema: dict[str, Any] | None,
                    what: str = "the tool", signature: str = "") -> dict[str, Any] | None:
    """`["a=2", "b=x"]` -> `{"a": 2, "b": "x"}` by the schema's property types; one JSON
    object is taken as it is. A name the schema does not declare (and does not allow as an
    extra property) is a UsageError naming the ones it does; `signature` is how they read."""
    if not raw:
        return None
    schema = schema if isinstance(schema, dict) else {}
    found = schema.get("properties")
    properties: dict[str, Any] = found if isinstance(found, dict) else {}
    defs = schema.get("$defs") or schema.get("definitions") or {}
    given = _json_object(raw)
    if given is None:
        given = {key: _coerce(text, properties.get(key), key, defs) for key, text in _pairs(raw)}
    if schema:
        unknown = [k for k in given if k not in properties and not _allows_extra(schema, k)]
        _refuse_unknown(unknown, what, list(properties), signature or ", ".join(properties))
    return given


def prompt_arguments(raw: list[str], declared: list[dict[str, Any]] | None,
                     what: str) -> dict[str, str] | None:
    """A prompt's arguments (always strings) from `name=value` or one JSON object; a name
    the prompt does not declare is refused with the ones it does (`declared` None: the
    prompt's list is unknown, so nothing is refused)."""
    if not raw:
        return None
    given = _json_object(raw)
    pairs = list(given.items()) if given is not None else _pairs(raw, lists=False)
    out = {k: v if isinstance(v, str) else json.dumps(v) for k, v in pairs}
    if declared is not None:
        names = [str(a.get("name")) for a in declared if isinstance(a, dict)]
        signature = ", ".join(
            n + ("" if a.get("required") else "?") for n, a in zip(names, declared, strict=True)
        )
        _refuse_unknown([k for k in out if k not in names], what, names, signature)
    return out
