"""The scalars and flow collections of front matter YAML, and the error every reading raises.

`mcpkit.ext.skills.frontmatter` reads the block structure (indentation, `key:`, `- `) and hands
each value written on a line to this module: a plain scalar resolved by the YAML 1.2 core
schema, a quoted one with its escapes, a flow collection by recursive descent, a block
scalar's lines folded. Split from the block reader so that each stays small.

Pure: no I/O.
"""

from __future__ import annotations

import math
import re
from typing import Any, Final

from mcpkit.errors import FrontMatterError

__all__ = [
    "MAX_DEPTH",
    "UNSUPPORTED",
    "Flow",
    "FlowEnd",
    "FrontMatterError",
    "QuoteEnd",
    "fold",
    "fold_block",
    "plain_part",
    "quoted",
    "resolve",
]

_INT: Final = re.compile(r"[-+]?[0-9]+")
_FLOAT: Final = re.compile(r"[-+]?(\.[0-9]+|[0-9]+(\.[0-9]*)?)([eE][-+]?[0-9]+)?")
_SPECIAL_FLOAT: Final = re.compile(r"[-+]?\.(inf|Inf|INF)|\.(nan|NaN|NAN)")
_ESCAPES: Final = {"0": "\0", "a": "\a", "b": "\b", "t": "\t", "\t": "\t", "n": "\n",
                   "v": "\v", "f": "\f", "r": "\r", "e": "\x1b", " ": " ", '"': '"',
                   "/": "/", "\\": "\\", "N": "\x85", "_": "\xa0", "L": "\u2028",
                   "P": "\u2029"}
_HEX_ESCAPES: Final = {"x": 2, "u": 4, "U": 8}
_BREAK: Final = "\uffff"
"""Stands for a line break of the source inside a quoted value (an escaped `\\n` is kept)."""
MAX_DEPTH: Final = 64
"""Deepest nesting of collections read: a skill's front matter is a few levels deep, and its
entry, which carries it, must still be written as JSON (255 levels in all) inside a result."""
_INT_RANGE: Final = range(-(2**63), 2**64)
"""The integers a JSON number carries on the wire (the entry holding them is sent as JSON)."""
UNSUPPORTED: Final = {"&": "anchors", "*": "aliases", "!": "tags", "%": "directives",
                       "@": "reserved indicators", "`": "reserved indicators"}


def plain_part(text: str, number: int) -> str:
    """One line of a plain scalar, its comment cut off; a `: ` inside is refused (YAML reads
    it as a nested mapping, which a plain value cannot hold)."""
    cut = text.find(" #")
    text = (text[:cut] if cut >= 0 else text).strip(" ")
    if ": " in text or text.endswith(":"):
        raise FrontMatterError(f"the plain value {text!r} holds ': '; quote it "
                               "(\"...\") to keep the colon", number)
    return text


def fold(parts: list[str]) -> str:
    """Lines of a multi-line plain or quoted scalar: a single break is a space, an empty line
    a newline."""
    out = ""
    pending = 0
    for i, part in enumerate(parts):
        if i == 0:
            out = part
            continue
        if part == "":
            pending += 1
            continue
        out += ("\n" * pending) if pending else " "
        out += part
        pending = 0
    return out


def fold_block(rows: list[str]) -> str:
    """A folded (`>`) block's lines: a break between two text lines becomes a space, each
    empty line between them a newline; breaks around more-indented lines are kept."""
    out, prev, empties = "", "", 0
    for row in rows:
        if row == "":
            empties += 1
            continue
        kind = "more" if row.startswith(" ") else "text"
        if not prev:
            out += "\n" * empties + row
        elif prev == kind == "text":
            out += (" " if empties == 0 else "\n" * empties) + row
        else:
            out += "\n" * (empties + 1) + row
        prev, empties = kind, 0
    return out


def resolve(text: str, number: int) -> Any:
    """A plain scalar by the YAML 1.2 core schema."""
    if text in ("", "~", "null", "Null", "NULL"):
        return None
    if text in ("true", "True", "TRUE"):
        return True
    if text in ("false", "False", "FALSE"):
        return False
    number_text = text
    if _INT.fullmatch(text):
        # Converted only when short enough to be in range: a decimal of thousands of digits
        # would not even convert (Python refuses past 4,300).
        value: int | float | None = (int(text) if len(text.lstrip("+-").lstrip("0")) <= 20
                                     else None)
    elif re.fullmatch(r"0o[0-7]+", text):
        value = int(text[2:], 8)
    elif re.fullmatch(r"0x[0-9a-fA-F]+", text):
        value = int(text[2:], 16)
    elif _FLOAT.fullmatch(text):
        value = float(text)
        if math.isinf(value):
            raise FrontMatterError(f"{text} is too large for a JSON number; quote it to keep "
                                   "it as text", number)
        return value
    else:
        value = 0
        number_text = ""
    if number_text:
        if value is None or value not in _INT_RANGE:
            raise FrontMatterError(f"the integer {text[:40]}{'...' if len(text) > 40 else ''} "
                                   "is outside the 64-bit range a JSON number carries; quote it "
                                   "to keep it as text", number)
        return value
    if _SPECIAL_FLOAT.fullmatch(text):
        raise FrontMatterError(f"{text} has no JSON form; quote it to keep it as text", number)
    return text


def quoted(text: str, start: int, number: int) -> tuple[str, int]:
    """The quoted scalar opening at `start` and the index after its closing quote."""
    quote = text[start]
    i = start + 1
    chunks: list[str] = []
    while i < len(text):
        char = text[i]
        if char == quote:
            if quote == "'" and text[i + 1:i + 2] == "'":
                chunks.append("'")
                i += 2
                continue
            joined = "".join(chunks)
            if _BREAK in joined:  # a quoted value over several lines: its breaks fold
                joined = fold([part.strip(" ") for part in joined.split(_BREAK)])
            return joined, i + 1
        if char == "\\" and quote == '"':
            code = text[i + 1:i + 2]
            if code in _HEX_ESCAPES:
                width = _HEX_ESCAPES[code]
                digits = text[i + 2:i + 2 + width]
                if len(digits) != width or not re.fullmatch(r"[0-9a-fA-F]+", digits):
                    raise FrontMatterError(f"a bad escape \\{code}{digits}", number)
                chunks.append(chr(int(digits, 16)))
                i += 2 + width
                continue
            if code == "\n":
                i += 2
                continue
            if code not in _ESCAPES:
                raise FrontMatterError(f"an unknown escape \\{code} in a quoted value", number)
            chunks.append(_ESCAPES[code])
            i += 2
            continue
        chunks.append(_BREAK if char == "\n" else char)
        i += 1
    raise FrontMatterError("a quoted value is never closed", number)


class QuoteEnd:
    """Whether a quoted scalar gathered line by line has closed, reading each line once (as
    `quoted` reads it: a backslash escapes in double quotes, `''` in single ones)."""

    __slots__ = ("escaped", "open", "quote", "started")

    def __init__(self) -> None:
        self.quote = ""
        self.started = False
        self.escaped = False
        self.open = True

    def feed(self, piece: str) -> bool:
        for char in piece:
            if not self.started:
                self.quote, self.started = char, True
            elif self.escaped:
                self.escaped = False
            elif char == "\\" and self.quote == '"':
                self.escaped = True
            elif char == self.quote:
                # A quote closes, or in single quotes begins `''`: the next character says.
                self.open = not self.open if self.quote == "'" else False
                if self.quote == '"':
                    return True
            elif self.quote == "'" and not self.open:
                return True
        return not self.open


class FlowEnd:
    """Whether a flow collection gathered line by line has closed (its brackets balanced
    outside quotes), reading each line once."""

    __slots__ = ("depth", "escaped", "quote")

    def __init__(self) -> None:
        self.depth = 0
        self.quote = ""
        self.escaped = False

    def feed(self, piece: str) -> bool:
        for char in piece:
            if self.quote:
                if self.escaped:
                    self.escaped = False
                elif char == "\\" and self.quote == '"':
                    self.escaped = True
                elif char == self.quote:
                    self.quote = ""
            elif char in "'\"":
                self.quote = char
            elif char in "[{":
                self.depth += 1
            elif char in "]}":
                self.depth -= 1
                if self.depth == 0:
                    return True
        return False


class Flow:
    """A flow collection (`[a, "b", {c: 1}]`), read by recursive descent."""

    def __init__(self, source: str, number: int, depth: int = 0) -> None:
        self.source = source
        self.number = number
        self.depth = depth
        """How deep the collection sits in the front matter (its block parents)."""

    def fail(self, message: str) -> FrontMatterError:
        shown = self.source if len(self.source) <= 80 else self.source[:77] + "..."
        return FrontMatterError(f"{message} in the flow collection {shown!r}", self.number)

    def skip(self, i: int) -> int:
        while i < len(self.source) and self.source[i] in " \n":
            i += 1
        return i

    def value(self, i: int) -> tuple[Any, int]:
        i = self.skip(i)
        if i >= len(self.source):
            raise self.fail("a missing value")
        char = self.source[i]
        if char == "[":
            return self.items(i + 1, "]")
        if char == "{":
            return self.items(i + 1, "}")
        if char in "'\"":
            return quoted(self.source, i, self.number)
        if char in UNSUPPORTED:
            raise self.fail(f"{UNSUPPORTED[char]} are not read")
        end = i
        while end < len(self.source) and self.source[end] not in ",]}":
            if self.source[end] == ":" and self.source[end + 1:end + 2] in (" ", ",", "]",
                                                                           "}", "\n", ""):
                break
            end += 1
        return resolve(" ".join(self.source[i:end].split()), self.number), end

    def items(self, i: int, close: str) -> tuple[Any, int]:
        self.depth += 1
        if self.depth > MAX_DEPTH:
            raise self.fail(f"collections nested deeper than {MAX_DEPTH} levels")
        try:
            return self._items(i, close)
        finally:
            self.depth -= 1

    def _items(self, i: int, close: str) -> tuple[Any, int]:
        seq: list[Any] = []
        table: dict[str, Any] = {}
        while True:
            i = self.skip(i)
            if i < len(self.source) and self.source[i] == close:
                return (seq if close == "]" else table), i + 1
            item, i = self.value(i)
            i = self.skip(i)
            if close == "}":
                if i >= len(self.source) or self.source[i] != ":":
                    raise self.fail("a key without ': value'")
                if not isinstance(item, str):
                    raise self.fail(f"the key {item!r} is not text")
                if item in table:
                    raise self.fail(f"the key {item!r} twice")
                table[item], i = self.value(i + 1)
                i = self.skip(i)
            else:
                seq.append(item)
            if i < len(self.source) and self.source[i] == ",":
                i += 1
            elif i >= len(self.source) or self.source[i] != close:
                raise self.fail(f"a missing ',' or '{close}'")
