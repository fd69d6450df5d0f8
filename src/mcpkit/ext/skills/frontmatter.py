"""A skill's `SKILL.md` front matter: the leading `---` block, read as a small, strict YAML.

The Agent Skills format puts YAML between two `---` lines at the top of `SKILL.md`, and a
skill entry carries it "rendered verbatim as a JSON object". Both sides need it: a server to
build its entries, a client to compare a fetched `SKILL.md` field by field with the entry it
holds (a discrepancy refuses the skill). So the reading has to be exact, and the same on both
sides, and what it cannot read exactly it refuses rather than guesses.

What is read: block mappings and block sequences nested by indentation, flow sequences and
mappings (`[a, b]`, `{k: v}`), plain, single- and double-quoted scalars (plain and quoted ones
may run over several lines), literal and folded block scalars (`|`, `>`, with `-`/`+` and an
indentation digit), comments. Scalars resolve by the YAML 1.2 core schema, the one JavaScript
parsers use: `true`/`false`, `null`/`~`, integers (decimal, `0x`, `0o`) and floats; `yes`,
`on` and dates stay strings. Refused, with the line: anchors, aliases, tags, directives,
complex keys, merge keys, duplicate keys, tabs in indentation, `.inf`/`.nan` and numbers
past what JSON carries (integers outside 64 bits, floats past a double), collections nested
deeper than `MAX_DEPTH`, a second document, a sequence begun on its key's line (`k: - a`), and
a plain value holding `: ` (YAML itself rejects that). Every line is read once, so a value
over many lines costs its length, not its square.

Pure: no I/O.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any, Final

from mcpkit.ext.skills.yaml_scalars import (
    MAX_DEPTH,
    UNSUPPORTED,
    Flow,
    FlowEnd,
    FrontMatterError,
    QuoteEnd,
    fold,
    fold_block,
    plain_part,
    quoted,
    resolve,
)

__all__ = [
    "FrontMatterError",
    "parse_front_matter",
    "parse_yaml",
    "split_front_matter",
]

_BLOCK: Final = re.compile(r"^---[ \t]*\r?\n(.*?)(?:\r?\n)?^---[ \t]*(?:\r?\n|\Z)",
                           re.DOTALL | re.MULTILINE)
def split_front_matter(text: str) -> tuple[str, str] | None:
    """(the YAML between the `---` lines, the body after them), or None when `text` does not
    open with a front matter block (a leading byte order mark is allowed)."""
    text = text.removeprefix("\ufeff")
    found = _BLOCK.match(text)
    if found is None:
        return None
    return found.group(1), text[found.end():]


def parse_front_matter(text: str) -> dict[str, Any]:
    """The front matter of a `SKILL.md` as JSON data: a mapping, or FrontMatterError."""
    split = split_front_matter(text)
    if split is None:
        raise FrontMatterError(
            "SKILL.md does not begin with front matter: a line '---', YAML, then '---'")
    value = parse_yaml(split[0], first_line=2)
    if not isinstance(value, dict):
        raise FrontMatterError("the front matter is not a mapping of fields (name: ...)", 2)
    return value


def parse_yaml(source: str, *, first_line: int = 1) -> Any:
    """One YAML document of the subset described above, as JSON data."""
    rows = source.split("\n")
    if len(rows) > 1 and rows[-1] == "":
        rows.pop()  # the text after a final line break is no line
    lines = [_Line(first_line + i, raw) for i, raw in enumerate(rows)]
    reader = _Reader(lines)
    start = reader.next_content(0)
    if start is None:
        return None
    value = reader.block(reader.lines[start].indent)
    rest = reader.next_content(reader.pos)
    if rest is not None:
        raise FrontMatterError("unexpected content (is it indented to match its siblings?)",
                               reader.lines[rest].number)
    return value


@dataclass(slots=True)
class _Line:
    number: int
    raw: str

    def __post_init__(self) -> None:
        self.raw = self.raw.removesuffix("\r")

    @property
    def indent(self) -> int:
        return len(self.raw) - len(self.raw.lstrip(" "))

    @property
    def text(self) -> str:
        return self.raw.strip(" ")

    @property
    def blank(self) -> bool:
        text = self.text
        return not text or text.startswith("#")


class _Reader:
    """A cursor over the lines; each method reads one construct and leaves `pos` after it."""

    def __init__(self, lines: list[_Line]) -> None:
        self.lines = lines
        self.pos = 0
        self.depth = 0
        """How many collections enclose the one being read (at most `MAX_DEPTH`)."""
        for line in lines:
            lead = line.raw[: len(line.raw) - len(line.raw.lstrip(" \t"))]
            if "\t" in lead and line.text:
                raise FrontMatterError("a tab in the indentation (YAML indents with spaces)",
                                       line.number)
            if line.indent == 0 and line.raw.rstrip() in ("---", "..."):
                raise FrontMatterError("a second YAML document is not front matter",
                                       line.number)

    def next_content(self, pos: int) -> int | None:
        while pos < len(self.lines) and self.lines[pos].blank:
            pos += 1
        return pos if pos < len(self.lines) else None

    def block(self, indent: int) -> Any:
        at = self.next_content(self.pos)
        assert at is not None
        line = self.lines[at]
        if line.text == "-" or line.text.startswith("- "):
            return self.sequence(line.indent)
        return self.mapping(line.indent, at, line.raw[line.indent:])

    def deeper(self, number: int) -> None:
        self.depth += 1
        if self.depth > MAX_DEPTH:
            raise FrontMatterError(f"collections nested deeper than {MAX_DEPTH} levels", number)

    def sequence(self, indent: int) -> list[Any]:
        at = self.next_content(self.pos)
        self.deeper(self.lines[at].number if at is not None else 0)
        try:
            return self._sequence(indent)
        finally:
            self.depth -= 1

    def _sequence(self, indent: int) -> list[Any]:
        items: list[Any] = []
        while (at := self.next_content(self.pos)) is not None:
            line = self.lines[at]
            dash = line.text == "-" or line.text.startswith("- ")
            if line.indent < indent or (line.indent == indent and not dash):
                break  # the sequence ended; what follows is its parent's
            if line.indent > indent:
                raise FrontMatterError("expected a '- ' item at this indentation", line.number)
            rest = line.raw[indent + 1:]
            inner = len(rest) - len(rest.lstrip(" "))
            rest = rest.lstrip(" ")
            self.pos = at + 1
            if not rest or rest.startswith("#"):
                items.append(self.nested(indent, line.number, allow_same=False))
            elif _key_split(rest) is not None:
                items.append(self.mapping(indent + 1 + inner, at, rest))
            elif rest[0] in "|>":
                items.append(self.block_scalar(rest, indent, line.number))
            else:
                items.append(self.inline(rest, indent, line.number))
        return items

    def mapping(self, indent: int, at: int, first: str) -> dict[str, Any]:
        self.deeper(self.lines[at].number)
        try:
            return self._mapping(indent, at, first)
        finally:
            self.depth -= 1

    def _mapping(self, indent: int, at: int, first: str) -> dict[str, Any]:
        out: dict[str, Any] = {}
        text: str | None = first
        while True:
            line = self.lines[at]
            assert text is not None
            split = _key_split(text)
            if split is None:
                raise FrontMatterError(f"expected 'key: value', not {text.strip()!r}",
                                       line.number)
            key, rest = split
            key = _key(key, line.number)
            if key in out:
                raise FrontMatterError(f"the key {key!r} appears twice", line.number)
            self.pos = at + 1
            rest = rest.strip(" ")
            if not rest or rest.startswith("#"):
                out[key] = self.nested(indent, line.number, allow_same=True)
            elif rest[0] in "|>":
                out[key] = self.block_scalar(rest, indent, line.number)
            else:
                out[key] = self.inline(rest, indent, line.number)
            nxt = self.next_content(self.pos)
            if nxt is None or self.lines[nxt].indent < indent:
                return out
            if self.lines[nxt].indent > indent:
                raise FrontMatterError("this line is indented more than its siblings",
                                       self.lines[nxt].number)
            at, text = nxt, self.lines[nxt].raw[indent:]

    def nested(self, indent: int, number: int, *, allow_same: bool) -> Any:
        """The value under a `key:` or `-` with nothing after it: a deeper block, a sequence
        at the key's own indentation (YAML allows `key:` then `- item`), or null."""
        nxt = self.next_content(self.pos)
        if nxt is None:
            return None
        line = self.lines[nxt]
        if line.indent > indent:
            return self.block(line.indent)
        if allow_same and line.indent == indent and (line.text == "-"
                                                     or line.text.startswith("- ")):
            return self.sequence(indent)
        return None

    def inline(self, text: str, indent: int, number: int) -> Any:
        """A value on the line (a scalar or a flow collection) and its continuation lines."""
        head = text[0]
        if head in UNSUPPORTED:
            raise FrontMatterError(f"{UNSUPPORTED[head]} ({head}...) are not read in front "
                                   "matter; write the value plainly or quote it", number)
        if head in "[{":
            source = self.gather(text, indent, number, FlowEnd())
            value, end = Flow(source, number, self.depth).value(0)
            tail = source[end:].strip()
            if tail and not tail.startswith("#"):
                raise FrontMatterError(f"unexpected {tail!r} after the flow collection", number)
            return value
        if head in "'\"":
            source = self.gather(text, indent, number, QuoteEnd())
            value, end = quoted(source, 0, number)
            tail = source[end:].strip()
            if tail and not tail.startswith("#"):
                raise FrontMatterError(f"unexpected {tail!r} after the quoted value", number)
            return value
        if text == "-" or text.startswith("- "):
            raise FrontMatterError("a sequence begun on the line of its key or item ('key: - a', "
                                   "'- - a') is not read; put each '- ' item on a line of its "
                                   "own", number)
        parts = [plain_part(text, number)]
        while self.pos < len(self.lines):
            line = self.lines[self.pos]
            if line.text and (line.indent <= indent or line.text.startswith("#")):
                break
            parts.append(plain_part(line.text, line.number) if line.text else "")
            self.pos += 1
        while parts and parts[-1] == "":
            parts.pop()
        return resolve(fold(parts), number)

    def gather(self, text: str, indent: int, number: int, end: QuoteEnd | FlowEnd) -> str:
        """`text` and the following more-indented lines, until `end` says the construct
        ends (a quote closed, brackets balanced); each line is read once."""
        pieces = [text]
        closed = end.feed(text)
        while not closed:
            if self.pos >= len(self.lines):
                raise FrontMatterError("this value is never closed", number)
            line = self.lines[self.pos]
            if line.text and line.indent <= indent:
                raise FrontMatterError("this value is never closed", number)
            pieces.append(line.text)
            closed = end.feed("\n" + line.text)
            self.pos += 1
        return "\n".join(pieces)

    def block_scalar(self, header: str, indent: int, number: int) -> str:
        style, chomp, explicit = header[0], "clip", 0
        spec = header[1:].split("#", 1)[0].strip()
        for char in spec:
            if char in "+-":
                chomp = "keep" if char == "+" else "strip"
            elif char.isdigit() and char != "0":
                explicit = int(char)
            else:
                raise FrontMatterError(f"a block scalar header {header!r} is not |, >, "
                                       "with - or + and an indentation digit", number)
        body: list[_Line] = []
        while self.pos < len(self.lines):
            line = self.lines[self.pos]
            if line.text and line.indent <= indent:
                break
            body.append(line)
            self.pos += 1
        content = [ln for ln in body if ln.text]
        base = indent + explicit if explicit else (min(ln.indent for ln in content)
                                                   if content else indent + 1)
        rows = [ln.raw[base:] if len(ln.raw) >= base else "" for ln in body]
        trailing = 0
        while rows and rows[-1].strip(" ") == "":
            rows.pop()
            trailing += 1
        text = "\n".join(rows) if style == "|" else fold_block(rows)
        if not rows:
            return "\n" * trailing if chomp == "keep" else ""
        if chomp == "strip":
            return text
        return text + "\n" + ("\n" * trailing if chomp == "keep" else "")


def _key_split(text: str) -> tuple[str, str] | None:
    """(key, rest) when `text` opens with a mapping key (`key:` then a space or the end)."""
    if text[:1] in "'\"":
        try:
            _, end = quoted(text, 0, 0)
        except FrontMatterError:
            return None
        rest = text[end:].lstrip(" ")
        return (text[:end], rest[1:]) if rest.startswith(":") and (
            len(rest) == 1 or rest[1] == " ") else None
    if text[:1] in "[{#" or text.startswith("- ") or text == "-":
        return None
    for i, char in enumerate(text):
        if char == ":" and (i + 1 == len(text) or text[i + 1] == " "):
            return text[:i], text[i + 1:]
        if char == "#" and i and text[i - 1] == " ":
            return None
    return None


def _key(text: str, number: int) -> str:
    text = text.strip(" ")
    if not text:
        raise FrontMatterError("a key is empty", number)
    if text[0] in "'\"":
        return quoted(text, 0, number)[0]
    if text[0] in "?" or text == "<<":
        raise FrontMatterError(f"the key {text!r} (a complex or merge key) is not read in "
                               "front matter", number)
    if text[0] in UNSUPPORTED:
        raise FrontMatterError(f"{UNSUPPORTED[text[0]]} are not read in front matter", number)
    return text


