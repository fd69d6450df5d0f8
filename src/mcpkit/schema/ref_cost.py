"""What checking a value against a schema can cost once every `$ref` is followed (given
`Limits.max_fan_out` or `Limits.max_expanded`): the references become edges of the walk's graph
(`mcpkit.schema.walked.Walked`), a reference with many candidates through one shared vertex,
then a loop that never descends into the value, too many subschemas applying to one value and
too many in all are refused (the graph algorithms are `mcpkit.schema.graph`'s). Imports the
standard library and those two modules.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from mcpkit.schema.graph import components, expansion, reachable
from mcpkit.schema.walked import Limits, Ref, Walked, Wording, refusal

__all__ = [
    "check_cost",
]


def _candidates(walked: Walked, key: tuple[str, str, str]) -> list[int]:
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


def check_cost(walked: Walked, where: str, limits: Limits, wording: Wording) -> None:
    resolved: list[tuple[Ref, list[int]]] = []
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
            raise refusal(wording.loop, where, limits, **item.found())
    if limits.max_fan_out is not None:
        fan_out = expansion(walked.same_place, limits.max_fan_out)
        widest = max((n for n, ok in zip(fan_out, reached_from_root, strict=True) if ok),
                     default=0)
        if widest > limits.max_fan_out:
            raise refusal(wording.fan_out, where, limits)
    if (
        limits.max_expanded is not None
        and expansion(walked.edges, limits.max_expanded)[0] > limits.max_expanded
    ):
        raise refusal(wording.expanded, where, limits)
