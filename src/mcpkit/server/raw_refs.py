"""The shape of a user's raw JSON Schema, checked once at registration: where each `$ref` leads,
and how much work checking one value against the schema can take.

One walk over the schema, before any validator sees it, refuses:

- a schema with more than `MAX_NODES` subschemas (list items included) or nested more than
  `MAX_DEPTH` levels;
- every `$ref`/`$dynamicRef`/`$recursiveRef` that would leave the document (remote or
  external); same-document pointers, anchors and resources embedded with `$id` stay allowed, so
  no validator can be made to fetch a URL;
- a same-document `$ref` that points to nothing;
- a `$ref` loop that comes back to where it started without descending into the value
  (`{"$defs": {"a": {"anyOf": [{"$ref": "#/$defs/a"}]}}}`): checking anything against it
  would never end;
- a schema that applies more than `MAX_FAN_OUT` subschemas to one value once every `$ref` is
  replaced by what it names: branches of `anyOf`/`oneOf`/`allOf`/`if`/`then`/`else` that each
  refer to the same `$defs` multiply, so twenty small definitions can stand for a million
  subschemas (`{"d0": {"anyOf": [{"$ref": "#/$defs/d1"}, {"$ref": "#/$defs/d1"}]}, ...}`);
- a schema that, with every `$ref` inlined and each recursive loop counted once, spans more than
  `MAX_EXPANDED` subschemas in all (the same multiplication, spread over nested values).

What this cannot bound, recursion that descends into the value, is bounded per call by
`mcpkit.server.raw_schema`.

Imports: the standard library only.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Final
from urllib.parse import unquote, urldefrag, urljoin, urlsplit

__all__ = ["MAX_DEPTH", "MAX_EXPANDED", "MAX_FAN_OUT", "MAX_NODES", "check_structure"]

MAX_DEPTH: Final = 128
MAX_NODES: Final = 20_000
MAX_FAN_OUT: Final = 10_000
MAX_EXPANDED: Final = 1_000_000

_REF_KEYWORDS: Final = ("$ref", "$dynamicRef", "$recursiveRef")
_DATA_KEYWORDS: Final = frozenset({"const", "enum", "default", "examples"})
_DEFS_KEYWORDS: Final = frozenset({"$defs", "definitions"})
_SAME_PLACE: Final = frozenset({"allOf", "anyOf", "oneOf", "not", "if", "then", "else"})
"""Keywords whose subschemas apply to the very value the schema applies to."""
_SAME_PLACE_MAPS: Final = frozenset({"dependentSchemas", "dependencies"})
"""Keywords holding a map whose values apply to the very value the schema applies to."""


@dataclass(slots=True)
class _Ref:
    keyword: str
    ref: str
    pointer: str
    source: int
    base: str


@dataclass(slots=True)
class _Walked:
    """Every object and list of the schema as a numbered vertex, with what evaluates what."""

    index: dict[int, int] = field(default_factory=dict)
    """id() of an object or list -> its vertex (the first one, if the object is shared)."""
    edges: list[list[int]] = field(default_factory=list)
    """vertex -> the vertices evaluated when it is (containment, then each `$ref`)."""
    same_place: list[list[int]] = field(default_factory=list)
    """vertex -> those among `edges` evaluated against the same value."""
    resources: dict[str, Any] = field(default_factory=dict)
    anchors: dict[tuple[str, str], Any] = field(default_factory=dict)
    dynamic: dict[str, list[Any]] = field(default_factory=dict)
    recursive: list[Any] = field(default_factory=list)
    refs: list[_Ref] = field(default_factory=list)

    def add(self, node: Any, parent: int | None, same_place: bool) -> int:
        vertex = len(self.edges)
        self.index.setdefault(id(node), vertex)
        self.edges.append([])
        self.same_place.append([])
        if parent is not None:
            self.edges[parent].append(vertex)
            if same_place:
                self.same_place[parent].append(vertex)
        return vertex


def check_structure(schema: Mapping[str, Any], where: str) -> None:
    """Raise `ValueError` naming `where` and the offending place when the schema is refused."""
    walked, anchors, local = _walk(schema, where)
    for ref, pointer in local:
        if not _resolves(schema, ref[1:], anchors):
            raise ValueError(f"{where}: $ref {ref!r} at {pointer} points to nothing in the schema")
    for item in walked.refs:
        if item.ref.startswith("#"):
            continue
        target = urldefrag(urljoin(item.base, item.ref))[0]
        if target in walked.resources:
            continue
        parts = urlsplit(target)
        kind = (
            "remote"
            if parts.netloc or parts.scheme in ("http", "https", "ftp", "ws", "wss")
            else "external"
        )
        raise ValueError(
            f"{where}: $ref {item.ref!r} at {item.pointer or '/'}: {kind} $ref not allowed; only "
            f"same-document references (such as '#/$defs/name' or an $anchor) are resolved"
        )
    _check_cost(walked, where)


def _walk(
    schema: Mapping[str, Any], where: str
) -> tuple[_Walked, set[str], list[tuple[str, str]]]:
    root_id = schema.get("$id")
    root = urldefrag(root_id)[0] if isinstance(root_id, str) else ""
    walked = _Walked()
    walked.resources = {"": schema, root: schema}
    anchors: set[str] = set()
    local: list[tuple[str, str]] = []
    # (node, base URI, JSON pointer, depth, parent vertex, evaluated against the parent's value,
    # a container whose items all are)
    stack: list[tuple[Any, str, str, int, int | None, bool, bool]] = [
        (schema, root, "", 0, None, False, False)
    ]
    seen = 0
    while stack:
        node, base, pointer, depth, parent, same, spread = stack.pop()
        seen += 1
        if seen > MAX_NODES or depth > MAX_DEPTH:
            raise ValueError(
                f"{where}: schema is too large or too deeply nested (limits: {MAX_NODES} "
                f"subschemas, depth {MAX_DEPTH})"
            )
        if isinstance(node, list):
            vertex = walked.add(node, parent, same)
            stack.extend(
                (item, base, f"{pointer}/{i}", depth + 1, vertex, spread, False)
                for i, item in enumerate(node)
            )
            continue
        if not isinstance(node, Mapping):
            continue
        vertex = walked.add(node, parent, same)
        own_id = node.get("$id")
        if isinstance(own_id, str):
            base, fragment = urldefrag(urljoin(base, own_id))
            if not own_id.startswith("#"):
                walked.resources[base] = node
            if fragment and not fragment.startswith("/"):  # a draft-07 (or older) anchor
                walked.anchors[(base, fragment)] = node
                if base == root:
                    anchors.add(fragment)
        for keyword in ("$anchor", "$dynamicAnchor"):
            name = node.get(keyword)
            if isinstance(name, str):
                walked.anchors[(base, name)] = node
                if base == root:
                    anchors.add(name)
                if keyword == "$dynamicAnchor":
                    walked.dynamic.setdefault(name, []).append(node)
        if node.get("$recursiveAnchor") is True:
            walked.recursive.append(node)
        for keyword in _REF_KEYWORDS:
            ref = node.get(keyword)
            if not isinstance(ref, str):
                continue
            where_ref = f"{pointer}/{keyword}"
            walked.refs.append(_Ref(keyword, ref, where_ref, vertex, base))
            if ref.startswith("#") and base == root and keyword == "$ref":
                local.append((ref, where_ref))
        for key, value in node.items():
            if key not in _DATA_KEYWORDS and isinstance(value, (Mapping, list)):
                escaped = str(key).replace("~", "~0").replace("/", "~1")
                evaluated = None if key in _DEFS_KEYWORDS else vertex
                in_place = spread or key in _SAME_PLACE or key in _SAME_PLACE_MAPS
                items_in_place = key in _SAME_PLACE_MAPS or (
                    key in _SAME_PLACE and isinstance(value, list)
                )
                child = f"{pointer}/{escaped}"
                stack.append((value, base, child, depth + 1, evaluated, in_place, items_in_place))
    return walked, anchors, local


def _resolves(schema: Mapping[str, Any], fragment: str, anchors: set[str]) -> bool:
    """Whether a same-document reference (the part after '#') names something that exists."""
    if not fragment.startswith("/"):
        return fragment == "" or unquote(fragment) in anchors
    return _pointer(schema, fragment) is not _NOTHING


_NOTHING: Final = object()


def _pointer(node: Any, fragment: str) -> Any:
    for raw in fragment[1:].split("/"):
        token = unquote(raw).replace("~1", "/").replace("~0", "~")
        if isinstance(node, Mapping) and token in node:
            node = node[token]
        elif isinstance(node, list) and token.isdigit() and int(token) < len(node):
            node = node[int(token)]
        else:
            return _NOTHING
    return node


def _targets(walked: _Walked, item: _Ref) -> list[Any]:
    """What a reference may evaluate: for the dynamic kinds, every candidate, to be safe."""
    uri, fragment = urldefrag(urljoin(item.base, item.ref))
    resource = walked.resources.get(uri)
    found: list[Any] = []
    if resource is not None:
        if not fragment:
            found.append(resource)
        elif fragment.startswith("/"):
            found.append(_pointer(resource, fragment))
        else:
            found.append(walked.anchors.get((uri, unquote(fragment)), _NOTHING))
    if item.keyword == "$dynamicRef" and fragment and not fragment.startswith("/"):
        found.extend(walked.dynamic.get(unquote(fragment), ()))
    elif item.keyword == "$recursiveRef":
        found.extend(walked.recursive)
    return found


def _check_cost(walked: _Walked, where: str) -> None:
    resolved: list[tuple[_Ref, list[int]]] = []
    for item in walked.refs:
        vertices = [
            walked.index[id(target)]
            for target in _targets(walked, item)
            if isinstance(target, (Mapping, list)) and id(target) in walked.index
        ]
        resolved.append((item, vertices))
        walked.edges[item.source].extend(vertices)
        walked.same_place[item.source].extend(vertices)
    loops = _components(walked.same_place)
    reachable = _reachable(walked.edges, 0)
    for item, vertices in resolved:
        if reachable[item.source] and any(loops[v] == loops[item.source] for v in vertices):
            raise ValueError(
                f"{where}: {item.keyword} {item.ref!r} at {item.pointer} leads back to where it "
                "started without descending into the value, so checking any value against it "
                "would never end; make the loop pass through properties or items"
            )
    fan_out = _expansion(walked.same_place, MAX_FAN_OUT)
    widest = max((n for n, ok in zip(fan_out, reachable, strict=True) if ok), default=0)
    if widest > MAX_FAN_OUT:
        raise ValueError(
            f"{where}: schema is too costly to check: more than {MAX_FAN_OUT} subschemas apply "
            "to one value once its $refs are followed (anyOf/oneOf/allOf branches that refer "
            "to the same $defs count them again); let fewer branches share the same definitions"
        )
    if _expansion(walked.edges, MAX_EXPANDED)[0] > MAX_EXPANDED:
        raise ValueError(
            f"{where}: schema is too costly to check: with its $refs followed it spans more than "
            f"{MAX_EXPANDED} subschemas (definitions reused inside definitions multiply); "
            "let fewer places share the same definitions"
        )


def _reachable(edges: Sequence[Sequence[int]], start: int) -> list[bool]:
    seen = [False] * len(edges)
    seen[start] = True
    todo = [start]
    while todo:
        for w in edges[todo.pop()]:
            if not seen[w]:
                seen[w] = True
                todo.append(w)
    return seen


def _expansion(edges: Sequence[Sequence[int]], limit: int) -> list[int]:
    """For each vertex, how many vertices evaluating it evaluates with every reference inlined
    and each loop counted once; capped just past `limit`, so a huge count costs nothing."""
    component = _components(edges)
    members: list[list[int]] = [[] for _ in range(max(component, default=-1) + 1)]
    for vertex, c in enumerate(component):
        members[c].append(vertex)
    cap = limit + 1
    cost = [0] * len(members)
    for c, inside in enumerate(members):  # the components a vertex leads to come first
        total = len(inside)
        for u in inside:
            for w in edges[u]:
                if component[w] != c:
                    total = min(total + cost[component[w]], cap)
        cost[c] = total
    return [cost[c] for c in component]


def _components(edges: Sequence[Sequence[int]]) -> list[int]:
    """Strongly connected components (Tarjan's, without recursion), numbered in the order they
    complete, so the components a vertex leads to always have smaller numbers than its own."""
    count = len(edges)
    order = [-1] * count
    low = [0] * count
    on_stack = [False] * count
    component = [-1] * count
    stack: list[int] = []
    counter = done = 0
    for start in range(count):
        if order[start] != -1:
            continue
        order[start] = low[start] = counter
        counter += 1
        stack.append(start)
        on_stack[start] = True
        work = [(start, 0)]
        while work:
            v, i = work[-1]
            if i < len(edges[v]):
                work[-1] = (v, i + 1)
                w = edges[v][i]
                if order[w] == -1:
                    order[w] = low[w] = counter
                    counter += 1
                    stack.append(w)
                    on_stack[w] = True
                    work.append((w, 0))
                elif on_stack[w]:
                    low[v] = min(low[v], order[w])
                continue
            work.pop()
            if work:
                parent = work[-1][0]
                low[parent] = min(low[parent], low[v])
            if low[v] == order[v]:
                while True:
                    w = stack.pop()
                    on_stack[w] = False
                    component[w] = done
                    if w == v:
                        break
                done += 1
    return component
