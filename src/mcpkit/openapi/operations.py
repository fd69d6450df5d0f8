"""The operations of a document, each with its parameters merged, its name and what it becomes.

A path item's parameters apply to each of its operations, an operation's own parameter of the
same name and location replacing it. Names come from `operationId`, made into a tool name
(1 to 128 of `A-Z a-z 0-9 _ - .`, every other run of characters one `_`); an operation without
one is named from its method and path (`get_pets_petId`). Two operations whose names come out
the same get `_2`, `_3`, ... in document order, so every name is unique.

Imports: the standard library and `mcpkit.openapi` (documents, options, refs).
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Final

from mcpkit.openapi.documents import METHODS, Document, OpenAPIError
from mcpkit.openapi.options import OpenAPIOptions, Route
from mcpkit.openapi.refs import deref

__all__ = [
    "Operation",
    "operations_of",
    "route_of",
]

_NAME: Final = re.compile(r"^[A-Za-z0-9_.-]{1,128}$")
_OTHER: Final = re.compile(r"[^A-Za-z0-9_.-]+")
_UNDERSCORES: Final = re.compile(r"__+")
_MAX_NAME: Final = 120  # room for a "_NN" suffix within 128


@dataclass(frozen=True, slots=True)
class Operation:
    """One operation of the document, its references followed."""

    method: str
    """Upper case: `GET`, `POST`, ..."""
    path: str
    """The path template, `/pets/{petId}`."""
    data: Mapping[str, Any]
    parameters: tuple[Mapping[str, Any], ...]
    name: str
    """The unique tool or resource name it is published under."""
    servers: tuple[Any, ...]
    """The servers of the operation or its path item (the document's apply when empty)."""

    @property
    def operation_id(self) -> str | None:
        value = self.data.get("operationId")
        return value if isinstance(value, str) else None

    @property
    def tags(self) -> tuple[str, ...]:
        tags = self.data.get("tags")
        return tuple(t for t in tags if isinstance(t, str)) if isinstance(tags, list) else ()

    @property
    def label(self) -> str:
        """How messages name it: `GET /pets/{petId} (getPet)`."""
        named = f" ({self.operation_id})" if self.operation_id else ""
        return f"{self.method} {self.path}{named}"

    def text(self, key: str) -> str | None:
        value = self.data.get(key)
        return value.strip() if isinstance(value, str) and value.strip() else None


def _sanitized(text: str) -> str:
    return _UNDERSCORES.sub("_", _OTHER.sub("_", text)).strip("_")[:_MAX_NAME].strip("_")


def _generated(method: str, path: str) -> str:
    return _sanitized(f"{method.lower()}_{path.replace('{', '').replace('}', '')}") or (
        method.lower())


def operations_of(document: Document, options: OpenAPIOptions) -> list[Operation]:
    """Every operation, in document order, with a unique name."""
    paths = document.data.get("paths")
    found: list[Operation] = []
    if not isinstance(paths, dict):
        return found
    taken: set[str] = set()
    wanted = dict(options.names)
    for name in wanted.values():
        if not isinstance(name, str) or not _NAME.match(name):
            raise ValueError(f"OpenAPIOptions(names=...): {name!r} is not a tool name (1-128 "
                             "characters from A-Z a-z 0-9 _ - .)")
    for path, raw_item in paths.items():
        item = deref(document, raw_item, f"path {path}")
        if not isinstance(item, dict):
            continue
        shared = _parameters(document, item.get("parameters"), f"path {path}")
        for method in METHODS:
            data = item.get(method)
            if not isinstance(data, dict):
                continue
            where = f"{method.upper()} {path}"
            own = _parameters(document, data.get("parameters"), where)
            merged = {**shared, **own}
            operation_id = data.get("operationId")
            if isinstance(operation_id, str) and operation_id in wanted:
                base = wanted.pop(operation_id)
            else:
                base = (_sanitized(operation_id) if isinstance(operation_id, str) else "") or (
                    _generated(method, path))
            name, n = base, 1
            while name in taken:
                n += 1
                name = f"{base[:_MAX_NAME]}_{n}"
            taken.add(name)
            servers = data.get("servers") or item.get("servers") or ()
            found.append(Operation(method.upper(), path, data, tuple(merged.values()), name,
                                   tuple(servers) if isinstance(servers, list) else ()))
    if wanted:
        raise OpenAPIError(f"{document.source}: OpenAPIOptions(names=...) names operation ids "
                           f"the document does not have: {', '.join(sorted(wanted))}")
    return found


def _parameters(document: Document, listed: Any, where: str
                ) -> dict[tuple[str, str], Mapping[str, Any]]:
    """(name, location) -> the Parameter Object, references followed."""
    out: dict[tuple[str, str], Mapping[str, Any]] = {}
    if not isinstance(listed, list):
        return out
    for raw in listed:
        parameter = deref(document, raw, f"{where}: a parameter")
        if isinstance(parameter, dict) and isinstance(parameter.get("name"), str) and (
                isinstance(parameter.get("in"), str)):
            out[(parameter["name"], parameter["in"])] = parameter
    return out


def route_of(operation: Operation, options: OpenAPIOptions, can_be_resource: bool) -> Route:
    """What the first rule matching `operation` makes of it; a tool when none does. A rule to
    `"resource"` passes over an operation no URI can name (`can_be_resource` False)."""
    for rule in options.rules:
        if rule.to == "resource" and not can_be_resource:
            continue
        if rule.matches(operation.method, operation.path, operation.tags, operation.operation_id):
            return rule.to
    return "tool"
