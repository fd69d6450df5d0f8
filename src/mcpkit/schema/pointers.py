"""JSON pointers (RFC 6901) both ways, for the walk of a schema's structure
(`mcpkit.schema.walk`) and the OpenAPI reader's references: what a pointer written in a URI
fragment names in a document, and the pointer of a place the walk keeps. Standard library only.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Final
from urllib.parse import unquote

__all__ = [
    "MISSING",
    "pointer",
    "resolve_pointer",
]

MISSING: Final = object()
"""What `resolve_pointer` returns for a pointer that names nothing."""


def resolve_pointer(document: Any, fragment: str) -> Any:
    """What a JSON pointer, as written in a URI fragment (empty or starting with '/'), names in
    `document`; `MISSING` when it names nothing. The fragment is percent-decoded before it is
    split (RFC 6901, section 6), and a list index is ASCII digits."""
    node = document
    for raw in unquote(fragment).split("/")[1:]:
        token = raw.replace("~1", "/").replace("~0", "~")
        if isinstance(node, Mapping) and token in node:
            node = node[token]
        elif isinstance(node, list) and raw.isascii() and raw.isdigit() and int(raw) < len(node):
            node = node[int(raw)]
        else:
            return MISSING
    return node



def pointer(path: Any) -> str:
    """The JSON pointer of a place kept as (parent place, key) pairs (`Ref.path`)."""
    keys: list[str] = []
    while path is not None:
        path, key = path
        keys.append(str(key).replace("~", "~0").replace("/", "~1"))
    return "".join(f"/{key}" for key in reversed(keys))

