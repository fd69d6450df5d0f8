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

The walk and the resolving of references are here; what a walk is given and holds is
`mcpkit.schema.walked`'s, JSON pointers `mcpkit.schema.pointers`', the cost once references are
followed `mcpkit.schema.ref_cost`'s. Sans-IO: the standard library, those modules and
`mcpkit.schema.places` (each dialect's places).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Final
from urllib.parse import urldefrag, urljoin, urlsplit

from mcpkit.schema.places import Places, places_of
from mcpkit.schema.pointers import MISSING, pointer, resolve_pointer
from mcpkit.schema.ref_cost import check_cost
from mcpkit.schema.walked import Limits, Ref, Walked, Wording, refusal, shorten

__all__ = [
    "MISSING",
    "Limits",
    "Wording",
    "check_schema_structure",
    "resolve_pointer",
]
"""`Limits` and `Wording` are `mcpkit.schema.walked`'s, `MISSING` and `resolve_pointer`
`mcpkit.schema.pointers`'; named here too, with the walk they are given to."""

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


def check_schema_structure(
    schema: Mapping[str, Any], where: str, limits: Limits, wording: Wording
) -> None:
    """Raise `ValueError`, in the caller's words, naming `where` and the place refused."""
    walked = _walk(schema, where, limits, wording)
    for item in walked.refs:
        _check_ref(walked, item, where, limits, wording)
    if limits.max_fan_out is not None or limits.max_expanded is not None:
        check_cost(walked, where, limits, wording)



def _walk(schema: Mapping[str, Any], where: str, limits: Limits, wording: Wording) -> Walked:
    dialect = places_of(schema)
    walked = Walked()
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
            raise refusal(wording.too_many, where, limits)
        if depth > limits.max_depth:
            raise refusal(wording.too_deep, where, limits)
        if isinstance(node, list):
            if seen + len(stack) + len(node) > limits.max_nodes:
                raise refusal(wording.too_many, where, limits)
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
                found = {"keyword": dialect.id_keyword, "ref": shorten(node[dialect.id_keyword]),
                         "at": pointer((path, dialect.id_keyword)), "problem": str(exc)}
                raise refusal(wording.bad_uri, where, limits, **found) from None
        elif hidden is None and dialect.base_id(node) is not None:
            hidden = path
        for keyword in _REF_KEYWORDS:
            ref = node.get(keyword)
            if isinstance(ref, str):
                item = Ref(keyword, ref, (path, keyword), vertex, base)
                if len(ref) > limits.max_uri_length:
                    problem = f"is longer than {limits.max_uri_length} characters"
                    raise refusal(wording.bad_uri, where, limits, problem=problem,
                                   **item.found(clip=True))
                if hidden is not None:
                    raise refusal(wording.unplaced, where, limits, id_at=pointer(hidden),
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
        raise refusal(wording.too_many, where, limits)


def _declare(
    walked: Walked, dialect: Places, node: Mapping[str, Any], base: str, limits: Limits
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


def _check_ref(walked: Walked, item: Ref, where: str, limits: Limits, wording: Wording) -> None:
    """Resolve one reference as a validator would, keeping every node it may evaluate."""
    try:
        if item.ref.startswith("#"):  # stays in the current resource, whatever its scheme
            uri, fragment = item.base, item.ref[1:]
        else:
            uri, fragment = urldefrag(urljoin(item.base, item.ref))
        parts = urlsplit(uri)
    except ValueError:
        raise refusal(wording.bad_uri, where, limits, problem="is not a valid URI reference",
                       **item.found()) from None
    item.key = (item.keyword, uri, fragment)
    targets = walked.resolved.get((uri, fragment))
    if targets is None:
        targets = walked.resolved[(uri, fragment)] = _resolve(walked, uri, fragment)
    if targets == "outside":
        kind = "remote" if parts.netloc or parts.scheme in _NETWORK_SCHEMES else "external"
        raise refusal(wording.outside, where, limits, kind=kind, **item.found())
    if isinstance(targets, str):
        raise refusal(getattr(wording, targets), where, limits, **item.found())


def _resolve(walked: Walked, uri: str, fragment: str) -> list[Any] | str:
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

