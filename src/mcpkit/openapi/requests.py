"""Checked arguments as the HTTP request of an operation, without I/O.

The arguments have passed the tool's input schema by the time they reach `build_request`; what
the schema cannot say (a header value with a line break, a body that is not base64) is a
`ValueError` here, before anything is sent. The request target is written out whole
(`/pets/7?status=available&tag=a&tag=b`), percent-encoded by `mcpkit.openapi.styles`, so
what is sent is exactly what the document's styles describe.

Imports: the standard library, orjson and `mcpkit.openapi` (inputs, styles).
"""

from __future__ import annotations

import base64
import binascii
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlencode

import orjson

from mcpkit.openapi.inputs import Body, Inputs
from mcpkit.openapi.styles import (
    cookie_pairs,
    header_value,
    path_value,
    query_pairs,
    scalar_text,
)

__all__ = [
    "Outgoing",
    "build_request",
]


@dataclass(frozen=True, slots=True)
class Outgoing:
    method: str
    target: str
    """The path and query, percent-encoded: `/pets/7?limit=2`."""
    headers: list[tuple[str, str]]
    content: bytes | None


def _value(argument_json: bool, value: Any) -> Any:
    return orjson.dumps(value).decode() if argument_json else value


def build_request(method: str, path: str, inputs: Inputs, arguments: Mapping[str, Any],
                  accept: str) -> Outgoing:
    """The request `method path` makes of `arguments` (already checked against the schema)."""
    target = path
    query: list[str] = []
    headers: list[tuple[str, str]] = [("accept", accept)]
    cookies: list[str] = []
    for argument in inputs.arguments:
        if argument.name not in arguments:
            continue
        value = _value(argument.as_json, arguments[argument.name])
        if argument.location == "path":
            target = target.replace("{" + argument.wire + "}",
                                    path_value(argument.wire, value, argument.style,
                                               argument.explode))
        elif argument.location == "query":
            query += query_pairs(argument.wire, value, argument.style, argument.explode,
                                 argument.allow_reserved)
        elif argument.location == "header":
            headers.append((argument.wire, header_value(argument.wire, value,
                                                        argument.explode)))
        else:
            cookies += cookie_pairs(argument.wire, value, argument.explode)
    if "{" in target:
        raise ValueError(f"the path {path} still has a parameter no argument filled: {target}")
    if query:
        target += "?" + "&".join(query)
    if cookies:
        headers.append(("cookie", "; ".join(cookies)))
    content = None
    if inputs.body is not None and inputs.body.name in arguments:
        content, media_type = _body(inputs.body, arguments[inputs.body.name])
        headers.append(("content-type", media_type))
    return Outgoing(method, target, headers, content)


def _body(body: Body, value: Any) -> tuple[bytes, str]:
    if body.kind == "json":
        return orjson.dumps(value), body.media_type
    if body.kind == "form":
        pairs: list[tuple[str, str]] = []
        for key, item in (value.items() if isinstance(value, Mapping) else ()):
            items = item if isinstance(item, list) else [item]
            pairs += [(str(key), scalar_text(v)) for v in items]
        return urlencode(pairs).encode("ascii"), body.media_type
    if body.kind == "text":
        media = body.media_type
        if "charset=" not in media.lower():
            media += "; charset=utf-8"
        return str(value).encode("utf-8"), media
    try:
        return base64.b64decode(str(value), validate=True), body.media_type
    except (binascii.Error, ValueError):
        raise ValueError(f"the argument {body.name!r} is not base64 text (the {body.media_type} "
                         "body is given as base64)") from None
