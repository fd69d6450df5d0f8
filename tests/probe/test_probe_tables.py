"""The probe's tables are the documented ones, and its inputs are refused in one line each."""

from __future__ import annotations

import sys

import pytest
from probe_support import DOCS

from mcpkit.errors import MissingExtraError
from mcpkit.probe.budget import Counter
from mcpkit.probe.catalogue import CAPSETS, parse_caps
from mcpkit.probe.checks import CHECKS
from mcpkit.probe.lint import RULES


def _doc_rows(heading: str) -> dict[str, list[str]]:
    section = DOCS.read_text().split(heading, 1)[1].split("\n## ", 1)[0]
    rows = {}
    for line in section.splitlines():
        if line.startswith("| `"):
            cells = [c.strip() for c in line.strip("|").split(" | ")]
            rows[cells[0].strip("`")] = cells[1:]
    return rows


def test_every_lint_rule_is_documented_with_its_one_line_reason() -> None:
    rows = _doc_rows("## The lint rules")
    assert list(rows) == list(RULES)
    for name, rule in RULES.items():
        assert rows[name][-1] == rule.why, name


def test_every_wire_rule_and_capability_set_is_documented() -> None:
    assert list(_doc_rows("## The wire rules")) == list(CHECKS)
    assert list(_doc_rows("**Capability sets.**")) == list(CAPSETS)


def test_capability_sets_parse_from_names_and_json_and_refuse_the_rest() -> None:
    assert parse_caps("none, all,none") == [("none", {}), ("all", dict(CAPSETS["all"]))]
    assert parse_caps('{"sampling": {}, "roots": {}}') == [
        ("roots+sampling", {"sampling": {}, "roots": {}})]
    with pytest.raises(ValueError, match="does not parse"):
        parse_caps("{nope")
    with pytest.raises(ValueError, match="object of capability objects"):
        parse_caps('{"sampling": true}')


def test_counting_without_the_probe_extra_names_it(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "toktok", None)
    with pytest.raises(MissingExtraError) as caught:
        Counter()
    assert "pip install 'mcpkit[probe]'" in str(caught.value)
    with pytest.raises(ValueError, match="unknown encoding 'p50k'; use o200k_base or cl100k_base"):
        Counter("p50k")
