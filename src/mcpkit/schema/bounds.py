"""The server's bounds on a user's raw JSON Schema, checked once at registration: where each
`$ref` leads, and how much work checking one value against the schema can take.

The walk itself is shared with the client (`mcpkit.schema.walk`); this module holds
what the server accepts and how it says no to a server author. Refused:

- more than `MAX_NODES` subschemas (list items included), or nesting deeper than `MAX_DEPTH`;
- a `$ref`/`$dynamicRef`/`$recursiveRef` that leaves the document, or names nothing in it;
- a `$ref` loop that never descends into the value;
- more than `MAX_FAN_OUT` subschemas applying to one value with every `$ref` followed, or more
  than `MAX_EXPANDED` spanned in all.

What this cannot bound, recursion that descends into the value, is bounded per call by
`mcpkit.schema.raw`.

Imports: the standard library, `mcpkit.schema.walk` and `mcpkit.schema.walked`.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Final

from mcpkit.schema.walk import check_schema_structure
from mcpkit.schema.walked import Limits, Wording

__all__ = [
    "MAX_DEPTH",
    "MAX_EXPANDED",
    "MAX_FAN_OUT",
    "MAX_NODES",
    "check_structure",
]

MAX_DEPTH: Final = 128
MAX_NODES: Final = 20_000
MAX_FAN_OUT: Final = 10_000
MAX_EXPANDED: Final = 1_000_000

_LIMITS: Final = Limits(MAX_NODES, MAX_DEPTH, MAX_FAN_OUT, MAX_EXPANDED)
_TOO_BIG: Final = (
    "{where}: schema is too large or too deeply nested (limits: {max_nodes} subschemas, "
    "depth {max_depth})"
)
_NOTHING: Final = "{where}: {keyword} {ref!r} at {at} points to nothing in the schema"
_WORDING: Final = Wording(
    too_many=_TOO_BIG,
    too_deep=_TOO_BIG,
    outside=(
        "{where}: {keyword} {ref!r} at {at}: {kind} {keyword} not allowed; only same-document "
        "references (such as '#/$defs/name' or an $anchor) are resolved"
    ),
    no_target=_NOTHING,
    no_anchor=_NOTHING,
)


def check_structure(schema: Mapping[str, Any], where: str) -> None:
    """Raise `ValueError` naming `where` and the offending place when the schema is refused."""
    check_schema_structure(schema, where, _LIMITS, _WORDING)
