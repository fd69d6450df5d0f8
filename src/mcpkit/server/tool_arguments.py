"""A call's arguments, checked against the tool's compiled input schema, and refused when an
integer in them is not the number the client sent (the wire hands a literal past 64 bits over
as the nearest double).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from mcpkit.errors import ToolError
from mcpkit.schema import ArgumentsError
from mcpkit.server.content import JSON_INTEGERS, big_integer

if TYPE_CHECKING:
    from mcpkit.server.tools import Tool

__all__ = [
    "arguments_of",
]


def arguments_of(tool: Tool, params: Mapping[str, Any]) -> dict[str, Any] | dict[str, Any]:
    """Validated keyword arguments, or an isError result the model can act on."""
    args = params.get("arguments")  # an object or null: the row's params check saw to it
    try:
        kwargs = tool.signature.validate(args)
    except ArgumentsError as exc:
        raise ToolError(f"Invalid arguments for tool {tool.name!r}: {exc}") from None
    if not tool.scans_arguments:
        return kwargs
    for key, value in kwargs.items():
        kind = type(value)
        if kind in _SCALARS:
            continue
        raw = args.get(key) if args is not None else None
        found = big_integer(value)
        place = found[0] if found is not None else _rounded(raw, value)
        if place is not None:
            raise ToolError(f"Invalid arguments for tool {tool.name!r}: {_out_of_range(key, place)}")
    return kwargs


_SCALARS = frozenset({str, int, float, bool, type(None)})
"""Argument types the check leaves nothing to look at in: a typed integer made from a double
past 64 bits is refused by the check itself (`schema.checkers.check_int`), and any other integer
came from the wire as one, so in range."""


def _faithful(raw: Any, value: int) -> bool:
    """Whether an integer argument is the number the client sent.

    The wire decodes an integer literal inside the 64-bit range as that integer and one
    outside it as the nearest double, which the argument check then takes as an integer: so
    an integer made from a double is the client's only strictly inside the range (-2**63 - 1
    arrives as the double -2**63).
    """
    if type(raw) is float:
        return -(2**63) < value < 2**64
    return value in JSON_INTEGERS


def _rounded(raw: Any, value: Any) -> str | None:
    """The place of the first integer in `value` (arguments after the check) that is not the
    number the client sent in `raw` (as decoded), walking both alike.

    Walked with a stack rather than by recursion: an argument may be nested as deep as the
    decoder allows (1024 levels), past Python's recursion limit. A place is kept as a chain
    of (parent, step) and spelled out only for the integer found."""
    stack: list[tuple[Any, Any, Any]] = [(raw, value, None)]
    while stack:
        sent, item, path = stack.pop()
        kind = type(item)
        if kind is int:
            if not _faithful(sent, item):
                return _spelled(path)
        elif kind is dict and type(sent) is dict:
            stack.extend(reversed([(sent.get(key), inner, (path, f".{key}"))
                                   for key, inner in item.items()]))
        elif isinstance(item, list | tuple) and isinstance(sent, list):
            stack.extend(reversed([(got, inner, (path, f"[{i}]"))
                                   for i, (got, inner) in enumerate(zip(sent, item, strict=False))]))
    return None


def _spelled(path: Any) -> str:
    steps: list[str] = []
    while path is not None:
        path, step = path
        steps.append(step)
    return "".join(reversed(steps))


def _out_of_range(key: str, place: str) -> str:
    """Why an integer argument is refused: taking it would give the tool a number the client
    never sent (the wire hands a literal past 64 bits over as the nearest double)."""
    where = f"{key}{'' if not place or place[0] in '.[' else '.'}{place}"
    return (
        f"arguments.{where}: an integer outside the 64-bit range a JSON integer can carry "
        "(-2**63 to 2**64-1); send it as a string"
    )
