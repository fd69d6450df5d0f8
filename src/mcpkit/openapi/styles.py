"""A parameter's value as the text its `style` and `explode` put on the wire (OpenAPI's
parameter serialization, after RFC 6570), without I/O.

Scalars are written as JSON writes them (`true`, `3`, `2.5`); the text of each value is
percent-encoded in a path, a query or a cookie (everything but RFC 3986's unreserved
characters, so a `,` inside a value is `%2C` and never read as a delimiter), and the
delimiters the style adds are written as the specification's style examples show them.
Header values are not encoded: a value holding a line break or a NUL cannot be a header and
is refused (`ValueError`) before anything is sent.

| style (where) | explode=false | explode=true |
| --- | --- | --- |
| simple (path, header) | `blue,black,brown`, `R,100,G,200` | `blue,black,brown`, `R=100,G=200` |
| label (path) | `.blue,black,brown`, `.R,100,G,200` | `.blue.black.brown`, `.R=100.G=200` |
| matrix (path) | `;color=blue,black`, `;color=R,100,G,200` | `;color=blue;color=black`, `;R=100;G=200` |
| form (query, cookie) | `color=blue,black`, `color=R,100,G,200` | `color=blue&color=black`, `R=100&G=200` |
| spaceDelimited (query) | `color=blue%20black` | as form |
| pipeDelimited (query) | `color=blue%7Cblack` | as form |
| deepObject (query) | | `color%5BR%5D=100&color%5BG%5D=200` |

Imports: the standard library and orjson.
"""

from __future__ import annotations

from typing import Any, Final
from urllib.parse import quote

import orjson

__all__ = [
    "DEFAULT_STYLES",
    "STYLES",
    "cookie_pairs",
    "header_value",
    "path_value",
    "query_pairs",
    "scalar_text",
]

DEFAULT_STYLES: Final = {"path": "simple", "query": "form", "header": "simple", "cookie": "form"}
STYLES: Final = {
    "path": frozenset({"simple", "label", "matrix"}),
    "query": frozenset({"form", "spaceDelimited", "pipeDelimited", "deepObject"}),
    "header": frozenset({"simple"}),
    "cookie": frozenset({"form"}),
}
_RESERVED_KEPT: Final = ":/?[]@!$'()*+,;"
"""What `allowReserved` leaves unencoded in a query value (all of RFC 3986's reserved
characters but the query's own delimiters `&`, `=` and `#`)."""
_BAD_HEADER: Final = frozenset("\r\n\x00")


def scalar_text(value: Any) -> str:
    """A value as one piece of text: strings as they are, other JSON as JSON writes it."""
    if isinstance(value, str):
        return value
    if value is None:
        return ""
    return orjson.dumps(value).decode()


def _enc(value: Any, safe: str = "") -> str:
    return quote(scalar_text(value), safe=safe)


def _items(value: dict[str, Any], joiner: str, safe: str = "") -> list[str]:
    return [f"{_enc(k, safe)}{joiner}{_enc(v, safe)}" for k, v in value.items()]


def _flat(value: dict[str, Any], safe: str = "") -> list[str]:
    return [part for k, v in value.items() for part in (_enc(k, safe), _enc(v, safe))]


def path_value(name: str, value: Any, style: str, explode: bool) -> str:
    """The text that takes `{name}`'s place in the path."""
    if style == "label":
        prefix, sep = ".", "." if explode else ","
        if isinstance(value, list):
            return prefix + sep.join(_enc(v) for v in value)
        if isinstance(value, dict):
            return prefix + sep.join(_items(value, "=") if explode else _flat(value))
        return prefix + _enc(value)
    if style == "matrix":
        key = _enc(name)
        if isinstance(value, list):
            if explode:
                return "".join(f";{key}={_enc(v)}" for v in value)
            return f";{key}" + (f"={','.join(_enc(v) for v in value)}" if value else "")
        if isinstance(value, dict):
            if explode:
                return "".join(f";{part}" for part in _items(value, "="))
            return f";{key}=" + ",".join(_flat(value))
        return f";{key}={_enc(value)}"
    if isinstance(value, list):
        return ",".join(_enc(v) for v in value)
    if isinstance(value, dict):
        return ",".join(_items(value, "=") if explode else _flat(value))
    return _enc(value)


def query_pairs(name: str, value: Any, style: str, explode: bool,
                allow_reserved: bool = False) -> list[str]:
    """The `key=value` parts of the query string that carry the parameter."""
    safe = _RESERVED_KEPT if allow_reserved else ""
    key = _enc(name)
    if style == "deepObject" and isinstance(value, dict):
        return [f"{quote(f'{name}[{k}]', safe='')}={_enc(v, safe)}" for k, v in value.items()]
    delimiter = {"spaceDelimited": "%20", "pipeDelimited": "%7C"}.get(style)
    if isinstance(value, list):
        if explode and delimiter is None:
            return [f"{key}={_enc(v, safe)}" for v in value]
        return [f"{key}=" + (delimiter or ",").join(_enc(v, safe) for v in value)]
    if isinstance(value, dict):
        if explode and delimiter is None:
            return _items(value, "=", safe)
        return [f"{key}=" + (delimiter or ",").join(_flat(value, safe))]
    return [f"{key}={_enc(value, safe)}"]


def header_value(name: str, value: Any, explode: bool) -> str:
    """The header's value (simple style), refused when no header can carry it."""
    if isinstance(value, list):
        text = ",".join(scalar_text(v) for v in value)
    elif isinstance(value, dict):
        text = ",".join(f"{k}={scalar_text(v)}" if explode else f"{k},{scalar_text(v)}"
                        for k, v in value.items())
    else:
        text = scalar_text(value)
    if _BAD_HEADER & set(text):
        raise ValueError(f"the value of header {name!r} holds a line break or a NUL, which "
                         "no HTTP header can carry")
    return text


def cookie_pairs(name: str, value: Any, explode: bool) -> list[str]:
    """The `name=value` parts of the Cookie header that carry the parameter (form style)."""
    key = _enc(name)
    if isinstance(value, list):
        if explode:
            return [f"{key}={_enc(v)}" for v in value]
        return [f"{key}=" + ",".join(_enc(v) for v in value)]
    if isinstance(value, dict):
        if explode:
            return _items(value, "=")
        return [f"{key}=" + ",".join(_flat(value))]
    return [f"{key}={_enc(value)}"]
