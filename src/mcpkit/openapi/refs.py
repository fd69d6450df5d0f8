"""Following a document's `$ref`s to the objects they name.

Objects that are not schemas (parameters, request bodies, responses, path items) are used as
what their `$ref` names. Schemas are not inlined: each schema a `$ref` names becomes one entry
of the `$defs` of the schema being published (`mcpkit.openapi.dialect`), so a recursive schema
stays recursive instead of being unrolled. Every `$ref` was checked when the document was read
(`mcpkit.openapi.documents`): it stays in the document, names something, and no chain of them
loops; the hop limit here is a second guard only.

Imports: the standard library and `mcpkit.schema.pointers`.
"""

from __future__ import annotations

from typing import Any, Final

from mcpkit.openapi.documents import Document, OpenAPIError
from mcpkit.schema.pointers import MISSING, resolve_pointer

__all__ = [
    "deref",
    "target",
]

_MAX_HOPS: Final = 64


def target(document: Document, ref: Any, where: str) -> Any:
    """What the `$ref` `ref` names in the document."""
    if not isinstance(ref, str) or not ref.startswith("#"):
        raise OpenAPIError(f"{document.source}: {where}: $ref {ref!r} leaves the document; "
                           "bundle the document into one file whose references start with '#/'")
    found = resolve_pointer(document.data, ref[1:])
    if found is MISSING:
        raise OpenAPIError(f"{document.source}: {where}: $ref {ref!r} points to nothing in the "
                           "document")
    return found


def deref(document: Document, node: Any, where: str) -> Any:
    """`node`, or what its chain of `$ref`s leads to when it is a Reference Object."""
    for _ in range(_MAX_HOPS):
        if not isinstance(node, dict) or "$ref" not in node:
            return node
        node = target(document, node["$ref"], where)
    raise OpenAPIError(f"{document.source}: {where}: more than {_MAX_HOPS} $refs in a row")
