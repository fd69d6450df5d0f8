"""`--html FILE`: the probe report as one self-contained page (no script, no fetch, no font).

The page holds the identity and the era walk, the wire-rule table, two inline SVG charts (the
tokens of each tool under each capability set, grouped; and each set's total by kind) and the
lint table. Every text from the server is escaped (`html.escape`), and the page carries a
Content-Security-Policy that forbids scripts and remote loads, so a hostile description cannot
run or fetch anything in a browser. Bars carry `data-` attributes (tool, capability set,
tokens) and a `<title>`, which is what a reader hovering over them, and the tests, see.
"""

from __future__ import annotations

from collections.abc import Mapping
from html import escape
from typing import Any, Final

__all__ = [
    "PALETTE",
    "render_page",
]

PALETTE: Final = ("#3b6fb6", "#e07b39", "#3c9a5f", "#a05bb5", "#c44e52", "#8c8c3a")
_ROW: Final = 18
_LABEL: Final = 220
_PLOT: Final = 520

_STYLE: Final = """
body{font:14px/1.45 system-ui,sans-serif;margin:2em auto;max-width:1100px;color:#222}
h1{font-size:1.5em;margin-bottom:.2em}h2{margin-top:1.6em;border-bottom:1px solid #ddd}
table{border-collapse:collapse;width:100%;margin:.5em 0}
th,td{text-align:left;padding:.25em .6em;border-bottom:1px solid #eee;vertical-align:top}
td.evidence{font-family:ui-monospace,monospace;font-size:12px;word-break:break-all}
.pass{color:#1f7a3a;font-weight:600}.fail{color:#b3261e;font-weight:700}.na{color:#888}
.walk{font-family:ui-monospace,monospace;background:#f6f6f6;padding:.4em .6em}
.legend span{display:inline-block;margin-right:1em}
.legend i{display:inline-block;width:.9em;height:.9em;margin-right:.3em;vertical-align:-1px}
svg text{font:12px system-ui,sans-serif;fill:#333}
"""


def _e(value: Any) -> str:
    return escape(str(value), quote=True)


def _identity(doc: Mapping[str, Any]) -> str:
    ident = doc["identity"]
    info = ident.get("serverInfo") or {}
    name = info.get("title") or info.get("name") or "(the server gave no name)"
    rows = [("Era", f"{ident['era']} {ident['version']}"), ("Transport", doc["transport"]),
            ("Target", doc["target"]), ("Server", f"{name} {info.get('version', '')}".strip()),
            ("Versions", ", ".join(ident["supportedVersions"]) or "(none named)"),
            ("Capabilities", ", ".join(sorted(ident["capabilities"])) or "(none)"),
            ("Extensions", ", ".join(sorted(ident["extensions"])) or "(none)"),
            ("Instructions", ident.get("instructions") or "(none)")]
    body = "".join(f'<tr><th>{_e(k)}</th><td id="identity-{_e(k.lower())}">{_e(v)}</td></tr>'
                   for k, v in rows)
    return (f"<h1>{_e(name)}</h1><p class=\"walk\" id=\"era-walk\">{_e(ident['evidence'])}</p>"
            f"<table id=\"identity\">{body}</table>")


def _checks(doc: Mapping[str, Any]) -> str:
    rows = []
    for check in doc["checks"]:
        css = "na" if check["status"] == "n/a" else check["status"]
        evidence = check["got"] if not check["sent"] else f"{check['sent']} → {check['got']}"
        rows.append(f'<tr class="check" data-rule="{_e(check["name"])}" '
                    f'data-status="{_e(check["status"])}"><td>{_e(check["name"])}</td>'
                    f'<td>{_e(check["title"])}</td><td class="{css}">{_e(check["status"])}</td>'
                    f'<td class="evidence">{_e(evidence)}</td></tr>')
    return ("<h2>Wire rules</h2><table id=\"checks\"><tr><th>Rule</th><th>Checks</th>"
            "<th>Status</th><th>Evidence</th></tr>" + "".join(rows) + "</table>")


def _legend(budgets: list[Mapping[str, Any]]) -> str:
    return '<p class="legend">' + "".join(
        f'<span><i style="background:{PALETTE[n % len(PALETTE)]}"></i>{_e(b["capset"])}</span>'
        for n, b in enumerate(budgets)) + "</p>"


def _tool_chart(budgets: list[Mapping[str, Any]]) -> str:
    names: list[str] = []
    for b in budgets:
        names += [t["name"] for t in b["tools"] if t["name"] not in names]
    tokens = {(b["capset"], t["name"]): t["tokens"] for b in budgets for t in b["tools"]}
    top = max(tokens.values(), default=0) or 1
    group = _ROW * len(budgets) + 8
    height = group * len(names) + 10
    parts = [f'<svg id="tool-chart" xmlns="http://www.w3.org/2000/svg" width="{_LABEL + _PLOT + 60}"'
             f' height="{height}" role="img" aria-label="tokens per tool">']
    for row, name in enumerate(names):
        y0 = row * group + 4
        parts.append(f'<text x="{_LABEL - 6}" y="{y0 + group / 2}" text-anchor="end" '
                     f'dominant-baseline="middle">{_e(name)}</text>')
        for n, b in enumerate(budgets):
            count = tokens.get((b["capset"], name))
            if count is None:
                continue
            width = max(1.0, _PLOT * count / top)
            y = y0 + n * _ROW
            parts.append(
                f'<rect class="bar" data-tool="{_e(name)}" data-capset="{_e(b["capset"])}" '
                f'data-tokens="{count}" x="{_LABEL}" y="{y}" width="{width:.1f}" '
                f'height="{_ROW - 3}" fill="{PALETTE[n % len(PALETTE)]}">'
                f'<title>{_e(name)} ({_e(b["capset"])}): {count} tokens</title></rect>'
                f'<text x="{_LABEL + width + 4:.1f}" y="{y + _ROW / 2}" '
                f'dominant-baseline="middle">{count}</text>')
    parts.append("</svg>")
    return "".join(parts)


def _total_chart(budgets: list[Mapping[str, Any]]) -> str:
    kinds = ("tools", "prompts", "resources", "resourceTemplates", "instructions")
    top = max((b["totals"]["all"] for b in budgets), default=0) or 1
    parts = [f'<svg id="capset-chart" xmlns="http://www.w3.org/2000/svg" '
             f'width="{_LABEL + _PLOT + 60}" height="{len(budgets) * 26 + 10}" role="img" '
             'aria-label="tokens per capability set">']
    for row, b in enumerate(budgets):
        y = row * 26 + 4
        parts.append(f'<text x="{_LABEL - 6}" y="{y + 10}" text-anchor="end" '
                     f'dominant-baseline="middle">{_e(b["capset"])}</text>')
        x = float(_LABEL)
        for n, kind in enumerate(kinds):
            count = b["totals"][kind]
            if not count:
                continue
            width = _PLOT * count / top
            parts.append(f'<rect class="total" data-capset="{_e(b["capset"])}" '
                         f'data-kind="{kind}" data-tokens="{count}" x="{x:.1f}" y="{y}" '
                         f'width="{width:.1f}" height="20" fill="{PALETTE[n % len(PALETTE)]}">'
                         f'<title>{_e(b["capset"])}: {kind} {count} tokens</title></rect>')
            x += width
        parts.append(f'<text x="{x + 4:.1f}" y="{y + 10}" dominant-baseline="middle">'
                     f'{b["totals"]["all"]}</text>')
    parts.append("</svg>")
    legend = '<p class="legend">' + "".join(
        f'<span><i style="background:{PALETTE[n % len(PALETTE)]}"></i>{k}</span>'
        for n, k in enumerate(kinds)) + "</p>"
    return "".join(parts) + legend


def _budget(doc: Mapping[str, Any]) -> str:
    budgets = doc["budgets"]
    if not budgets:
        return "<h2>Token budget</h2><p>Nothing was listed.</p>"
    head = "".join(f"<th>{_e(b['capset'])}</th>" for b in budgets)
    rows = ""
    for kind in ("tools", "prompts", "resources", "resourceTemplates"):
        cells = "".join(f"<td>{b['totals'][kind]} ({b['counts'][kind]})</td>" for b in budgets)
        rows += f'<tr class="budget" data-kind="{kind}"><th>{kind}</th>{cells}</tr>'
    rows += ('<tr class="budget" data-kind="instructions"><th>instructions</th>'
             + "".join(f"<td>{b['totals']['instructions']}</td>" for b in budgets) + "</tr>")
    rows += ('<tr class="budget" data-kind="all"><th>total</th>'
             + "".join(f"<td>{b['totals']['all']}</td>" for b in budgets) + "</tr>")
    return (f"<h2>Token budget ({_e(doc['encoding'])})</h2><table id=\"budget\"><tr><th></th>"
            f"{head}</tr>{rows}</table><h3>Per capability set</h3>{_total_chart(budgets)}"
            f"<h3>Per tool</h3>{_legend(budgets)}{_tool_chart(budgets)}")


def _lint(doc: Mapping[str, Any]) -> str:
    if not doc["lint"]:  # a line, as on the terminal, not a table of nothing
        return '<h2>Lint</h2><p id="lint" class="clean">No findings.</p>'
    rows = "".join(f'<tr class="finding" data-rule="{_e(f["rule"])}"><td>{_e(f["rule"])}</td>'
                   f'<td>{_e(f["subject"])}</td><td>{_e(f["detail"])}</td><td>{_e(f["why"])}'
                   "</td></tr>" for f in doc["lint"])
    return (f"<h2>Lint ({len(doc['lint'])})</h2><table id=\"lint\"><tr><th>Rule</th>"
            f"<th>About</th><th>Finding</th><th>Why</th></tr>{rows}</table>")


def render_page(doc: Mapping[str, Any]) -> str:
    """The whole page for a report document (`Report.to_json()`)."""
    ident = doc["identity"]
    title = (ident.get("serverInfo") or {}).get("name") or doc["target"]
    return ("<!DOCTYPE html><html lang=\"en\"><head><meta charset=\"utf-8\">"
            "<meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; "
            "style-src 'unsafe-inline'; img-src data:\">"
            f"<title>mcpkit probe: {_e(title)}</title><style>{_STYLE}</style></head><body>"
            f"{_identity(doc)}{_checks(doc)}{_budget(doc)}{_lint(doc)}"
            "<p class=\"na\">Made by mcpkit probe.</p></body></html>\n")
