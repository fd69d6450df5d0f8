"""The base of every typed result the client returns: a server's object read through typed
properties, the wire dict one attribute away (`.raw`).

Each class built on `WireObject` wraps the dict a server sent and reads it through properties
named in Python's spelling (`is_error` for `isError`, `input_schema` for `inputSchema`), each
typed for the member it reads, so an application's type checker sees `str` or
`list[ContentBlock]` where a dict gave `Any`. Nothing is copied or parsed until a property is
read: a list of a thousand tools costs a thousand small objects, not a thousand conversions.

A server's answer is untrusted input: a property whose member has the wrong JSON type raises
`ProtocolViolation` naming the call and the member, rather than handing back a value its
annotation does not describe. A member the schema makes optional reads as None when absent.

Every object is also a read-only `Mapping` over its wire dict, because results were plain dicts
before they were objects: `result["content"]`, `result.get("isError")` and `result == {...}`
go on working, each with a `ResultAsDictWarning` (a `DeprecationWarning`) pointing at the line.
What no longer works is what a `Mapping` is not: `isinstance(result, dict)`, `json.dumps(result)`
and changing the result in place read `result.raw` instead.

May import `mcpkit.errors`, `mcpkit.schema.problems` and the standard library.
"""

from __future__ import annotations

import warnings
from collections.abc import ItemsView, Iterator, KeysView, Mapping, ValuesView
from typing import Any, Final, TypeVar, cast, overload

from mcpkit.errors import ProtocolViolation
from mcpkit.schema.problems import describe_value

__all__ = [
    "ResultAsDictWarning",
    "WireObject",
    "item_of",
    "typed_list",
]

V = TypeVar("V")
W = TypeVar("W", bound="WireObject")

_ABSENT: Final[Any] = object()


class ResultAsDictWarning(DeprecationWarning):
    """A result was read as a dict (`result["content"]`): read its attributes, or `.raw`."""


def _warn(obj: WireObject) -> None:
    name = type(obj).__name__
    warnings.warn(
        f"reading a {name} as a dict is deprecated: use its attributes (help({name})), or "
        f".raw for the dict the server sent", ResultAsDictWarning, stacklevel=3)


def _fits(value: Any, kind: type) -> bool:
    return isinstance(value, kind) and not (kind is int and isinstance(value, bool))


class WireObject(Mapping[str, Any]):
    """One object of a server's answer: `raw` is the dict as it arrived, `where` names it in
    errors (`tools/call 'add'`, `tools/list tools[3]`)."""

    __slots__ = ("raw", "where")

    def __init__(self, raw: dict[str, Any], where: str | None = None) -> None:
        if not isinstance(raw, dict):
            raise ProtocolViolation(f"{where or type(self).__name__}: expected an object, got "
                                    f"{describe_value(raw)}")
        self.raw = raw
        """The object exactly as the server sent it (do not change it: the client's cache may
        hold the same dict)."""
        self.where = where or type(self).__name__
        """How errors about this object name it."""

    # -- members, read and checked -----------------------------------------------------------

    def _get(self, key: str, kind: type[V], expected: str) -> V:
        value = self.raw.get(key, _ABSENT)
        if value is _ABSENT:
            raise ProtocolViolation(f"{self.where}: the result has no {key!r} member")
        if not _fits(value, kind):
            raise ProtocolViolation(
                f"{self.where}: {key!r} is {describe_value(value)}, not {expected}")
        return cast(V, value)

    def _opt(self, key: str, kind: type[V], expected: str) -> V | None:
        value = self.raw.get(key)
        if value is None:
            return None
        if not _fits(value, kind):
            raise ProtocolViolation(
                f"{self.where}: {key!r} is {describe_value(value)}, not {expected}")
        return cast(V, value)

    def _str(self, key: str) -> str:
        return self._get(key, str, "a string")

    def _opt_str(self, key: str) -> str | None:
        return self._opt(key, str, "a string")

    def _opt_dict(self, key: str) -> dict[str, Any] | None:
        return self._opt(key, dict, "an object")

    def _list(self, key: str) -> list[Any]:
        return self._get(key, list, "a list")

    @property
    def meta(self) -> dict[str, Any] | None:
        """The object's `_meta`, when it has one."""
        return self._opt_dict("_meta")

    # -- the deprecated Mapping view ---------------------------------------------------------

    def __getitem__(self, key: str) -> Any:
        _warn(self)
        return self.raw[key]

    def __iter__(self) -> Iterator[str]:
        _warn(self)
        return iter(self.raw)

    def __len__(self) -> int:
        _warn(self)
        return len(self.raw)

    def __contains__(self, key: object) -> bool:
        _warn(self)
        return key in self.raw

    @overload
    def get(self, key: str, /) -> Any: ...
    @overload
    def get(self, key: str, default: Any, /) -> Any: ...

    def get(self, key: str, default: Any = None, /) -> Any:
        _warn(self)
        return self.raw.get(key, default)

    def keys(self) -> KeysView[str]:
        _warn(self)
        return self.raw.keys()

    def items(self) -> ItemsView[str, Any]:
        _warn(self)
        return self.raw.items()

    def values(self) -> ValuesView[Any]:
        _warn(self)
        return self.raw.values()

    def __bool__(self) -> bool:
        return bool(self.raw)

    def __eq__(self, other: object) -> bool:
        if isinstance(other, WireObject):
            return type(self) is type(other) and self.raw == other.raw
        if isinstance(other, Mapping):
            _warn(self)
            return self.raw == dict(other)
        return NotImplemented

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.raw!r})"

def item_of(cls: type[W], raw: Any, where: str) -> W:
    """`raw` as a `cls`, refused unless it is an object."""
    if not isinstance(raw, dict):
        raise ProtocolViolation(f"{where}: expected an object, got {describe_value(raw)}")
    return cls(raw, where)


def typed_list(cls: type[W], items: list[dict[str, Any]], where: str) -> list[W]:
    """`items` of a list result, each wrapped in `cls` and named by its place."""
    return [cls(item, f"{where}[{i}]") for i, item in enumerate(items)]
