"""One probe of one server, start to end, and its report as the documented JSON document.

`probe()` walks the era, lists the catalogue once per capability set, runs the wire checks that
apply to the era and the transport (the others are rows marked n/a, with the reason), counts
the budget and lints the definitions. Every connection it opens is closed before it returns,
whatever the server did. `Report.to_json()` is the `--json` output; its shape is
`FORMAT` and is described, with a JSON Schema, in docs/probe.md (the other renderers read the
same document, so what the terminal, the page and the JSON say cannot differ).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Final

from mcpkit.probe import checks as rules
from mcpkit.probe.budget import Budget, Counter, budget
from mcpkit.probe.catalogue import Catalogue, list_catalogue
from mcpkit.probe.channels import Tap, Target
from mcpkit.probe.checks import CHECKS, Check, not_applicable
from mcpkit.probe.lint import Finding, lint
from mcpkit.probe.walk import Identity, Session, describe, open_legacy, walk
from mcpkit.types.era import MODERN
from mcpkit.types.methods import Method

__all__ = [
    "FORMAT",
    "Report",
    "probe",
]

FORMAT: Final = "mcpkit-probe/1"


@dataclass(slots=True)
class Report:
    target: Target
    identity: Identity
    checks: list[Check]
    catalogues: list[Catalogue]
    budgets: list[Budget]
    findings: list[Finding]
    called: dict[str, Any] | None = field(default=None)

    @property
    def failed(self) -> list[Check]:
        return [c for c in self.checks if c.status == rules.FAIL]

    def to_json(self) -> dict[str, Any]:
        ident = self.identity
        return {
            "format": FORMAT,
            "target": self.target.shown,
            "transport": self.target.kind,
            "identity": {
                "era": ident.era, "version": ident.version,
                "supportedVersions": ident.supported, "capabilities": ident.capabilities,
                "extensions": ident.extensions, "serverInfo": ident.server_info,
                "instructions": ident.instructions,
                "steps": [{"sent": s.sent, "answer": s.answer} for s in ident.steps],
                "evidence": ident.evidence,
            },
            "checks": [{"name": c.name, "title": c.title, "source": CHECKS[c.name].source,
                        "status": c.status, "sent": c.sent, "got": c.got} for c in self.checks],
            "encoding": self.budgets[0].encoding if self.budgets else None,
            "budgets": [_budget_json(b, c) for b, c in zip(self.budgets, self.catalogues,
                                                           strict=True)],
            "lint": [{"rule": f.rule, "subject": f.subject, "detail": f.detail, "why": f.why}
                     for f in self.findings],
        }


def _budget_json(b: Budget, catalogue: Catalogue) -> dict[str, Any]:
    kinds = ("tools", "prompts", "resources", "resourceTemplates")
    keys = {"tools": "name", "prompts": "name", "resources": "uri",
            "resourceTemplates": "uriTemplate"}
    out: dict[str, Any] = {
        "capset": b.capset, "capabilities": catalogue.capabilities,
        "counts": {k: len(getattr(catalogue, k)) for k in kinds},
        "totals": {**{k: b.total(k) for k in kinds}, "instructions": b.instructions,
                   "all": b.total()},
        "weight": b.weight(),
        "top": [c.key for c in b.top()],
        "repeatedDefs": [{"name": r.name, "tools": list(r.tools), "tokens": r.tokens,
                          "wasted": r.wasted} for r in b.repeated],
        "problems": list(catalogue.problems),
    }
    for kind in kinds:
        rows = []
        for cost in b.of(kind):
            row: dict[str, Any] = {keys[kind]: cost.key, "tokens": cost.tokens}
            if kind == "tools":
                row["weight"] = cost.weight
            rows.append(row)
        out[kind] = rows
    return out


async def probe(target: Target, capsets: list[tuple[str, dict[str, Any]]], *,
                encoding: str = "o200k_base", timeout: float = 10.0,
                call: tuple[str, dict[str, Any]] | None = None,
                tap: Tap | None = None) -> Report:
    """Probe `target` (read-only unless `call` names a tool); raises `TransportError` when the
    server cannot be reached, `MissingExtraError` without the `probe` extra."""
    counter = Counter(encoding)  # before any process starts: a missing extra is one line
    session, identity = await walk(target, capsets[0][1], timeout, tap)
    extra: list[Session] = []
    try:
        catalogues = []
        for index, (name, caps) in enumerate(capsets):
            current = session
            if identity.era != MODERN and index > 0:
                opened, _ = await open_legacy(target, caps, timeout, tap)
                if opened is None:
                    catalogues.append(Catalogue(name, caps, problems=["initialize failed"]))
                    continue
                extra.append(opened)
                current = opened
            catalogues.append(await list_catalogue(current, name, caps, identity.capabilities))
        session.capabilities = capsets[0][1]
        checks = await _checks(session, identity, target, catalogues, timeout, tap, extra)
        called = await _call(session, call) if call is not None else None
        if call is not None:
            checks.append(_call_check(call[0], called))
        else:
            checks.append(not_applicable("call", "no --call given: the probe calls no tool"))
        stray = sum(s.channel.stray for s in (session, *extra))
        examples = [e for s in (session, *extra) for e in s.channel.stray_examples]
        if target.kind == "stdio":
            checks.append(rules.stdout_purity(stray, examples))
        else:
            checks.append(not_applicable("stdout-purity", "stdio only"))
    finally:
        for opened in (session, *extra):
            await opened.close()
    order = list(CHECKS)
    checks.sort(key=lambda c: order.index(c.name))
    budgets = [budget(c, identity.instructions, counter) for c in catalogues]
    return Report(target, identity, checks, catalogues, budgets, _lint_all(catalogues, identity),
                  called)


async def _checks(session: Session, identity: Identity, target: Target,
                  catalogues: list[Catalogue], timeout: float, tap: Tap | None,
                  extra: list[Session]) -> list[Check]:
    out: list[Check] = []
    http = target.kind == "http"
    for name, info in CHECKS.items():
        if name in ("call", "stdout-purity"):
            continue
        if identity.era not in info.eras:
            out.append(not_applicable(name, f"{'legacy' if identity.era == MODERN else 'modern'}"
                                      " era only"))
        elif target.kind not in info.transports:
            out.append(not_applicable(name, "stdio only" if http else "HTTP only"))
    modern = identity.era == MODERN
    if modern:
        out.append(await rules.missing_meta(session))
        out.append(await rules.unsupported_version(session))
        out.append(await rules.caching_hints(session, catalogues[0] if catalogues else None))
    out.append(await rules.unknown_method(session))
    if http:
        if modern:
            out.append(await rules.header_mismatch(session))
        out.append(await rules.evil_origin(session))
    if modern:
        out.append(rules.result_type(session))
        if http:
            out.append(rules.status_codes(session))
    else:
        out.append(rules.legacy_handshake(session, identity))
        out.append(await rules.legacy_ping(session))
        opened, exchange = await open_legacy(target, catalogues[0].capabilities if catalogues
                                             else {}, timeout, tap, version=rules.BAD_VERSION)
        if opened is not None:  # a failed handshake's channel is closed by open_legacy
            extra.append(opened)
        out.append(rules.legacy_version(exchange))
    return out


async def _call(session: Session, call: tuple[str, dict[str, Any]]) -> dict[str, Any]:
    name, arguments = call
    exchange = await session.call(Method.TOOLS_CALL, {"name": name, "arguments": arguments})
    return {"name": name, "result": exchange.result, "answer": describe(exchange),
            "sent": rules.shown(exchange.sent)}


def _call_check(name: str, called: dict[str, Any] | None) -> Check:
    result = (called or {}).get("result")
    ok = type(result) is dict and type(result.get("content")) is list
    sent = (called or {}).get("sent", name)
    got = (called or {}).get("answer", "")
    if ok and result is not None and result.get("isError") is True:
        got += " (isError: true)"
    return Check("call", rules.PASS if ok else rules.FAIL, sent, got or "no answer")


def _lint_all(catalogues: list[Catalogue], identity: Identity) -> list[Finding]:
    seen: set[Finding] = set()
    out: list[Finding] = []
    for catalogue in catalogues:
        for finding in lint(catalogue, identity.instructions):
            if finding not in seen:
                seen.add(finding)
                out.append(finding)
    return out
