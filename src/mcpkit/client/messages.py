"""What the client's answers must hold, whatever the era.

`require_list`: the one list member every answer of a method holds. What a request carries in
each era is its adapter's (`mcpkit.client.modern`, `mcpkit.client.legacy.shapes`).

May import `mcpkit.types` and `mcpkit.errors`; no I/O.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from mcpkit.errors import ProtocolViolation

__all__ = ["require_list"]


def require_list(result: Mapping[str, Any], member: str, what: str) -> None:
    """Refuse an answer to `what` without its `member` list: the caller would index into it."""
    if type(result.get(member)) is not list:
        raise ProtocolViolation(f"{what}: the result has no {member} list")
