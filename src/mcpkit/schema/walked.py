"""What one walk of a schema's structure (`mcpkit.schema.walk`) is given and what it holds: the
caller's `Limits` and `Wording`, each reference found (`Ref`) and the schema as a graph of
numbered vertices (`Walked`), which resolving the references and weighing the cost
(`mcpkit.schema.ref_cost`) read; and a refusal in the caller's words. Imports the standard
library and `mcpkit.schema.pointers`.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
from typing import Any

from mcpkit.schema.pointers import pointer

__all__ = [
    "Limits",
    "Ref",
    "Walked",
    "Wording",
    "refusal",
    "shorten",
]


@dataclass(frozen=True, slots=True)
class Limits:
    """How much schema one side accepts."""

    max_nodes: int
    """Most objects, lists and list items (the values of data keywords are not counted)."""
    max_depth: int
    """Deepest nesting, each object and list being one level."""
    max_fan_out: int | None = None
    """Most subschemas applying to one value with every `$ref` followed. With this or
    `max_expanded` given, references are followed and loops that never descend are refused."""
    max_expanded: int | None = None
    """Most subschemas the whole schema spans with every `$ref` inlined, each loop counted once."""
    max_uri_length: int = 4096
    """Longest reference or `$id`, also once resolved against the base it sits under."""


@dataclass(frozen=True, slots=True)
class Wording:
    """The caller's sentence for each refusal, as a `str.format` template.

    A template may use `where` (the caller's name for the schema), `keyword` and `ref` (the
    reference, or the `$id`), `at` (the JSON pointer of that keyword), `kind` (`remote` or
    `external`), `problem` (what is wrong with a URI), `id_at` (where a misplaced `$id` sits),
    and the limits `max_nodes`, `max_depth`, `max_fan_out`, `max_expanded`, `max_uri_length`.
    """

    too_many: str
    too_deep: str
    outside: str
    no_target: str
    """A JSON pointer that names nothing."""
    no_anchor: str
    """An anchor (`#name`) that no `$anchor`, `$dynamicAnchor` or plain-name `$id` declares."""
    loop: str = (
        "{where}: {keyword} {ref!r} at {at} leads back to where it started without descending "
        "into the value, so checking any value against it would never end; make the loop pass "
        "through properties or items"
    )
    fan_out: str = (
        "{where}: schema is too costly to check: more than {max_fan_out} subschemas apply to one "
        "value once its $refs are followed (anyOf/oneOf/allOf branches that refer to the same "
        "$defs count them again); let fewer branches share the same definitions"
    )
    expanded: str = (
        "{where}: schema is too costly to check: with its $refs followed it spans more than "
        "{max_expanded} subschemas (definitions reused inside definitions multiply); let fewer "
        "places share the same definitions"
    )
    bad_uri: str = "{where}: {keyword} {ref!r} at {at} {problem}"
    into_data: str = (
        "{where}: {keyword} {ref!r} at {at} points into the value of a const, enum, default or "
        "examples keyword, which is data, not a subschema"
    )
    unplaced: str = (
        "{where}: {keyword} {ref!r} at {at} sits under an $id where no subschema goes (at "
        "{id_at}), which validators apply or not depending on the path; move that $id under "
        "$defs"
    )


@dataclass(slots=True)
class Ref:
    keyword: str
    ref: str
    path: Any
    source: int
    base: str
    key: tuple[str, str, str] = ("", "", "")
    """What decides its candidates: the keyword, the resource URI and the fragment."""

    def found(self, clip: bool = False) -> dict[str, str]:
        """The template fields naming it, for a refusal (spelt out only then)."""
        ref = shorten(self.ref) if clip else self.ref
        return {"keyword": self.keyword, "ref": ref, "at": pointer(self.path)}


@dataclass(slots=True)
class Walked:
    """Every object and list of the schema as a numbered vertex, with what evaluates what."""

    index: dict[int, int] = field(default_factory=dict)
    """id() of an object or list -> its vertex (the first one, if the object is shared)."""
    edges: list[list[int]] = field(default_factory=list)
    """vertex -> the vertices evaluated when it is (containment, then each `$ref`)."""
    same_place: list[list[int]] = field(default_factory=list)
    """vertex -> those among `edges` evaluated against the same value."""
    resources: dict[str, list[Any]] = field(default_factory=dict)
    anchors: dict[tuple[str, str], list[Any]] = field(default_factory=dict)
    dynamic: dict[str, list[Any]] = field(default_factory=dict)
    recursive: list[Any] = field(default_factory=list)
    refs: list[Ref] = field(default_factory=list)
    resolved: dict[tuple[str, str], list[Any] | str] = field(default_factory=dict)
    """(resource URI, fragment) -> the nodes it names, or the refusal it earns."""

    def add(self, node: Any, parent: int | None, same_place: bool) -> int:
        vertex = self.hub([])
        self.index.setdefault(id(node), vertex)
        if parent is not None:
            self.edges[parent].append(vertex)
            if same_place:
                self.same_place[parent].append(vertex)
        return vertex

    def hub(self, targets: list[int]) -> int:
        """A vertex of its own that evaluates `targets` against the same value."""
        self.edges.append(targets)
        self.same_place.append(list(targets))
        return len(self.edges) - 1



def refusal(template: str, where: str, limits: Limits, **found: str) -> ValueError:
    return ValueError(template.format(where=where, **dataclasses.asdict(limits), **found))



def shorten(text: str) -> str:
    """A reference cut to a length a refusal can show."""
    return text if len(text) <= 80 else text[:77] + "..."

