"""What the client's answers must hold, whatever the era.

`require_list`: the one list member every answer of a method holds. What a request carries in
each era is its adapter's (`mcpkit.client.modern`, `mcpkit.client.legacy.shapes`).

May import `mcpkit.types` and `mcpkit.errors`; no I/O.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from mcpkit.errors import InvalidParamsError, ProtocolViolation, ResourceNotFoundError

__all__ = [
    "completion_of",
    "read_error",
    "require_list",
]


def require_list(result: Mapping[str, Any], member: str, what: str) -> None:
    """Refuse an answer to `what` without its `member` list: the caller would index into it."""
    if type(result.get(member)) is not list:
        raise ProtocolViolation(f"{what}: the result has no {member} list")


def completion_of(result: Mapping[str, Any]) -> dict[str, Any]:
    """The `completion` object of a CompleteResult, refused when it has no `values` list."""
    completion = result.get("completion")
    if type(completion) is not dict or type(completion.get("values")) is not list:
        raise ProtocolViolation("completion/complete: the result has no completion.values")
    return completion


def read_error(exc: InvalidParamsError, uri: str) -> Exception:
    """What a -32602 answering `resources/read uri` raises as: not found when its data names
    that URI (RES-6; a legacy -32002 already arrives as the class), else itself."""
    data = exc.data
    if type(exc) is InvalidParamsError and type(data) is dict and data.get("uri") == uri:
        return ResourceNotFoundError(uri, exc.message)
    return exc
