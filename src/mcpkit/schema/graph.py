"""Graph algorithms over vertices numbered 0..n-1 with adjacency lists, for the cost analysis of
a JSON Schema's reference graph (`mcpkit.schema.walk`): what is reachable, the strongly
connected components (a `$ref` loop), and how much evaluating a vertex expands to. Iterative, so
an adversarial graph cannot exhaust the stack. Standard library only."""

from __future__ import annotations

from collections.abc import Sequence

__all__ = [
    "components",
    "expansion",
    "reachable",
]


def reachable(edges: Sequence[Sequence[int]], start: int) -> list[bool]:
    seen = [False] * len(edges)
    seen[start] = True
    todo = [start]
    while todo:
        for w in edges[todo.pop()]:
            if not seen[w]:
                seen[w] = True
                todo.append(w)
    return seen


def expansion(edges: Sequence[Sequence[int]], limit: int) -> list[int]:
    """For each vertex, how many vertices evaluating it evaluates with every reference inlined
    and each loop counted once; capped just past `limit`, so a huge count costs nothing."""
    component = components(edges)
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


def components(edges: Sequence[Sequence[int]]) -> list[int]:
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
