"""The front matter reader: the YAML a SKILL.md's front matter is written in, read exactly as
a YAML 1.2 parser reads it (the suite's own and JavaScript servers use one), and everything
outside the subset refused with its line rather than guessed at. No event loop."""

from __future__ import annotations

from typing import Any

import pytest

from mcpkit.ext.skills.frontmatter import (
    FrontMatterError,
    parse_front_matter,
    parse_yaml,
    split_front_matter,
)


@pytest.mark.parametrize(("source", "value"), [
    ("name: x", {"name": "x"}),
    ("a: yes\nb: on\nc: no", {"a": "yes", "b": "on", "c": "no"}),  # 1.2: not booleans
    ("a: true\nb: False\nc: ~\nd: null\ne:", {"a": True, "b": False, "c": None, "d": None,
                                               "e": None}),
    ("a: 12\nb: -3\nc: 0x1F\nd: 0o17\ne: 1.5\nf: 1e3", {"a": 12, "b": -3, "c": 31, "d": 15,
                                                      "e": 1.5, "f": 1000.0}),
    ("a: 2024-01-02\nb: 1.2.3", {"a": "2024-01-02", "b": "1.2.3"}),  # dates stay text
    ("a: 'it''s'\nb: \"tab\\there \\u00e9\"", {"a": "it's", "b": "tab\there \u00e9"}),
    ("a: x # comment\n# whole line\nb: 'k # not a comment'", {"a": "x",
                                                               "b": "k # not a comment"}),
    ("a: one\n  two\n\n  three", {"a": "one two\nthree"}),
    ("a: [x, 'y', 3, [z]]\nb: {k: v, n: 1}", {"a": ["x", "y", 3, ["z"]],
                                              "b": {"k": "v", "n": 1}}),
    ("a: [x,\n  y]", {"a": ["x", "y"]}),
    ("a:\n- x\n- k: 1\n  j: 2\n-\n  - deep", {"a": ["x", {"k": 1, "j": 2}, ["deep"]]}),
    ("a:\n  b:\n    c: 1\n  d: 2", {"a": {"b": {"c": 1}, "d": 2}}),
    ("a: |\n  one\n    two\n\nb: 1", {"a": "one\n  two\n", "b": 1}),
    ("a: |-\n  one\n", {"a": "one"}),
    ("a: |+\n  one\n\n", {"a": "one\n\n"}),
    ("a: >\n  one\n  two\n\n  three\n", {"a": "one two\nthree\n"}),
    ("a: >-\n  one\n    kept\n  two", {"a": "one\n  kept\ntwo"}),
    ("'quoted key': 1\n\"k2\": 2", {"quoted key": 1, "k2": 2}),
    ("url: https://example.com/a", {"url": "https://example.com/a"}),
])
def test_what_it_reads(source: str, value: Any) -> None:
    assert parse_yaml(source) == value


@pytest.mark.parametrize(("source", "line", "words"), [
    ("a: b: c", 1, "quote it"),
    ("a: 1\na: 2", 2, "appears twice"),
    ("a: &anchor 1", 1, "anchors"),
    ("a: *alias", 1, "aliases"),
    ("a: !!str 1", 1, "tags"),
    ("? complex\n: key", 1, "expected 'key: value'"),
    ("<<: {a: 1}", 1, "merge key"),
    ("a:\n\tb: 1", 2, "tab"),
    ("a: .inf", 1, "no JSON form"),
    ("a: .nan", 1, "no JSON form"),
    ("a: [1, 2", 1, "never closed"),
    ("a: 'open", 1, "never closed"),
    ("a: \"bad \\q\"", 1, "unknown escape"),
    ("a: 1\n  b: 2", 2, "quote it"),
    ("a: 1\n---\nb: 2", 2, "second YAML document"),
    ("- x\nb: 1", 2, "unexpected content"),
    ("a: {k v}", 1, "without ': value'"),
])
def test_what_it_refuses_names_the_line(source: str, line: int, words: str) -> None:
    with pytest.raises(FrontMatterError) as caught:
        parse_yaml(source)
    assert caught.value.line == line and words in str(caught.value)


def test_the_block_is_split_from_the_body_with_a_bom_and_crlf() -> None:
    text = "\ufeff---\r\nname: x\r\ndescription: y\r\n---\r\n# Body\r\n"
    assert split_front_matter(text) == ("name: x\r\ndescription: y", "# Body\r\n")
    assert parse_front_matter(text) == {"name": "x", "description": "y"}


def test_an_empty_or_missing_block_is_refused() -> None:
    with pytest.raises(FrontMatterError, match="does not begin with front matter"):
        parse_front_matter("# no front matter\n")
    with pytest.raises(FrontMatterError, match="not a mapping"):
        parse_front_matter("---\n- a\n---\n")
    assert parse_front_matter("---\nname: x\n---") == {"name": "x"}


def test_line_numbers_count_from_the_file_s_first_line() -> None:
    with pytest.raises(FrontMatterError) as caught:
        parse_front_matter("---\nname: x\ndescription: a: b\n---\n")
    assert caught.value.line == 3


@pytest.mark.parametrize("source", [
    "a: " + "[" * 64 + "]" * 64,  # flow: 65 levels with the mapping around it
    "".join("  " * i + "k:\n" for i in range(64)) + "  " * 64 + "k: 1",  # block: 65 mappings
    "a: " + "[" * 1000 + "]" * 1000,  # deeper than the reader's recursion could go
])
def test_nesting_past_64_levels_is_refused_not_a_recursion_error(source: str) -> None:
    # A client reads a server's SKILL.md with this reader, so its depth is the server's choice.
    with pytest.raises(FrontMatterError, match="deeper than 64 levels"):
        parse_yaml(source)


def test_nesting_of_64_levels_is_read() -> None:
    assert parse_yaml("a: " + "[" * 63 + "]" * 63) == {"a": eval("[" * 63 + "]" * 63)}
