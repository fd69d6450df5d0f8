"""One walk of a JSON Schema's structure: where each `$ref` leads, and how much work checking a
value against the schema can take.

Every schema handed to us goes through it, each side with its own `Limits` and `Wording`: the
server checks a user's raw `inputSchema`/`outputSchema` at registration
(`mcpkit.schema.bounds`), the client vets the tool definitions a server sends, which are
untrusted input (`mcpkit.client.tools`).

The walk visits every object and list of the schema except the values of the data keywords
(`const`, `enum`, `default`, `examples`): a same-document pointer may lead anywhere, so what sits
under an unknown keyword is checked too. Under the keywords that map names to subschemas
(`properties`, `$defs`, `dependentSchemas`, ...) the keys are names, not keywords: a property
named `default`, `not` or `$defs` is a subschema like any other. It refuses:

- a schema with more than `Limits.max_nodes` objects, lists and list items, or nested more than
  `Limits.max_depth` levels (each object and list is one), before holding more than that;
- every `$ref`/`$dynamicRef`/`$recursiveRef` that would leave the document (remote or
  external); same-document pointers, anchors and resources embedded with `$id` stay allowed, so
  no validator can be made to fetch a URL;
- a reference whose JSON pointer or anchor names nothing, or names something inside a data
  keyword's value (data, which a validator would still evaluate as a schema);
- a reference or `$id` longer than `Limits.max_uri_length`, or not a URI reference at all;
- a reference under an `$id` that sits where no subschema goes (under an unknown keyword):
  validators apply such an `$id` on some paths and not on others.

References resolve as the validator will resolve them (RFC 6901 and 3986, and where the root's
dialect places ids and anchors: `mcpkit.schema.places`): a pointer is percent-decoded
before it is split, an anchor is matched as written, a fragment-only reference stays in the
current resource whatever its URI scheme. Where several nodes may answer one reference (a name
declared twice, `$dynamicRef`, `$recursiveRef`), every candidate counts.

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

The work is linear in the schema: a reference with many candidates reaches them through one
shared vertex, and a place in the schema is spelled out only for a refusal.

Sans-IO: the standard library, `mcpkit.schema.places` (each dialect's places) and
`mcpkit.schema.graph` (the cost analysis of the reference graph).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Final
from urllib.parse import unquote, urldefrag, urljoin, urlsplit

from mcpkit.schema.graph import components, expansion, reachable
from mcpkit.schema.places import Places, places_of

__all__ = [
    "MISSING",
    "Limits",
    "Wording",
    "check_schema_structure",
    "resolve_pointer",
]

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
class _Ref:
    keyword: str
    ref: str
    path: Any
    source: int
    base: str
    key: tuple[str, str, str] = ("", "", "")
    """What decides its candidates: the keyword, the resource URI and the fragment."""

    def found(self, clip: bool = False) -> dict[str, str]:
        """The template fields naming it, for a refusal (spelt out only then)."""
        ref = _clip(self.ref) if clip else self.ref
        return {"keyword": self.keyword, "ref": ref, "at": _pointer(self.path)}


@dataclass(slots=True)
class _Walked:
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
    refs: list[_Ref] = field(default_factory=list)
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


def _refusal(template: str, where: str, limits: Limits, **found: str) -> ValueError:
    return ValueError(template.format(where=where, **dataclasses.asdict(limits), **found))


def _pointer(path: Any) -> str:
    """The JSON pointer of a place kept as (parent place, key) pairs."""
    keys: list[str] = []
    while path is not None:
        path, key = path
        keys.append(str(key).replace("~", "~0").replace("/", "~1"))
    return "".join(f"/{key}" for key in reversed(keys))


def _clip(text: str) -> str:
    return text if len(text) <= 80 else text[:77] + "..."


def _walk(schema: Mapping[str, Any], where: str, limits: Limits, wording: Wording) -> _Walked:
    dialect = places_of(schema)
    walked = _Walked()
    walked.resources = {"": [schema]}
    # (node, base URI, place, depth, parent vertex, evaluated against the parent's value,
    # a container whose items all are, a map from names to subschemas, in a subschema position
    # (an object) or holding subschemas (a list or map), the place of a misplaced $id above)
    stack: list[tuple[Any, str, Any, int, int | None, bool, bool, bool, bool, Any]] = [
        (schema, "", None, 0, None, False, False, False, True, None)
    ]
    seen = 0
    while stack:
        node, base, path, depth, parent, same, spread, named, placed, hidden = stack.pop()
        seen += 1
        if seen > limits.max_nodes:
            raise _refusal(wording.too_many, where, limits)
        if depth > limits.max_depth:
            raise _refusal(wording.too_deep, where, limits)
        if isinstance(node, list):
            if seen + len(stack) + len(node) > limits.max_nodes:
                raise _refusal(wording.too_many, where, limits)
            vertex = walked.add(node, parent, same)
            stack.extend(
                (item, base, (path, i), depth + 1, vertex, spread, False, False, placed, hidden)
                for i, item in enumerate(node)
            )
            continue
        if not isinstance(node, Mapping):
            continue
        _check_width(node, named, seen + len(stack), where, limits, wording)
        vertex = walked.add(node, parent, same)
        if named:
            stack.extend(
                (value, base, (path, name), depth + 1, vertex, spread, False, False,
                 placed and isinstance(value, Mapping), hidden)
                for name, value in node.items()
                if isinstance(value, (Mapping, list))
            )  # fmt: skip
            continue
        if placed:
            try:
                base = _declare(walked, dialect, node, base, limits)
            except ValueError as exc:
                found = {"keyword": dialect.id_keyword, "ref": _clip(node[dialect.id_keyword]),
                         "at": _pointer((path, dialect.id_keyword)), "problem": str(exc)}
                raise _refusal(wording.bad_uri, where, limits, **found) from None
        elif hidden is None and dialect.base_id(node) is not None:
            hidden = path
        for keyword in _REF_KEYWORDS:
            ref = node.get(keyword)
            if isinstance(ref, str):
                item = _Ref(keyword, ref, (path, keyword), vertex, base)
                if len(ref) > limits.max_uri_length:
                    problem = f"is longer than {limits.max_uri_length} characters"
                    raise _refusal(wording.bad_uri, where, limits, problem=problem,
                                   **item.found(clip=True))
                if hidden is not None:
                    raise _refusal(wording.unplaced, where, limits, id_at=_pointer(hidden),
                                   **item.found())
                walked.refs.append(item)
        for key, value in node.items():
            if key not in _DATA_KEYWORDS and isinstance(value, (Mapping, list)):
                evaluated = None if key in _DEFS_KEYWORDS else vertex
                in_place = spread or key in _SAME_PLACE or key in _SAME_PLACE_MAPS
                items_in_place = key in _SAME_PLACE_MAPS or (
                    key in _SAME_PLACE and isinstance(value, list)
                )
                position = placed and (
                    key in dialect.named if isinstance(value, Mapping) and key in _NAMED
                    else key in dialect.one if isinstance(value, Mapping)
                    else key in dialect.many
                )
                stack.append(
                    (value, base, (path, key), depth + 1, evaluated, in_place, items_in_place,
                     key in _NAMED, position, hidden)
                )  # fmt: skip
    return walked


def _check_width(
    node: Mapping[str, Any], named: bool, queued: int, where: str, limits: Limits,
    wording: Wording,
) -> None:
    """Refuse a map with more children than the limit leaves room for, before queueing them."""
    if queued + len(node) <= limits.max_nodes:
        return
    children = sum(
        1 for key, value in node.items()
        if isinstance(value, (Mapping, list)) and (named or key not in _DATA_KEYWORDS)
    )
    if queued + children > limits.max_nodes:
        raise _refusal(wording.too_many, where, limits)


def _declare(
    walked: _Walked, dialect: Places, node: Mapping[str, Any], base: str, limits: Limits
) -> str:
    """Record the resource, anchors and dynamic anchors a schema object declares; return the
    base URI its own references resolve against. ValueError says what is wrong with its id."""
    own_id = dialect.base_id(node)
    if own_id is not None:
        if len(own_id) > limits.max_uri_length:
            raise ValueError(f"is longer than {limits.max_uri_length} characters")
        try:
            base, fragment = urldefrag(urljoin(base, own_id))
            urlsplit(base)
        except ValueError:
            raise ValueError("is not a valid URI reference") from None
        if len(base) > limits.max_uri_length:
            raise ValueError(f"is longer than {limits.max_uri_length} characters once resolved")
        if not own_id.startswith("#"):
            walked.resources.setdefault(base, []).append(node)
        if fragment and not fragment.startswith("/"):  # "https://e.example/s#name"
            walked.anchors.setdefault((base, fragment), []).append(node)
    for keyword, name in dialect.anchor_names(node):
        walked.anchors.setdefault((base, name), []).append(node)
        if keyword == "$dynamicAnchor":
            walked.dynamic.setdefault(name, []).append(node)
    if node.get("$recursiveAnchor") is True:
        walked.recursive.append(node)
    return base


def _check_ref(walked: _Walked, item: _Ref, where: str, limits: Limits, wording: Wording) -> None:
    """Resolve one reference as a validator would, keeping every node it may evaluate."""
    try:
        if item.ref.startswith("#"):  # stays in the current resource, whatever its scheme
            uri, fragment = item.base, item.ref[1:]
        else:
            uri, fragment = urldefrag(urljoin(item.base, item.ref))
        parts = urlsplit(uri)
    except ValueError:
        raise _refusal(wording.bad_uri, where, limits, problem="is not a valid URI reference",
                       **item.found()) from None
    item.key = (item.keyword, uri, fragment)
    targets = walked.resolved.get((uri, fragment))
    if targets is None:
        targets = walked.resolved[(uri, fragment)] = _resolve(walked, uri, fragment)
    if targets == "outside":
        kind = "remote" if parts.netloc or parts.scheme in _NETWORK_SCHEMES else "external"
        raise _refusal(wording.outside, where, limits, kind=kind, **item.found())
    if isinstance(targets, str):
        raise _refusal(getattr(wording, targets), where, limits, **item.found())


def _resolve(walked: _Walked, uri: str, fragment: str) -> list[Any] | str:
    """The nodes a resource URI and fragment name, or the name of the refusal they earn."""
    resources = walked.resources.get(uri)
    if not resources:
        return "outside"
    if not fragment or fragment.startswith("/"):
        targets = [t for t in (resolve_pointer(r, fragment) for r in resources) if t is not MISSING]
        if not targets:
            return "no_target"
    else:
        targets = walked.anchors.get((uri, fragment), [])
        if not targets:
            return "no_anchor"
    if any(isinstance(t, (Mapping, list)) and id(t) not in walked.index for t in targets):
        return "into_data"
    return targets


def _candidates(walked: _Walked, key: tuple[str, str, str]) -> list[int]:
    """The vertices a reference may evaluate: what it names, and for the dynamic kinds every
    node that may answer it, to be safe."""
    keyword, uri, fragment = key
    targets = walked.resolved[(uri, fragment)]
    assert not isinstance(targets, str)  # refused before the cost is checked
    extra: list[Any] = []
    if keyword == "$dynamicRef" and fragment and not fragment.startswith("/"):
        extra = walked.dynamic.get(fragment, [])
    elif keyword == "$recursiveRef":
        extra = walked.recursive
    return list(dict.fromkeys(
        walked.index[id(target)]
        for candidates in (targets, extra)
        for target in candidates
        if isinstance(target, (Mapping, list)) and id(target) in walked.index
    ))  # fmt: skip


def _check_cost(walked: _Walked, where: str, limits: Limits, wording: Wording) -> None:
    resolved: list[tuple[_Ref, list[int]]] = []
    reached: dict[tuple[str, str, str], list[int]] = {}
    for item in walked.refs:
        vertices = reached.get(item.key)
        if vertices is None:
            vertices = _candidates(walked, item.key)
            if len(vertices) > 1:  # many candidates: one shared vertex, not an edge to each
                vertices = [walked.hub(vertices)]
            reached[item.key] = vertices
        resolved.append((item, vertices))
        walked.edges[item.source].extend(vertices)
        walked.same_place[item.source].extend(vertices)
    loops = components(walked.same_place)
    reached_from_root = reachable(walked.edges, 0)
    for item, vertices in resolved:
        if reached_from_root[item.source] and any(loops[v] == loops[item.source] for v in vertices):
            raise _refusal(wording.loop, where, limits, **item.found())
    if limits.max_fan_out is not None:
        fan_out = expansion(walked.same_place, limits.max_fan_out)
        widest = max((n for n, ok in zip(fan_out, reached_from_root, strict=True) if ok),
                     default=0)
        if widest > limits.max_fan_out:
            raise _refusal(wording.fan_out, where, limits)
    if (
        limits.max_expanded is not None
        and expansion(walked.edges, limits.max_expanded)[0] > limits.max_expanded
    ):
        raise _refusal(wording.expanded, where, limits)
