"""Where each JSON Schema dialect puts subschemas, base URIs and anchors: the facts a validator
resolves references by, for the walk of a schema's structure (`mcpkit.schema.walk`).

An `$id` or an anchor counts only in a subschema position reached from the root through
positions (the registry a validator builds never looks elsewhere); draft-04 spells the id `id`;
draft-07 and older ignore an id beside `$ref` and declare anchors with `"$id": "#name"`.

Pure data: the standard library and `mcpkit.schema.dialects` only.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Final

from mcpkit.schema.dialects import DEFAULT_DIALECT, dialect_of

__all__ = [
    "Places",
    "places_of",
]


@dataclass(frozen=True, slots=True)
class Places:
    """Where a dialect's ids and anchors count (as the JSON Schema specifications place them)."""

    id_keyword: str
    id_beside_ref: bool
    """Whether an id counts in an object that also has `$ref` (not in draft-07 and older)."""
    anchors: tuple[str, ...]
    """Keywords declaring an anchor; draft-07 and older declare one with `$id: "#name"`."""
    one: frozenset[str]
    """Keywords whose value (an object) is a subschema."""
    many: frozenset[str]
    """Keywords whose items are subschemas."""
    named: frozenset[str]
    """Keywords whose values (the objects among them) are subschemas."""

    def base_id(self, node: Mapping[str, Any]) -> str | None:
        """The id that gives `node` a base URI of its own, as the dialect reads it."""
        own_id = node.get(self.id_keyword)
        if not isinstance(own_id, str) or (not self.id_beside_ref and "$ref" in node):
            return None
        if not self.anchors and own_id.startswith("#"):
            return None  # draft-07 and older: an anchor
        return own_id

    def anchor_names(self, node: Mapping[str, Any]) -> list[tuple[str, str]]:
        """(keyword, name) of each anchor `node` declares."""
        if not self.anchors:
            legacy = node.get(self.id_keyword)
            if isinstance(legacy, str) and legacy.startswith("#") and len(legacy) > 1:
                return [(self.id_keyword, legacy[1:])]
            return []
        return [(k, name) for k in self.anchors if isinstance(name := node.get(k), str)]


_LEGACY_MANY: Final = frozenset({"allOf", "anyOf", "oneOf", "items"})
_LEGACY_NAMED: Final = frozenset({"definitions", "patternProperties", "properties", "dependencies"})
_MODERN_NAMED: Final = frozenset(
    {"$defs", "definitions", "dependentSchemas", "patternProperties", "properties"}
)
_LATER: Final = frozenset({"contains", "contentSchema", "else", "if", "not", "propertyNames",
                           "then", "unevaluatedItems", "unevaluatedProperties",
                           "additionalProperties"})
_DIALECTS: Final = {
    "json-schema.org/draft/2020-12/schema": Places(
        "$id", True, ("$anchor", "$dynamicAnchor"), _LATER | {"items"},
        frozenset({"allOf", "anyOf", "oneOf", "prefixItems"}), _MODERN_NAMED,
    ),
    "json-schema.org/draft/2019-09/schema": Places(
        "$id", True, ("$anchor",), _LATER | {"items", "additionalItems"}, _LEGACY_MANY,
        _MODERN_NAMED,
    ),
    "json-schema.org/draft-07/schema": Places(
        "$id", False, (), frozenset({"additionalItems", "additionalProperties", "contains",
                                     "else", "if", "items", "not", "propertyNames", "then"}),
        _LEGACY_MANY, _LEGACY_NAMED,
    ),
    "json-schema.org/draft-06/schema": Places(
        "$id", False, (), frozenset({"additionalItems", "additionalProperties", "contains",
                                     "items", "not", "propertyNames"}),
        _LEGACY_MANY, _LEGACY_NAMED,
    ),
    "json-schema.org/draft-04/schema": Places(
        "id", False, (), frozenset({"additionalItems", "additionalProperties", "items", "not"}),
        _LEGACY_MANY, _LEGACY_NAMED,
    ),
}


def places_of(schema: Mapping[str, Any]) -> Places:
    """The places of the schema's dialect (2020-12 for one this table does not know)."""
    return _DIALECTS.get(dialect_of(schema) or "", _DIALECTS[DEFAULT_DIALECT])
