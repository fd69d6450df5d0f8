"""The `$defs` table that the nested classes of one derived schema share.

Every dataclass, TypedDict and pydantic model met while deriving one schema gets a single entry,
referred to as `{"$ref": "#/$defs/Name"}`, so a class used twice is described once and a
recursive class can refer to itself. Two different classes with the same name get distinct
names (`Address`, `Address2`); a pydantic model's own `$defs` are merged in, renamed where they
would collide and shared where they are identical.

Imports: the standard library only.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Final

__all__ = [
    "DEFS_PREFIX",
    "Defs",
    "ref_to",
]

DEFS_PREFIX: Final = "#/$defs/"


def ref_to(name: str) -> dict[str, Any]:
    return {"$ref": DEFS_PREFIX + name}


def _refers_to(node: Any, ref: str) -> bool:
    if isinstance(node, dict):
        return node.get("$ref") == ref or any(_refers_to(item, ref) for item in node.values())
    if isinstance(node, list):
        return any(_refers_to(item, ref) for item in node)
    return False


def _rename_refs(node: Any, renames: Mapping[str, str]) -> Any:
    if isinstance(node, dict):
        out = {key: _rename_refs(item, renames) for key, item in node.items()}
        ref = out.get("$ref")
        prefix = len(DEFS_PREFIX)
        if isinstance(ref, str) and ref.startswith(DEFS_PREFIX) and ref[prefix:] in renames:
            out["$ref"] = DEFS_PREFIX + renames[ref[prefix:]]
        return out
    if isinstance(node, list):
        return [_rename_refs(item, renames) for item in node]
    return node


class Defs:
    """Named schemas for one document, handed out under names that never collide."""

    def __init__(self) -> None:
        self.table: dict[str, dict[str, Any]] = {}

    def alloc(self, wanted: str) -> str:
        """Reserve `wanted`, or `wanted2`, `wanted3`... when taken; the entry is filled later
        (a placeholder first, so a recursive class finds its own name while being described)."""
        name, n = wanted, 2
        while name in self.table:
            name, n = f"{wanted}{n}", n + 1
        self.table[name] = {}
        return name

    def add_model(self, wanted: str, schema: dict[str, Any]) -> str:
        """Merge a model's own schema (with its nested `$defs`); return the model's entry name."""
        theirs: dict[str, Any] = schema.pop("$defs", {})
        renames: dict[str, str] = {}
        fresh: list[str] = []
        for old, nested in theirs.items():
            if old in self.table and self.table[old] == nested:
                renames[old] = old
            else:
                renames[old] = self.alloc(old)
                fresh.append(old)
        for old in fresh:
            self.table[renames[old]] = _rename_refs(theirs[old], renames)
        schema = _rename_refs(schema, renames)
        if schema.keys() == {"$ref"}:  # a recursive model is itself one of its $defs
            return str(schema["$ref"][len(DEFS_PREFIX) :])
        if wanted in self.table and self.table[wanted] == schema:
            return wanted
        name = self.alloc(wanted)
        self.table[name] = schema
        return name

    def attach(self, schema: dict[str, Any]) -> dict[str, Any]:
        """Put the table into `schema` (in place) when there is anything in it."""
        if self.table:
            schema["$defs"] = self.table
        return schema

    def hoist(self, ref: str) -> dict[str, Any]:
        """The entry `ref` names, copied out to serve as a document root; the entry itself is
        dropped unless something (the entry, for a recursive class) still refers to it."""
        name = ref[len(DEFS_PREFIX) :]
        root = dict(self.table[name])
        if not _refers_to(root, ref) and not any(
            _refers_to(d, ref) for n, d in self.table.items() if n != name
        ):
            del self.table[name]
        return root
