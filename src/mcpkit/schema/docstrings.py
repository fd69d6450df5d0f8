"""A function's docstring as a description, and its per-parameter descriptions.

A tool's docstring is its description; a Google-style "Args:" section or a NumPy-style
"Parameters" section also describes each parameter, so authors document a parameter once, where
Python programmers already look. Reading stops at the next section, so "Returns:" and the like
never leak into a parameter's text.

Imports: the standard library only.
"""

from __future__ import annotations

import functools
import inspect
import re
from collections.abc import Callable
from typing import Any

__all__ = [
    "docstring_of",
    "parameter_descriptions",
]

_GOOGLE_HEADER = re.compile(r"(Args|Arguments|Parameters|Params|Keyword Args)\s*:\s*\Z")
_GOOGLE_ENTRY = re.compile(r"\*{0,2}([A-Za-z_]\w*)\s*(?:\([^)]*\))?\s*:\s*(.*)\Z")
_NUMPY_ENTRY = re.compile(r"([A-Za-z_]\w*(?:\s*,\s*[A-Za-z_]\w*)*)\s*(?::.*)?\Z")


def docstring_of(fn: Callable[..., Any]) -> str | None:
    """The cleaned docstring of `fn`, looking through `functools.partial`; None when empty."""
    target: Any = fn
    while isinstance(target, functools.partial):
        target = target.func
    doc = inspect.getdoc(target)
    return doc or None


def _is_rule(line: str) -> bool:
    return set(line.strip()) == {"-"}


def parameter_descriptions(doc: str | None) -> dict[str, str]:
    """Parameter descriptions from a Google-style "Args:" or NumPy-style "Parameters" section."""
    if not doc:
        return {}
    lines = doc.splitlines()
    found: dict[str, list[str]] = {}
    i = 0
    while i < len(lines):
        text = lines[i].strip()
        indent = len(lines[i]) - len(lines[i].lstrip())
        numpy = (
            text in ("Parameters", "Arguments", "Args")
            and i + 1 < len(lines)
            and _is_rule(lines[i + 1])
        )
        if not (numpy or _GOOGLE_HEADER.match(text)):
            i += 1
            continue
        i += 2 if numpy else 1
        entry_indent: int | None = indent if numpy else None
        current: list[str] | None = None
        while i < len(lines):
            line = lines[i]
            if not line.strip():
                i += 1
                continue
            here = len(line) - len(line.lstrip())
            next_is_rule = i + 1 < len(lines) and _is_rule(lines[i + 1])
            if here < (entry_indent if entry_indent is not None else indent + 1) or (
                numpy and next_is_rule
            ):
                break
            if entry_indent is None:
                entry_indent = here
            match = (_NUMPY_ENTRY if numpy else _GOOGLE_ENTRY).match(line.strip())
            if here == entry_indent and match:
                names = [n.strip() for n in match.group(1).split(",")]
                current = []
                for n in names:
                    found[n] = current
                if not numpy and match.group(2):
                    current.append(match.group(2))
            elif current is not None and here > entry_indent:
                current.append(line.strip())
            elif here <= indent and not numpy:
                break
            i += 1
    return {name: " ".join(parts) for name, parts in found.items() if parts}
