"""`SKILL.md` front matter, the YAML a skill's author writes and a client reads back from a
server it may not trust (mcpkit.ext.skills.frontmatter).

Two properties, with expected values from outside the parser:

- data written out as YAML by an emitter of this file (block and flow collections, plain,
  double-quoted and literal scalars, comments, blank lines) reads back as exactly that data;
- any text at all reads as JSON data that the wire can carry (it is sent, verbatim, in a
  skill's entry) or fails with `FrontMatterError` naming a line of the file: never another
  exception, never a stack exhausted by nesting, and never a time that grows with the square
  of a value's lines.
"""

from __future__ import annotations

import json
import re
from typing import Any

import orjson
import pytest
from hypothesis import example, given
from hypothesis import strategies as st

from mcpkit.ext.skills.frontmatter import FrontMatterError, parse_front_matter, parse_yaml

RESERVED = {"true", "false", "null", "True", "False", "Null", "TRUE", "FALSE", "NULL", "~"}
PLAIN = re.compile(r"[A-Za-z][A-Za-z0-9 _.-]*[A-Za-z0-9]|[A-Za-z]")
NUMBERISH = re.compile(r"[-+]?(\.[0-9]+|[0-9]+(\.[0-9]*)?)([eE][-+]?[0-9]+)?|0x.*|0o.*")

KEYS = st.from_regex(r"[a-z][a-z0-9_-]{0,8}", fullmatch=True)
TEXT = st.text(st.characters(codec="utf-8", exclude_categories=("Cs",)), max_size=12)
WORDS = st.from_regex(r"[A-Za-z][A-Za-z0-9 _.-]{0,10}[A-Za-z0-9]", fullmatch=True)
SCALARS = st.one_of(
    st.none(), st.booleans(), st.integers(-(2**63), 2**64 - 1),
    st.floats(allow_nan=False, allow_infinity=False, width=64), TEXT, WORDS,
    st.lists(st.from_regex(r"[a-z][a-z .]{0,15}", fullmatch=True), min_size=2, max_size=4)
    .map(lambda lines: "\n".join(lines) + "\n"),
)
DATA = st.recursive(
    SCALARS,
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(KEYS, inner, max_size=3),
    max_leaves=10,
)


def scalar(value: Any, style: int) -> str:
    """One scalar on a line: plain where that reads back the same, else double-quoted (JSON's
    escapes are YAML's)."""
    if value is None:
        return ["null", "~", ""][style % 3]
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return str(value) if style % 2 else (hex(value) if value >= 0 else str(value))
    if isinstance(value, float):
        return repr(value)
    if (style % 2 and PLAIN.fullmatch(value) and value not in RESERVED
            and not NUMBERISH.fullmatch(value) and ": " not in value and " #" not in value
            and "  " not in value):
        return value
    return json.dumps(value, ensure_ascii=False)


def literal(value: Any) -> bool:
    """A string kept as a literal block scalar: lines of text ending with one line break."""
    return (isinstance(value, str) and value.endswith("\n") and "\n" in value[:-1]
            and all(line and line[0] != " " and line == line.rstrip()
                    for line in value[:-1].split("\n")))


def flow(value: Any, style: int) -> str:
    if isinstance(value, list):
        return "[" + ", ".join(flow(v, style + i) for i, v in enumerate(value)) + "]"
    if isinstance(value, dict):
        return "{" + ", ".join(f"{k}: {flow(v, style + i)}"
                               for i, (k, v) in enumerate(value.items())) + "}"
    if isinstance(value, str):
        return json.dumps(value, ensure_ascii=False)
    text = scalar(value, style)
    return text or "null"


def block(value: Any, indent: int, style: int) -> list[str]:
    """Lines for a collection at `indent`."""
    pad = " " * indent
    lines: list[str] = []
    items = value.items() if isinstance(value, dict) else enumerate(value)
    for i, (key, item) in enumerate(items):
        lead = f"{pad}{key}:" if isinstance(value, dict) else f"{pad}-"
        if style % 5 == 0 and i:
            lines.append("")  # a blank line
        if style % 7 == 0:
            lines.append(f"{pad}# a comment")
        if isinstance(item, list | dict) and item and (style + i) % 3:
            lines.append(lead)
            lines.extend(block(item, indent + 2, style + i + 1))
        elif isinstance(item, list | dict):
            lines.append(f"{lead} {flow(item, style + i)}")
        elif literal(item):
            lines.append(f"{lead} |")
            lines.extend(f"{pad}  {line}" for line in item[:-1].split("\n"))
        else:
            text = scalar(item, style + i)
            lines.append(f"{lead} {text}" if text else lead)
    return lines


@given(data=st.dictionaries(KEYS, DATA, min_size=1, max_size=5), style=st.integers(0, 1000))
@example(data={"name": "pdf", "description": "Reads PDFs.\nAnd fills forms.\n"}, style=1)
def test_data_written_as_yaml_reads_back_as_that_data(data: dict[str, Any], style: int) -> None:
    text = "---\n" + "\n".join(block(data, 0, style)) + "\n---\n# Body\n"
    assert parse_front_matter(text) == data, text


FRAGMENTS = st.sampled_from([
    "a:", "a: b", "- ", "-", "  ", "    ", "\t", "[", "]", "{", "}", ",", ":", ": ", "#", " #",
    "'", "''", '"', '\\"', "\\", "\\x4", "\\u263A", "|", "|-", "|+2", ">", ">-", "&a", "*a",
    "!tag", "%YAML", "---", "...", "? ", "<<: ", "\n", "\r\n", "~", "null", "true", "1e400",
    "9" * 30, "0x" + "f" * 20, "-0", ".inf", ".nan", "0o17", "a b c", "k", "\u2028", "\ufeff",
])


@given(parts=st.lists(FRAGMENTS | st.text(max_size=4), max_size=40))
@example(parts=["a: ", "[" * 2000])
@example(parts=["a: ", "{b: " * 1500, "1"])
@example(parts=["a: ", "9" * 5000])
def test_any_text_is_read_as_json_data_or_refused_naming_a_line(parts: list[str]) -> None:
    source = "".join(parts)
    try:
        value = parse_yaml(source, first_line=2)
    except FrontMatterError as exc:
        assert 0 < exc.line <= source.count("\n") + 2, (exc, exc.line)
        return
    orjson.dumps(value)  # what a skill's entry is sent as


# -- what the properties found, each replayed by a plain test -----------------------------------

@pytest.mark.parametrize("source", [
    "a: " + "[" * 5000 + "]" * 5000,
    "a: " + "{b: " * 3000 + "1" + "}" * 3000,
    "\n".join(" " * i + "k:" for i in range(3000)),
    "\n".join(" " * i + "- " for i in range(0, 6000, 2)) + "x",
])
def test_collections_nested_past_the_limit_are_refused_not_a_recursion_error(source: str) -> None:
    with pytest.raises(FrontMatterError, match="nested deeper than 64 levels"):
        parse_yaml(source)


def test_collections_nested_to_the_limit_are_read() -> None:
    assert parse_yaml("a: " + "[" * 63 + "1" + "]" * 63) == {"a": eval("[" * 63 + "1" + "]" * 63)}


@pytest.mark.parametrize("source", ["a: " + "9" * 5000, "a: 99999999999999999999999",
                                    "a: -9223372036854775809", "a: 0x10000000000000000",
                                    "a: 1e400", "a: -1e400"])
def test_a_number_json_cannot_carry_is_refused_naming_its_line(source: str) -> None:
    with pytest.raises(FrontMatterError, match=r"line 1: .*(64-bit|too large)"):
        parse_yaml(source)


def test_numbers_at_the_edges_of_what_json_carries_are_read() -> None:
    assert parse_yaml("a: 18446744073709551615\nb: -9223372036854775808\nc: 1e308\n"
                      "d: 000000000000000000000000042") == {
        "a": 2**64 - 1, "b": -(2**63), "c": 1e308, "d": 42}


@pytest.mark.parametrize("source", ["- - a", "key: - a", "key: -"])
def test_a_sequence_begun_on_its_key_line_is_refused_rather_than_read_as_text(
    source: str,
) -> None:
    with pytest.raises(FrontMatterError, match="put each '- ' item on a line of its own"):
        parse_yaml(source)


@pytest.mark.parametrize("opening, closing", [('"x', '"'), ("'x", "'"), ("[x,", "z]")])
def test_a_value_over_a_hundred_thousand_lines_is_read_in_one_pass(
    opening: str, closing: str,
) -> None:
    """Read line by line, each line once: rereading the value so far at every line took
    minutes here (the suite's timeout ends a run that does)."""
    lines = "\n".join(["a: " + opening, *["  y,"] * 100_000, "  " + closing])
    assert len(str(parse_yaml(lines)["a"])) > 100_000


def test_a_block_scalar_as_a_sequence_item_is_read_as_its_text() -> None:
    assert parse_yaml("k:\n  - |\n    one\n    two\n  - >-\n    three\n    four\n  - x") == {
        "k": ["one\ntwo\n", "three four", "x"]}
