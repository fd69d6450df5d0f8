"""OpenAPI Schema Objects as the JSON Schema 2020-12 that tool and resource schemas must be.

One `SchemaSet` gathers what one published schema needs: each schema a `$ref` names becomes an
entry of its `$defs`, translated once (a worklist, not recursion through references, so a
recursive schema stays one entry that refers to itself), and the `$ref` points there.

OpenAPI 3.1 schemas are 2020-12 already, with a few keywords of their own. OpenAPI 3.0 schemas
are an older dialect, translated keyword by keyword:

| 3.0 | 2020-12 |
| --- | --- |
| `nullable: true` beside `type` | `"null"` added to `type` (and `None` to an `enum`) |
| `nullable: true` without `type` (`allOf: [$ref], nullable`) | `anyOf: [the schema, {"type": "null"}]` |
| `exclusiveMinimum: true` with `minimum: n` | `exclusiveMinimum: n` (likewise for maximum) |
| `exclusiveMinimum: false` | left out |
| keywords beside a `$ref` (which 3.0 ignores) | left out, but `description` and `title` |

In both: `example` becomes `examples: [example]`; `discriminator`, `xml`, `externalDocs`,
`$schema`, `$id`, `$comment`, anchors and `x-` extensions are left out (they would only cost
the model reading the schema; a `$ref` here is always a pointer into the document);
`$dynamicRef` and `$recursiveRef` are refused (`UnsupportedOperationError`).

The direction matters for `readOnly` and `writeOnly` (OpenAPI: a read-only property is sent
in responses only): in a request's schema a `readOnly` property is left out, with its name
dropped from `required`; in a response's, a `writeOnly` property's name is dropped from
`required`.

Imports: the standard library and `mcpkit.openapi` (documents, refs).
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any, Final, Literal

from mcpkit.errors import UnsupportedOperationError
from mcpkit.openapi.documents import Document
from mcpkit.openapi.refs import target

__all__ = [
    "Direction",
    "SchemaSet",
    "UnsupportedOperationError",
]

Direction = Literal["request", "response"]

_SCHEMA_MAPS: Final = frozenset({"properties", "patternProperties", "$defs", "definitions",
                                 "dependentSchemas"})
_SCHEMA_LISTS: Final = frozenset({"allOf", "anyOf", "oneOf", "prefixItems"})
_SCHEMAS: Final = frozenset({"items", "additionalProperties", "not", "if", "then", "else",
                             "contains", "propertyNames", "unevaluatedItems",
                             "unevaluatedProperties", "contentSchema", "additionalItems"})
_DATA: Final = frozenset({"enum", "const", "default", "examples"})
_DROPPED: Final = frozenset({"discriminator", "xml", "externalDocs", "$schema", "$id",
                             "$comment", "nullable", "example", "$anchor", "$dynamicAnchor",
                             "$recursiveAnchor"})
_REFUSED: Final = frozenset({"$dynamicRef", "$recursiveRef"})
_KEPT_BESIDE_REF_30: Final = ("description", "title")
_NAME: Final = re.compile(r"[^A-Za-z0-9_.-]+")


class SchemaSet:
    """The schemas of one published schema, and the `$defs` they share."""

    def __init__(self, document: Document, direction: Direction) -> None:
        self.document = document
        self.direction = direction
        self.v30 = document.version == "3.0"
        self.defs: dict[str, Any] = {}
        self._names: dict[str, str] = {}
        """A `$ref` as written -> the name of its entry in `$defs`."""
        self._todo: list[tuple[str, str]] = []

    def schema(self, node: Any, where: str) -> Any:
        """`node` translated; the schemas its `$ref`s name are queued for `$defs`."""
        return self._node(node, where)

    def resolved(self, node: Any) -> Any:
        """The schema `node` stands for once its `$ref`s are followed (for deciding what a
        schema accepts: an object of simple properties, a scalar)."""
        for _ in range(64):
            if not isinstance(node, dict) or not isinstance(node.get("$ref"), str):
                return node
            node = target(self.document, node["$ref"], "schema")
        return node

    def attach(self, root: dict[str, Any]) -> dict[str, Any]:
        """`root` with the `$defs` every queued reference needs, each translated once."""
        while self._todo:
            ref, name = self._todo.pop()
            self.defs[name] = self._node(target(self.document, ref, f"$ref {ref!r}"),
                                         f"$ref {ref!r}")
        if self.defs:
            root = {**root, "$defs": {**root.get("$defs", {}), **self.defs}}
        return root

    # -- one schema -------------------------------------------------------------------------

    def _ref(self, ref: Any, where: str) -> str:
        if not isinstance(ref, str) or not ref.startswith("#/"):
            raise UnsupportedOperationError(f"{where}: $ref {ref!r} is not a pointer into the document")
        name = self._names.get(ref)
        if name is None:
            target(self.document, ref, where)  # names something, or refused now
            base = _NAME.sub("_", ref.rsplit("/", 1)[-1].replace("~1", "/").replace("~0", "~"))
            base = base.strip("_") or "schema"
            name, n = base, 1
            taken = set(self._names.values())
            while name in taken:
                n += 1
                name = f"{base}_{n}"
            self._names[ref] = name
            self._todo.append((ref, name))
        return f"#/$defs/{name}"

    def _node(self, node: Any, where: str) -> Any:
        if isinstance(node, bool):
            return node
        if not isinstance(node, Mapping):
            raise UnsupportedOperationError(f"{where}: a schema is an object, not {type(node).__name__}")
        refused = sorted(_REFUSED & node.keys())
        if refused:
            raise UnsupportedOperationError(f"{where}: {refused[0]} is not supported in OpenAPI schemas here")
        if "$ref" in node:
            out: dict[str, Any] = {"$ref": self._ref(node["$ref"], where)}
            if self.v30:  # 3.0 ignores what sits beside a $ref
                out.update((k, node[k]) for k in _KEPT_BESIDE_REF_30
                           if isinstance(node.get(k), str))
                return out
        else:
            out = {}
        for key, value in node.items():
            if key == "$ref" or key in _DROPPED or key.startswith("x-"):
                continue
            if key in _DATA:
                out[key] = value
            elif key in _SCHEMA_MAPS and isinstance(value, Mapping):
                out[key] = {name: self._node(sub, where) for name, sub in value.items()}
            elif key in _SCHEMA_LISTS and isinstance(value, list):
                out[key] = [self._node(sub, where) for sub in value]
            elif key in _SCHEMAS and isinstance(value, Mapping | bool):
                out[key] = self._node(value, where)
            else:
                out[key] = value
        if "example" in node and "examples" not in node:
            out["examples"] = [node["example"]]
        if self.v30:
            _exclusive_bounds(out)
        self._direction(out)
        if self.v30 and node.get("nullable") is True:
            return _nullable(out)
        return out

    def _direction(self, out: dict[str, Any]) -> None:
        properties = out.get("properties")
        if not isinstance(properties, dict):
            return
        flag = "readOnly" if self.direction == "request" else "writeOnly"
        hidden = {name for name, sub in properties.items()
                  if isinstance(sub, dict) and sub.get(flag) is True}
        if not hidden:
            return
        if self.direction == "request":
            out["properties"] = {k: v for k, v in properties.items() if k not in hidden}
        required = out.get("required")
        if isinstance(required, list):
            kept = [name for name in required if name not in hidden]
            if kept:
                out["required"] = kept
            else:
                del out["required"]


def _exclusive_bounds(out: dict[str, Any]) -> None:
    """3.0's boolean `exclusiveMinimum`/`exclusiveMaximum` as 2020-12's numbers."""
    for exclusive, bound in (("exclusiveMinimum", "minimum"), ("exclusiveMaximum", "maximum")):
        flag = out.get(exclusive)
        if not isinstance(flag, bool):
            continue
        del out[exclusive]
        if flag and bound in out:
            out[exclusive] = out.pop(bound)


def _nullable(out: dict[str, Any]) -> dict[str, Any]:
    kind = out.get("type")
    if isinstance(kind, str):
        out["type"] = [kind, "null"]
    elif isinstance(kind, list):
        if "null" not in kind:
            out["type"] = [*kind, "null"]
    elif out:
        annotations: dict[str, Any] = {k: out.pop(k) for k in ("description", "title") if k in out}
        return {"anyOf": [out, {"type": "null"}], **annotations}
    else:
        return out
    enum = out.get("enum")
    if isinstance(enum, list) and None not in enum:
        out["enum"] = [*enum, None]
    return out
