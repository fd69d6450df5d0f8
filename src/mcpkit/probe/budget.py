"""What a catalogue costs in the model's context: tokens per tool, prompt, resource and
template entry, and of the instructions, with where each tool's weight sits.

An entry costs the tokens of its compact JSON as listed (no spaces after `,` and `:`, UTF-8,
members in the server's order): that is what a host puts in the prompt when it forwards the
catalogue unchanged. The instructions cost the tokens of their text. A tool's weight is split
by member (description, inputSchema, outputSchema, annotations: the tokens of that member's
value as JSON; "other" is the rest: name, title, keys and punctuation), and a `$defs` entry
that several tools repeat word for word is shown once with what the copies cost.

Counting is offline: `toktok` (the `probe` extra) has the `o200k_base` and `cl100k_base`
vocabularies compiled in, so nothing is downloaded when a count is made.
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass, field
from typing import Any, Final

import orjson

from mcpkit.probe.catalogue import Catalogue
from mcpkit.protocol.extras import require

__all__ = [
    "ENCODINGS",
    "WEIGHTS",
    "Budget",
    "Cost",
    "Counter",
    "RepeatedDef",
    "budget",
    "compact",
]

ENCODINGS: Final = ("o200k_base", "cl100k_base")
"""The encodings counted; the first is the default."""

WEIGHTS: Final = ("description", "inputSchema", "outputSchema", "annotations")
"""The members of a tool whose weight is shown apart."""

_KEYS: Final = {"tools": "name", "prompts": "name", "resources": "uri",
                "resourceTemplates": "uriTemplate"}


def compact(value: Any) -> str:
    """The compact JSON text of a value, as it is counted."""
    return orjson.dumps(value).decode()


class Counter:
    """Counts tokens in one encoding."""

    def __init__(self, encoding: str = ENCODINGS[0]) -> None:
        if encoding not in ENCODINGS:
            raise ValueError(f"unknown encoding {encoding!r}; use {' or '.join(ENCODINGS)}")
        self.encoding = encoding
        self._toktok = require("toktok", "mcpkit probe's token budget")

    def count(self, texts: list[str]) -> list[int]:
        if not texts:
            return []
        counts: list[int] = self._toktok.batch_count(texts, self.encoding, threads=1)
        return counts

    def one(self, text: str) -> int:
        return self.count([text])[0]


@dataclass(frozen=True, slots=True)
class Cost:
    """One entry's tokens; for a tool, `weight` splits them by member."""

    kind: str
    key: str
    tokens: int
    weight: dict[str, int] = field(default_factory=dict)


@dataclass(frozen=True, slots=True)
class RepeatedDef:
    """A `$defs` (or `definitions`) entry that several tools carry word for word."""

    name: str
    tools: tuple[str, ...]
    tokens: int
    """The tokens of one copy; the copies past the first cost `tokens * (len(tools) - 1)`."""

    @property
    def wasted(self) -> int:
        return self.tokens * (len(self.tools) - 1)


@dataclass(slots=True)
class Budget:
    capset: str
    encoding: str
    entries: list[Cost]
    instructions: int
    repeated: list[RepeatedDef]

    def of(self, kind: str) -> list[Cost]:
        return [c for c in self.entries if c.kind == kind]

    def total(self, kind: str | None = None) -> int:
        entries = self.entries if kind is None else self.of(kind)
        return sum(c.tokens for c in entries) + (self.instructions if kind is None else 0)

    def weight(self) -> dict[str, int]:
        """The tools' weight summed by member."""
        out = dict.fromkeys((*WEIGHTS, "other"), 0)
        for cost in self.of("tools"):
            for part, tokens in cost.weight.items():
                out[part] += tokens
        return out

    def top(self, n: int = 5) -> list[Cost]:
        return sorted(self.of("tools"), key=lambda c: -c.tokens)[:n]


def _defs(tool: dict[str, Any]) -> list[tuple[str, str]]:
    found = []
    for member in ("inputSchema", "outputSchema"):
        schema = tool.get(member)
        if type(schema) is not dict:
            continue
        for keyword in ("$defs", "definitions"):
            defs = schema.get(keyword)
            if type(defs) is dict:
                found += [(name, compact(value)) for name, value in defs.items()]
    return found


def budget(catalogue: Catalogue, instructions: str | None, counter: Counter) -> Budget:
    """The cost of everything `catalogue` lists, and of the instructions."""
    texts: list[str] = []
    plan: list[tuple[str, str, dict[str, Any]]] = []
    for kind, key in _KEYS.items():
        for item in getattr(catalogue, kind):
            plan.append((kind, str(item.get(key, "")), item))
            texts.append(compact(item))
    parts: list[tuple[int, str]] = []
    for index, (kind, _, item) in enumerate(plan):
        if kind != "tools":
            continue
        for member in WEIGHTS:
            if member in item:
                parts.append((index, member))
                texts.append(compact(item[member]))
    uses: dict[tuple[str, str], list[str]] = defaultdict(list)
    for kind, key, item in plan:
        if kind == "tools":
            for found in _defs(item):
                if key not in uses[found]:
                    uses[found].append(key)
    repeated_keys = [k for k, tools in uses.items() if len(tools) > 1]
    texts += [text for _, text in repeated_keys]
    texts.append(instructions or "")
    counts = counter.count(texts)
    totals = counts[:len(plan)]
    weights: list[dict[str, int]] = [{} for _ in plan]
    for (index, member), tokens in zip(parts, counts[len(plan):len(plan) + len(parts)],
                                       strict=True):
        weights[index][member] = tokens
    for index, weight in enumerate(weights):
        if plan[index][0] == "tools":
            weight["other"] = max(0, totals[index] - sum(weight.values()))
    def_counts = counts[len(plan) + len(parts):-1]
    repeated = sorted(
        (RepeatedDef(name, tuple(uses[(name, text)]), tokens)
         for (name, text), tokens in zip(repeated_keys, def_counts, strict=True)),
        key=lambda r: -r.wasted)
    entries = [Cost(kind, key, tokens, weights[i])
               for i, ((kind, key, _), tokens) in enumerate(zip(plan, totals, strict=True))]
    return Budget(catalogue.capset, counter.encoding, entries,
                  counts[-1] if instructions else 0, repeated)
