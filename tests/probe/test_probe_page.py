"""`mcpkit probe --html FILE`: one self-contained page, rendered in headless Chromium, whose
rendered DOM shows the era walk, one row per rule, a bar per tool and capability set, the
totals chart and the lint rows; the server's text is escaped, never markup."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from helpers.chromium import FLAGS, chromium
from probe_support import BROKEN, mcpkit

from mcpkit.probe.checks import CHECKS


def render(page: Path, profile: Path) -> str:
    done = subprocess.run([chromium(), *FLAGS, f"--user-data-dir={profile}",
                           "--dump-dom", page.as_uri()], capture_output=True, text=True,
                          timeout=90, stdin=subprocess.DEVNULL)
    assert done.returncode == 0, done.stderr[-2000:]
    return done.stdout


@pytest.fixture(scope="module")
def page(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict[str, object]]:
    folder = tmp_path_factory.mktemp("page")
    out = folder / "report.html"
    done = mcpkit("probe", f"{sys.executable} {BROKEN}", "--caps", "none,all", "--html", str(out),
                  "--json")
    assert done.returncode == 1, done.stderr
    return out, json.loads(done.stdout)


def test_the_page_renders_the_walk_the_rules_the_charts_and_the_lint(
    page: tuple[Path, dict[str, object]], tmp_path: Path
) -> None:
    import html.parser

    path, doc = page
    dom = render(path, tmp_path / "profile")

    class Seen(html.parser.HTMLParser):
        def __init__(self) -> None:
            super().__init__()
            self.tags: list[tuple[str, dict[str, str | None]]] = []
            self.text: list[str] = []

        def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
            self.tags.append((tag, dict(attrs)))

        def handle_data(self, data: str) -> None:
            self.text.append(data)

    seen = Seen()
    seen.feed(dom)
    tags = seen.tags
    text = "".join(seen.text)
    assert "server/discover (2026-07-28) → DiscoverResult: 2026-07-28" in text
    rules = [a["data-rule"] for t, a in tags if t == "tr" and a.get("class") == "check"]
    assert rules == list(CHECKS)
    failed = {a["data-rule"] for t, a in tags if t == "tr" and a.get("data-status") == "fail"}
    assert "stdout-purity" in failed and "caching-hints" in failed
    bars = {(a["data-tool"], a["data-capset"]): int(a["data-tokens"] or 0)
            for t, a in tags if t == "rect" and a.get("class") == "bar"}
    budgets = doc["budgets"]
    assert bars == {(tool["name"], b["capset"]): tool["tokens"]  # type: ignore[index]
                    for b in budgets for tool in b["tools"]}  # type: ignore[attr-defined, index]
    assert len(bars) == 12
    widths = {a["data-tool"]: float(a["width"] or 0) for t, a in tags
              if t == "rect" and a.get("class") == "bar" and a.get("data-capset") == "all"}
    assert max(widths, key=widths.__getitem__) == "long"  # the largest tool, the longest bar
    totals = [a for t, a in tags if t == "rect" and a.get("class") == "total"]
    assert {a["data-capset"] for a in totals} == {"none", "all"}
    lint = [a["data-rule"] for t, a in tags if t == "tr" and a.get("class") == "finding"]
    assert len(lint) == len(doc["lint"]) and "steering-text" in lint  # type: ignore[arg-type]
    # The steering finding quotes the description's <IMPORTANT>: shown as text, no element.
    assert "'<IMPORTANT>'" in text and "important" not in {t for t, _ in tags}
    # The server's title is markup, shown as text: no <b> element exists in the rendered DOM.
    assert "b" not in {t for t, _ in tags}
    assert "<b>broken</b>" in text


def test_the_page_is_self_contained(page: tuple[Path, dict[str, object]]) -> None:
    source = page[0].read_text()
    assert "<script" not in source and "http://" not in source.replace(
        'xmlns="http://www.w3.org/2000/svg"', "").replace("http://evil.example", "")
    assert "Content-Security-Policy" in source


def test_a_page_with_nothing_to_lint_says_so_instead_of_an_empty_table(tmp_path: Path) -> None:
    import html.parser

    out = tmp_path / "clean.html"
    quickstart = Path(__file__).resolve().parents[2] / "examples" / "quickstart" / "server.py"
    done = mcpkit("probe", f"{sys.executable} -m mcpkit run {quickstart}", "--html", str(out))
    assert done.returncode == 0, done.stderr
    dom = render(out, tmp_path / "profile")

    class Seen(html.parser.HTMLParser):
        def __init__(self) -> None:
            super().__init__()
            self.ids: set[tuple[str, str | None]] = set()
            self.text: list[str] = []

        def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
            self.ids.add((tag, dict(attrs).get("id")))

        def handle_data(self, data: str) -> None:
            self.text.append(data)

    seen = Seen()
    seen.feed(dom)
    assert ("table", "lint") not in seen.ids and ("p", "lint") in seen.ids
    text = "".join(seen.text)
    assert "Lint (0)" not in text and "LintNo findings." in text
