"""The words of a refusal: the error a failed check raises, and how it names a place and a value.

Every checker of arguments, structured output and forms reports problems the same way, so a
model reads one style whatever checked its value: "arguments.count: expected integer, got
string 'x'". `json_type` names only the type of a decoded value, for messages about wire data
that no schema describes.

Imports: the standard library only.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from typing import Any, Final

from mcpkit.errors import ArgumentsError

__all__ = [
    "TOO_DEEP",
    "ArgumentsError",
    "describe_value",
    "json_type",
    "property_path",
]

_IDENTIFIER = re.compile(r"[A-Za-z_][A-Za-z0-9_]*\Z")


TOO_DEEP: Final = "arguments: nested too deeply to check; send a value with fewer nesting levels"


def property_path(base: str, name: str) -> str:
    """`arguments.count`, or `arguments["odd key"]` when the name is not an identifier."""
    if _IDENTIFIER.match(name):
        return f"{base}.{name}"
    return f"{base}[{json.dumps(name, ensure_ascii=False)}]"


def describe_value(value: Any) -> str:
    """Name a value the way JSON would, so a model can see what it sent."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "boolean true" if value else "boolean false"
    if isinstance(value, int):
        return f"integer {value}"
    if isinstance(value, float):
        return f"number {value!r}"
    if isinstance(value, str):
        shown = value if len(value) <= 40 else value[:37] + "..."
        return f"string {shown!r}"
    if isinstance(value, Mapping):
        return "object"
    if isinstance(value, (list, tuple)):
        return "array"
    return type(value).__name__


def json_type(value: Any) -> str:
    """The JSON name of a decoded value's type, for error messages."""
    if value is None:
        return "null"
    return {bool: "boolean", int: "integer", float: "number", str: "string", list: "array",
            dict: "object"}.get(type(value), type(value).__name__)
