"""Mirroring tool arguments into `Mcp-Param-*` HTTP headers: which properties may be mirrored
(the `x-mcp-header` rules of a tool's input schema), how values are written into a header
(plain, or the `=?base64?...?=` sentinel), and how a received header is read back and compared
with the body.

Both sides use it: a client to build headers and to drop tools whose declarations are broken,
a server to check that headers and body agree before it trusts either. It is sans-IO: no I/O,
no async, no clock; it imports the standard library and `mcpkit.errors` only.
"""

from __future__ import annotations

import base64
import binascii
import re
import string
from collections.abc import Iterator, Mapping
from decimal import Decimal, InvalidOperation
from typing import Any, Final

from mcpkit.errors import InvalidHeaderDeclaration

__all__ = [
    "MAX_SAFE_INTEGER",
    "SENTINEL_PREFIX",
    "SENTINEL_SUFFIX",
    "InvalidHeaderDeclaration",
    "decode_header_value",
    "encode_header_value",
    "header_matches_body",
    "header_params",
    "mirrored_headers",
]

SENTINEL_PREFIX: Final = "=?base64?"
SENTINEL_SUFFIX: Final = "?="
MAX_SAFE_INTEGER: Final = 2**53 - 1
"""Largest integer every JSON peer can represent exactly, so the header and body agree."""

_TCHAR: Final = frozenset("!#$%&'*+-.^_`|~" + string.ascii_letters + string.digits)
_PRIMITIVE_TYPES: Final = frozenset({"string", "integer", "boolean"})
_PLAIN: Final = frozenset(chr(c) for c in range(0x20, 0x7F))
"""Characters a value may contain and still be sent as-is (visible ASCII and space)."""
_RECEIVABLE: Final = _PLAIN | {"\t"}
_BASE64 = re.compile(r"[A-Za-z0-9+/]*={0,2}\Z")
_NUMBER = re.compile(r"[+-]?[0-9]+(?:\.[0-9]+)?(?:[eE][+-]?[0-9]+)?\Z")

# Keywords whose value is one subschema, a list of them, or a name -> subschema map. A
# declaration found through any of them is not on a pure `properties` chain.
_ONE: Final = (
    "items",
    "additionalItems",
    "additionalProperties",
    "unevaluatedItems",
    "unevaluatedProperties",
    "contains",
    "propertyNames",
    "not",
    "if",
    "then",
    "else",
)
_MANY: Final = ("allOf", "anyOf", "oneOf", "prefixItems", "items")
_MAP: Final = ("$defs", "definitions", "patternProperties", "dependentSchemas", "dependencies")


def _pointer(path: tuple[str, ...]) -> str:
    return "/" + "/".join(p.replace("~", "~0").replace("/", "~1") for p in path) if path else "/"


def _subschemas(
    node: Mapping[str, Any], at: tuple[str, ...]
) -> Iterator[tuple[Any, tuple[str, ...]]]:
    """Every subschema of `node` except its `properties`, with its location."""
    for key in _ONE:
        if isinstance(node.get(key), Mapping):
            yield node[key], (*at, key)
    for key in _MANY:
        if isinstance(node.get(key), list):
            for i, child in enumerate(node[key]):
                yield child, (*at, key, str(i))
    for key in _MAP:
        if isinstance(node.get(key), Mapping):
            for name, child in node[key].items():
                yield child, (*at, key, str(name))


def _check_name(value: Any, where: str) -> str:
    if not isinstance(value, str):
        raise InvalidHeaderDeclaration(
            f"x-mcp-header at {where} must be a string, got {type(value).__name__}"
        )
    if not value:
        raise InvalidHeaderDeclaration(f"x-mcp-header at {where} must not be empty")
    for ch in value:
        if ord(ch) < 0x20 or ord(ch) == 0x7F:
            raise InvalidHeaderDeclaration(
                f"x-mcp-header {value!r} at {where} contains a control character ({ch!r})"
            )
        if ch not in _TCHAR:
            what = (
                "a non-ASCII character"
                if ord(ch) > 0x7F
                else "a character not allowed in an HTTP token"
            )
            raise InvalidHeaderDeclaration(
                f"x-mcp-header {value!r} at {where} contains {what} ({ch!r})"
            )
    return value


def _check_type(node: Mapping[str, Any], value: str, where: str) -> None:
    declared = node.get("type")
    if isinstance(declared, list) and len(declared) == 1:
        declared = declared[0]
    if not isinstance(declared, str) or declared not in _PRIMITIVE_TYPES:
        shown = "no type" if declared is None else f"type {declared!r}"
        raise InvalidHeaderDeclaration(
            f"x-mcp-header {value!r} at {where} is on a property with {shown}; only a single "
            f"string, integer or boolean type may be mirrored into a header"
        )


def header_params(input_schema: Mapping[str, Any]) -> dict[str, tuple[str, ...]]:
    """Map each `x-mcp-header` value to its property path, or raise for a broken declaration.

    Declarations count only on properties reached from the root through `properties` alone;
    one found anywhere else (array items, composition, conditionals, `$defs`, ...) makes the
    tool invalid rather than being silently ignored. Each subschema is visited once.
    """
    found: dict[str, tuple[str, ...]] = {}
    seen: dict[str, str] = {}
    # (schema, location in the schema, property path or None when off the properties chain)
    stack: list[tuple[Any, tuple[str, ...], tuple[str, ...] | None]] = [(input_schema, (), ())]
    while stack:
        node, at, path = stack.pop()
        if not isinstance(node, Mapping):
            continue
        if "x-mcp-header" in node:
            where = _pointer(at)
            value = _check_name(node["x-mcp-header"], where)
            if not path:
                raise InvalidHeaderDeclaration(
                    f"x-mcp-header {value!r} at {where} is not reachable from the root through "
                    f"'properties' alone"
                )
            _check_type(node, value, where)
            folded = value.lower()
            if folded in seen:
                raise InvalidHeaderDeclaration(
                    f"x-mcp-header {value!r} at {where} duplicates {seen[folded]} (header names "
                    f"are compared case-insensitively)"
                )
            seen[folded] = f"{value!r} at {where}"
            found[value] = path
        children: list[tuple[Any, tuple[str, ...], tuple[str, ...] | None]] = []
        properties = node.get("properties")
        if isinstance(properties, Mapping):
            for name, child in properties.items():
                child_path = (*path, str(name)) if path is not None else None
                children.append((child, (*at, "properties", str(name)), child_path))
        children.extend((child, where_, None) for child, where_ in _subschemas(node, at))
        stack.extend(reversed(children))  # visit in document order
    return found


def encode_header_value(value: str | int | bool) -> str:
    """Write an argument as a header value: plain when safe, else the Base64 sentinel."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        if abs(value) > MAX_SAFE_INTEGER:
            raise ValueError(
                f"integer {value} is outside ±(2**53-1) and cannot be mirrored into a header"
            )
        return str(value)
    if not isinstance(value, str):
        raise TypeError(
            f"only strings, integers and booleans go into headers, not {type(value).__name__}"
        )
    plain = (
        all(ch in _PLAIN for ch in value)
        and value == value.strip(" ")
        and not (value.startswith(SENTINEL_PREFIX) and value.endswith(SENTINEL_SUFFIX))
    )
    if plain:
        return value
    return (
        SENTINEL_PREFIX + base64.b64encode(value.encode("utf-8")).decode("ascii") + SENTINEL_SUFFIX
    )


def decode_header_value(raw: str) -> str:
    """Read a received header value back into the string the client meant.

    Only the exact lowercase sentinel is decoded, and strictly (alphabet, padding, canonical
    form, UTF-8), so one value cannot be read two ways; anything else is a literal.
    """
    value = raw.strip(" \t")
    head, tail = len(SENTINEL_PREFIX), len(SENTINEL_SUFFIX)
    if (
        len(value) >= head + tail
        and value.startswith(SENTINEL_PREFIX)
        and value.endswith(SENTINEL_SUFFIX)
    ):
        payload = value[head:-tail]
        if not _BASE64.match(payload):
            raise ValueError(
                f"invalid Base64 in header value {raw!r}: characters outside the Base64 alphabet "
                f"or misplaced '=' padding"
            )
        if len(payload) % 4:
            raise ValueError(
                f"invalid Base64 in header value {raw!r}: length is not a multiple of 4 (missing padding?)"
            )
        try:
            data = base64.b64decode(payload, validate=True)
        except binascii.Error as exc:
            raise ValueError(f"invalid Base64 in header value {raw!r}: {exc}") from None
        if base64.b64encode(data).decode("ascii") != payload:
            raise ValueError(f"invalid Base64 in header value {raw!r}: not in canonical form")
        try:
            return data.decode("utf-8")
        except UnicodeDecodeError:
            raise ValueError(f"Base64 header value {raw!r} does not decode to UTF-8 text") from None
    for ch in value:
        if ch not in _RECEIVABLE:
            raise ValueError(
                f"header value {raw!r} contains invalid characters ({ch!r}); values that are not "
                f"visible ASCII must be sent Base64-encoded"
            )
    return value


def header_matches_body(decoded: str, body_value: Any) -> bool:
    """Compare a decoded header with the body's value: strings exactly, numbers numerically,
    booleans as lowercase `true`/`false`. The caller deals with absent and null values."""
    if isinstance(body_value, bool):
        return decoded == ("true" if body_value else "false")
    if isinstance(body_value, (int, float)):
        if not _NUMBER.match(decoded):
            return False
        try:
            return Decimal(decoded) == Decimal(body_value)
        except (InvalidOperation, ValueError):
            return False
    if isinstance(body_value, str):
        return decoded == body_value
    return False


def mirrored_headers(
    params: Mapping[str, tuple[str, ...]], arguments: Mapping[str, Any] | None
) -> dict[str, str]:
    """The `{x-mcp-header value: encoded value}` pairs a client sends with a `tools/call`.

    A value that is absent or null at its path gets no header. Prefix the keys with
    `Mcp-Param-` to get the header names.
    """
    headers: dict[str, str] = {}
    for name, path in params.items():
        value: Any = arguments
        for key in path:
            value = value.get(key) if isinstance(value, Mapping) else None
        if value is None:
            continue
        if isinstance(value, float) and value.is_integer():
            value = int(value)
        if not isinstance(value, (str, int, bool)):
            raise ValueError(
                f"argument at {'.'.join(path)} is {type(value).__name__}; the x-mcp-header "
                f"{name!r} needs a string, integer or boolean"
            )
        headers[name] = encode_header_value(value)
    return headers
