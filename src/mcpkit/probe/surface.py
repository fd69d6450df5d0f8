"""A server's tool, prompt and resource surface as a file, and what changed between two.

A snapshot (`FORMAT`) keeps each entry exactly as listed (name, description, schemas,
annotations, everything), its fingerprint (SHA-256 of the entry's canonical JSON: sorted keys,
no spaces, so member order does not count as a change) and its tokens; with the server's
identity, the client capabilities it was listed under and the encoding. A host that approved a
server's tools pins that file; `diff` says what was added, removed or changed since, field by
field, with the token delta, so a description rewritten after approval (a "rug pull") is seen.

`diff` recounts both sides in the old snapshot's encoding, so the deltas compare like with
like. A file that is not a snapshot is refused with a `ValueError` naming what is wrong.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Final

import orjson

from mcpkit.probe.budget import Counter, compact

__all__ = [
    "DIFF_FORMAT",
    "FORMAT",
    "KINDS",
    "Change",
    "Diff",
    "diff",
    "fingerprint",
    "load_snapshot",
    "short",
    "snapshot_of",
]

FORMAT: Final = "mcpkit-surface/1"
DIFF_FORMAT: Final = "mcpkit-diff/1"
KINDS: Final = {"tools": "name", "prompts": "name", "resources": "uri",
                "resourceTemplates": "uriTemplate"}
"""Each kind of entry, and the member that names it."""
_SHOWN: Final = 120


def fingerprint(entry: Any) -> str:
    return "sha256:" + hashlib.sha256(orjson.dumps(entry, option=orjson.OPT_SORT_KEYS)).hexdigest()


def snapshot_of(catalogue: Any, identity: Any, target: str, counter: Counter) -> dict[str, Any]:
    """The snapshot document of a listed `Catalogue` and the server's `Identity`."""
    out: dict[str, Any] = {
        "format": FORMAT, "target": target, "serverInfo": identity.server_info,
        "era": identity.era, "version": identity.version, "capset": catalogue.capset,
        "clientCapabilities": catalogue.capabilities, "encoding": counter.encoding,
    }
    for kind, key in KINDS.items():
        items = getattr(catalogue, kind)
        counts = counter.count([compact(item) for item in items])
        out[kind] = [{key: item.get(key), "fingerprint": fingerprint(item), "tokens": tokens,
                      "definition": item} for item, tokens in zip(items, counts, strict=True)]
    return out


def load_snapshot(path: str) -> dict[str, Any]:
    """Read and check a snapshot file; ValueError says why it is not one."""
    try:
        data = orjson.loads(Path(path).read_bytes())
    except OSError as exc:
        raise ValueError(f"{path}: cannot read it: {exc.strerror or exc}") from None
    except orjson.JSONDecodeError as exc:
        raise ValueError(f"{path}: not JSON ({exc}); make one with `mcpkit snapshot TARGET > "
                         f"{path}`") from None
    if type(data) is not dict or data.get("format") != FORMAT:
        raise ValueError(f"{path}: not a {FORMAT} snapshot (its format is "
                         f"{data.get('format') if type(data) is dict else type(data).__name__!r})")
    for kind, key in KINDS.items():
        entries = data.get(kind, [])
        if type(entries) is not list or any(
                type(e) is not dict or type(e.get("definition")) is not dict or key not in e
                for e in entries):
            raise ValueError(f"{path}: {kind} must be a list of entries with {key!r} and a "
                             "definition")
    return data


@dataclass(frozen=True, slots=True)
class Change:
    kind: str
    key: str
    what: str
    """"added", "removed" or "changed"."""
    old_tokens: int
    new_tokens: int
    fields: tuple[tuple[str, Any, Any], ...] = ()
    """(path, old value, new value) of each member that differs (a missing one is None)."""

    @property
    def delta(self) -> int:
        return self.new_tokens - self.old_tokens


@dataclass(slots=True)
class Diff:
    encoding: str
    changes: list[Change] = field(default_factory=list)
    old_tokens: int = 0
    new_tokens: int = 0

    def to_json(self) -> dict[str, Any]:
        return {
            "format": DIFF_FORMAT, "encoding": self.encoding, "changed": bool(self.changes),
            "tokens": {"old": self.old_tokens, "new": self.new_tokens,
                       "delta": self.new_tokens - self.old_tokens},
            "changes": [{"kind": c.kind, "key": c.key, "change": c.what,
                         "tokens": {"old": c.old_tokens, "new": c.new_tokens, "delta": c.delta},
                         "fields": [{"path": p, "old": o, "new": n} for p, o, n in c.fields]}
                        for c in self.changes],
        }


def _fields(old: Any, new: Any, path: str) -> list[tuple[str, Any, Any]]:
    if type(old) is dict and type(new) is dict:
        out: list[tuple[str, Any, Any]] = []
        for name in [*old, *(k for k in new if k not in old)]:
            out += _fields(old.get(name), new.get(name), f"{path}.{name}" if path else name)
        return out
    if old == new and type(old) is type(new):
        return []
    return [(path or "(entry)", old, new)]


def _counts(entries: list[dict[str, Any]], counter: Counter) -> list[int]:
    return counter.count([compact(e["definition"]) for e in entries])


def diff(old: dict[str, Any], new: dict[str, Any], counter: Counter | None = None) -> Diff:
    """What changed from snapshot `old` to snapshot `new` (both as `load_snapshot` returns)."""
    counter = counter or Counter(str(old.get("encoding") or "o200k_base"))
    result = Diff(counter.encoding)
    for kind, key in KINDS.items():
        before = {str(e[key]): e for e in old.get(kind, [])}
        after = {str(e[key]): e for e in new.get(kind, [])}
        old_counts = dict(zip(before, _counts(list(before.values()), counter), strict=True))
        new_counts = dict(zip(after, _counts(list(after.values()), counter), strict=True))
        result.old_tokens += sum(old_counts.values())
        result.new_tokens += sum(new_counts.values())
        for name in [*before, *(k for k in after if k not in before)]:
            if name not in after:
                result.changes.append(Change(kind, name, "removed", old_counts[name], 0))
            elif name not in before:
                result.changes.append(Change(kind, name, "added", 0, new_counts[name]))
            elif fingerprint(before[name]["definition"]) != fingerprint(after[name]["definition"]):
                fields = _fields(before[name]["definition"], after[name]["definition"], "")
                result.changes.append(Change(kind, name, "changed", old_counts[name],
                                             new_counts[name], tuple(fields)))
    return result


def short(value: Any) -> str:
    """A value in at most a line, for the human view of a diff."""
    if value is None:
        return "(absent)"
    text = value if type(value) is str else compact(value)
    text = repr(text) if type(value) is str else text
    return text if len(text) <= _SHOWN else text[:_SHOWN - 1] + "…"
