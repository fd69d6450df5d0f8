"""The human view of a probe report and of a surface diff: tables, a bar chart of tokens per
tool, colour when the output is a terminal.

Both read the JSON documents (`Report.to_json()`, `Diff.to_json()`), so the terminal shows
exactly what `--json` says. Most of a report is the server's own words (its name, tool names,
instructions, error messages, stray output), so every value is shown through
`mcpkit.cli.terminal.shown`, the CLI's one escaping, before any colour is added: no escape
sequence, control or bidi character of the server's reaches the terminal. Colour follows the usual conventions: only on a terminal, never
with `NO_COLOR` set, always with `FORCE_COLOR`; the text is the same without it, so nothing is
said by colour alone (a failed rule reads "fail").
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from typing import IO, Any, Final

from mcpkit.cli.terminal import shown
from mcpkit.probe.surface import short

__all__ = [
    "BAR_WIDTH",
    "colour_for",
    "render_diff",
    "render_report",
]

BAR_WIDTH: Final = 40
_CODES: Final = {"pass": "32", "fail": "31;1", "n/a": "2", "head": "1", "bar": "36",
                 "warn": "33", "dim": "2", "added": "32", "removed": "31", "changed": "33"}
_KIND_NAMES: Final = {"tools": "tools", "prompts": "prompts", "resources": "resources",
                      "resourceTemplates": "templates"}


def colour_for(stream: IO[str]) -> bool:
    if os.environ.get("NO_COLOR"):
        return False
    if os.environ.get("FORCE_COLOR"):
        return True
    isatty = getattr(stream, "isatty", None)
    return bool(isatty and isatty())


class _Paint:
    def __init__(self, on: bool) -> None:
        self.on = on

    def __call__(self, style: str, text: str) -> str:
        return f"\x1b[{_CODES[style]}m{text}\x1b[0m" if self.on else text


def _table(rows: list[list[str]], paint: _Paint, styles: list[str | None] | None = None
           ) -> list[str]:
    rows = [[shown(cell) for cell in row] for row in rows]
    widths = [max(len(r[i]) for r in rows) for i in range(len(rows[0]))]
    out = []
    for n, row in enumerate(rows):
        cells = [cell.ljust(widths[i]) if i < len(row) - 1 else cell
                 for i, cell in enumerate(row)]
        line = "  " + "  ".join(cells)
        style = "head" if n == 0 else (styles[n - 1] if styles else None)
        out.append(paint(style, line) if style else line)
    return out


def _identity(doc: Mapping[str, Any], paint: _Paint) -> list[str]:
    ident = doc["identity"]
    info = ident.get("serverInfo") or {}
    name = " ".join(str(p) for p in (info.get("title") or info.get("name"), info.get("version"))
                    if p) or "(the server gave no name)"
    head = f"{name} · {ident['era']} {ident['version']} · {doc['transport']}"
    lines = [paint("head", shown(head)),
             shown(f"  era walk      {ident['evidence']}"),
             shown(f"  versions      {', '.join(ident['supportedVersions']) or '(none named)'}"),
             shown(f"  capabilities  {', '.join(sorted(ident['capabilities'])) or '(none)'}"),
             shown(f"  extensions    {', '.join(sorted(ident['extensions'])) or '(none)'}")]
    instructions = ident.get("instructions")
    if instructions:
        first = instructions.strip().split("\n")[0] if instructions.strip() else ""
        more = " …" if len(first) > 90 or "\n" in instructions.strip() else ""
        lines.append(f"  instructions  {shown(first[:90])}{more}")
    return lines


def _checks(doc: Mapping[str, Any], paint: _Paint) -> list[str]:
    rows = [["rule", "status", "evidence"]]
    styles: list[str | None] = []
    for check in doc["checks"]:
        evidence = check["got"] if not check["sent"] else f"{check['sent']} → {check['got']}"
        rows.append([check["name"], check["status"], evidence])
        styles.append(check["status"])
    failed = sum(c["status"] == "fail" for c in doc["checks"])
    passed = sum(c["status"] == "pass" for c in doc["checks"])
    head = paint("head", f"Wire rules: {passed} pass, {failed} fail")
    return [head, *_table(rows, paint, styles)]


def _budget(doc: Mapping[str, Any], paint: _Paint) -> list[str]:
    budgets = doc["budgets"]
    if not budgets:
        return []
    rows = [["", *(b["capset"] for b in budgets)]]
    for kind, label in _KIND_NAMES.items():
        rows.append([label, *(f"{b['totals'][kind]} ({b['counts'][kind]})"
                                   for b in budgets)])
    rows.append(["instructions", *(str(b["totals"]["instructions"]) for b in budgets)])
    rows.append(["total", *(str(b["totals"]["all"]) for b in budgets)])
    last = budgets[-1]
    lines = [paint("head", f"Token budget ({doc['encoding']}; tokens (entries) per capability "
                           "set)"), *_table(rows, paint)]
    weight = " · ".join(f"{k} {v}" for k, v in last["weight"].items())
    lines.append(shown(f"  tools' weight ({last['capset']}): {weight}"))
    lines += [shown(f"  $defs {r['name']!r} repeated in {len(r['tools'])} tools: {r['wasted']} "
                    "tokens for the copies") for r in last["repeatedDefs"][:5]]
    lines += [paint("warn", shown(f"  ! {p}")) for b in budgets for p in b["problems"]]
    return lines


def _chart(doc: Mapping[str, Any], paint: _Paint) -> list[str]:
    if not doc["budgets"] or not doc["budgets"][-1]["tools"]:
        return []
    last = doc["budgets"][-1]
    tools = sorted(last["tools"], key=lambda t: -t["tokens"])
    top = max(t["tokens"] for t in tools) or 1
    names = {id(t): shown(t["name"]) for t in tools}
    width = max(map(len, names.values()))
    lines = [paint("head", shown(f"Tokens per tool ({last['capset']}; largest first)"))]
    for tool in tools:
        bar = "█" * max(1, round(BAR_WIDTH * tool["tokens"] / top))
        lines.append(f"  {names[id(tool)].ljust(width)}  {paint('bar', bar)} {tool['tokens']}")
    return lines


def _lint(doc: Mapping[str, Any], paint: _Paint) -> list[str]:
    findings = doc["lint"]
    if not findings:
        return [paint("head", "Lint: no findings")]
    rows = [["rule", "about", "finding", "why"]]
    rows += [[f["rule"], f["subject"], f["detail"], f["why"]] for f in findings]
    return [paint("head", f"Lint: {len(findings)} findings"),
            *_table(rows, paint, ["warn"] * len(findings))]


def render_report(doc: Mapping[str, Any], colour: bool = False) -> str:
    paint = _Paint(colour)
    sections = [_identity(doc, paint), _checks(doc, paint), _budget(doc, paint),
                _chart(doc, paint), _lint(doc, paint)]
    return "\n\n".join("\n".join(s) for s in sections if s) + "\n"


def render_diff(doc: Mapping[str, Any], colour: bool = False) -> str:
    paint = _Paint(colour)
    changes = doc["changes"]
    tokens = doc["tokens"]
    if not changes:
        return shown(f"no changes ({tokens['new']} tokens, {doc['encoding']})") + "\n"
    marks = {"added": "+", "removed": "-", "changed": "~"}
    counts = {what: sum(c["change"] == what for c in changes) for what in marks}
    lines = [paint("head", shown(f"{counts['added']} added, {counts['removed']} removed, "
                                 f"{counts['changed']} changed; tokens {tokens['old']} → "
                                 f"{tokens['new']} ({tokens['delta']:+d}, {doc['encoding']})"))]
    for change in changes:
        kind = _KIND_NAMES[change["kind"]].rstrip("s")
        delta = change["tokens"]["delta"]
        lines.append(paint(change["change"], shown(
            f"{marks[change['change']]} {kind} {change['key']} ({delta:+d} tokens)")))
        lines += [shown(f"    {item['path']}: {short(item['old'])} → {short(item['new'])}")
                  for item in change["fields"]]
    return "\n".join(lines) + "\n"
