"""One walk of a JSON Schema's structure: where each `$ref` leads, and how much work checking a
value against the schema can take.

Every schema handed to us goes through it, each side with its own `Limits` and `Wording`: the
server checks a user's raw `inputSchema`/`outputSchema` at registration
(`mcpkit.server.raw_refs`), the client vets the tool definitions a server sends, which are
untrusted input (`mcpkit.client.tools`).

The walk visits every object and list of the schema except the values of the data keywords
(`const`, `enum`, `default`, `examples`): a same-document pointer may lead anywhere, so what sits
under an unknown keyword is checked too. Under the keywords that map names to subschemas
(`properties`, `$defs`, `dependentSchemas`, ...) the keys are names, not keywords: a property
named `default`, `not` or `$defs` is a subschema like any other. It refuses:

- a schema with more than `Limits.max_nodes` objects, lists and list items, or nested more than
  `Limits.max_depth` levels (each object and list is one);
- every `$ref`/`$dynamicRef`/`$recursiveRef` that would leave the document (remote or
  external); same-document pointers, anchors and resources embedded with `$id` stay allowed, so
  no validator can be made to fetch a URL;
- a reference whose JSON pointer or anchor names nothing.

Given `Limits.max_fan_out` or `Limits.max_expanded`, every reference is then followed, and it
also refuses:

- a `$ref` loop that comes back to where it started without descending into the value
  (`{"$defs": {"a": {"anyOf": [{"$ref": "#/$defs/a"}]}}}`): checking anything against it
  would never end;
- a schema that applies more than `max_fan_out` subschemas to one value once every `$ref` is
  replaced by what it names: branches of `anyOf`/`oneOf`/`allOf`/`if`/`then`/`else` that each
  refer to the same `$defs` multiply, so twenty small definitions can stand for a million
  subschemas (`{"d0": {"anyOf": [{"$ref": "#/$defs/d1"}, {"$ref": "#/$defs/d1"}]}, ...}`);
- a schema that, with every `$ref` inlined and each recursive loop counted once, spans more than
  `max_expanded` subschemas in all (the same multiplication, spread over nested values).

Sans-IO: the standard library only; no mcpkit import.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Final
from urllib.parse import unquote, urldefrag, urljoin, urlsplit

__all__ = ["MISSING", "Limits", "Wording", "check_schema_structure", "resolve_pointer"]

_REF_KEYWORDS: Final = ("$ref", "$dynamicRef", "$recursiveRef")
_DATA_KEYWORDS: Final = frozenset({"const", "enum", "default", "examples"})
_DEFS_KEYWORDS: Final = frozenset({"$defs", "definitions"})
_SAME_PLACE: Final = frozenset({"allOf", "anyOf", "oneOf", "not", "if", "then", "else"})
"""Keywords whose subschemas apply to the very value the schema applies to."""
_SAME_PLACE_MAPS: Final = frozenset({"dependentSchemas", "dependencies"})
"""Keywords holding a map whose values apply to the very value the schema applies to."""
_NAMED: Final = _DEFS_KEYWORDS | _SAME_PLACE_MAPS | {"properties", "patternProperties"}
"""Keywords holding a map from names (never keywords) to subschemas."""
_NETWORK_SCHEMES: Final = frozenset({"http", "https", "ftp", "ws", "wss"})

MISSING: Final = object()
"""What `resolve_pointer` returns for a pointer that names nothing."""


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


@dataclass(frozen=True, slots=True)
class Wording:
    """The caller's sentence for each refusal, as a `str.format` template.

    A template may use `where` (the caller's name for the schema), `keyword` and `ref` (the
    reference), `at` (the JSON pointer of the reference keyword), `kind` (`remote` or
    `external`), and the limits `max_nodes`, `max_depth`, `max_fan_out`, `max_expanded`.
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


@dataclass(slots=True)
class _Ref:
    keyword: str
    ref: str
    at: str
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


def check_schema_structure(
    schema: Mapping[str, Any], where: str, limits: Limits, wording: Wording
) -> None:
    """Raise `ValueError`, in the caller's words, naming `where` and the place refused."""
    walked = _walk(schema, where, limits, wording)
    for item in walked.refs:
        _check_ref(walked, item, where, limits, wording)
    if limits.max_fan_out is not None or limits.max_expanded is not None:
        _check_cost(walked, where, limits, wording)


def resolve_pointer(document: Any, fragment: str) -> Any:
    """What a JSON pointer, as written in a URI fragment (percent-encoded, empty or starting with
    '/'), names in `document`; `MISSING` when it names nothing."""
    node = document
    for raw in fragment.split("/")[1:]:
        token = unquote(raw).replace("~1", "/").replace("~0", "~")
        if isinstance(node, Mapping) and token in node:
            node = node[token]
        elif isinstance(node, list) and token.isdigit() and int(token) < len(node):
            node = node[int(token)]
        else:
            return MISSING
    return node


def _refusal(template: str, where: str, limits: Limits, **found: str) -> ValueError:
    return ValueError(template.format(where=where, **dataclasses.asdict(limits), **found))


def _walk(schema: Mapping[str, Any], where: str, limits: Limits, wording: Wording) -> _Walked:
    root_id = schema.get("$id")
    root = urldefrag(root_id)[0] if isinstance(root_id, str) else ""
    walked = _Walked()
    walked.resources = {"": schema, root: schema}
    # (node, base URI, JSON pointer, depth, parent vertex, evaluated against the parent's value,
    # a container whose items all are, a map from names to subschemas)
    stack: list[tuple[Any, str, str, int, int | None, bool, bool, bool]] = [
        (schema, root, "", 0, None, False, False, False)
    ]
    seen = 0
    while stack:
        node, base, pointer, depth, parent, same, spread, named = stack.pop()
        seen += 1
        if seen > limits.max_nodes:
            raise _refusal(wording.too_many, where, limits)
        if depth > limits.max_depth:
            raise _refusal(wording.too_deep, where, limits)
        if isinstance(node, list):
            vertex = walked.add(node, parent, same)
            stack.extend(
                (item, base, f"{pointer}/{i}", depth + 1, vertex, spread, False, False)
                for i, item in enumerate(node)
            )
            continue
        if not isinstance(node, Mapping):
            continue
        vertex = walked.add(node, parent, same)
        if named:
            stack.extend(
                (value, base, f"{pointer}/{_escape(name)}", depth + 1, vertex, spread, False, False)
                for name, value in node.items()
                if isinstance(value, (Mapping, list))
            )
            continue
        base = _declare(walked, node, base)
        for keyword in _REF_KEYWORDS:
            ref = node.get(keyword)
            if isinstance(ref, str):
                walked.refs.append(_Ref(keyword, ref, f"{pointer}/{keyword}", vertex, base))
        for key, value in node.items():
            if key not in _DATA_KEYWORDS and isinstance(value, (Mapping, list)):
                evaluated = None if key in _DEFS_KEYWORDS else vertex
                in_place = spread or key in _SAME_PLACE or key in _SAME_PLACE_MAPS
                items_in_place = key in _SAME_PLACE_MAPS or (
                    key in _SAME_PLACE and isinstance(value, list)
                )
                child = f"{pointer}/{_escape(key)}"
                stack.append(
                    (value, base, child, depth + 1, evaluated, in_place, items_in_place,
                     key in _NAMED)
                )  # fmt: skip
    return walked


def _escape(key: Any) -> str:
    return str(key).replace("~", "~0").replace("/", "~1")


def _declare(walked: _Walked, node: Mapping[str, Any], base: str) -> str:
    """Record the resource, anchors and dynamic anchors a schema object declares; return the
    base URI its own references resolve against."""
    own_id = node.get("$id")
    if isinstance(own_id, str):
        base, fragment = urldefrag(urljoin(base, own_id))
        if not own_id.startswith("#"):
            walked.resources.setdefault(base, node)
        if fragment and not fragment.startswith("/"):  # a draft-07 (or older) anchor
            walked.anchors[(base, fragment)] = node
    for keyword in ("$anchor", "$dynamicAnchor"):
        name = node.get(keyword)
        if isinstance(name, str):
            walked.anchors[(base, name)] = node
            if keyword == "$dynamicAnchor":
                walked.dynamic.setdefault(name, []).append(node)
    if node.get("$recursiveAnchor") is True:
        walked.recursive.append(node)
    return base


def _check_ref(walked: _Walked, item: _Ref, where: str, limits: Limits, wording: Wording) -> None:
    uri, fragment = urldefrag(urljoin(item.base, item.ref))
    resource = walked.resources.get(uri)
    found = {"keyword": item.keyword, "ref": item.ref, "at": item.at}
    if resource is None:
        parts = urlsplit(uri)
        kind = "remote" if parts.netloc or parts.scheme in _NETWORK_SCHEMES else "external"
        raise _refusal(wording.outside, where, limits, kind=kind, **found)
    if fragment.startswith("/"):
        if resolve_pointer(resource, fragment) is MISSING:
            raise _refusal(wording.no_target, where, limits, **found)
    elif fragment and (uri, unquote(fragment)) not in walked.anchors:
        raise _refusal(wording.no_anchor, where, limits, **found)


def _targets(walked: _Walked, item: _Ref) -> list[Any]:
    """What a reference may evaluate: for the dynamic kinds, every candidate, to be safe."""
    uri, fragment = urldefrag(urljoin(item.base, item.ref))
    resource = walked.resources.get(uri)
    found: list[Any] = []
    if resource is not None:
        if not fragment:
            found.append(resource)
        elif fragment.startswith("/"):
            found.append(resolve_pointer(resource, fragment))
        else:
            found.append(walked.anchors.get((uri, unquote(fragment)), MISSING))
    if item.keyword == "$dynamicRef" and fragment and not fragment.startswith("/"):
        found.extend(walked.dynamic.get(unquote(fragment), ()))
    elif item.keyword == "$recursiveRef":
        found.extend(walked.recursive)
    return found


def _check_cost(walked: _Walked, where: str, limits: Limits, wording: Wording) -> None:
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
            raise _refusal(
                wording.loop, where, limits, keyword=item.keyword, ref=item.ref, at=item.at
            )
    if limits.max_fan_out is not None:
        fan_out = _expansion(walked.same_place, limits.max_fan_out)
        widest = max((n for n, ok in zip(fan_out, reachable, strict=True) if ok), default=0)
        if widest > limits.max_fan_out:
            raise _refusal(wording.fan_out, where, limits)
    if (
        limits.max_expanded is not None
        and _expansion(walked.edges, limits.max_expanded)[0] > limits.max_expanded
    ):
        raise _refusal(wording.expanded, where, limits)


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
