"""The wire-rule quick check: one row per rule, each pass, fail or n/a, with its evidence.

`CHECKS` is the one table of rules (name -> what it checks, and the requirement it comes
from). Each rule is judged by a function that sends what it needs over the probed `Session`
(often a request a client would never send: no `_meta`, a version from 1900) or reads what
the session already received (every result, every status), and returns a `Check` naming what
was sent and what came back. Nothing here calls a tool; `resources/read` is sent for the first
listed resource only, since reading is the one way to see its caching hints.

The HTTP rules (mirrored headers, Origin, the status table) post through `HTTPChannel`
directly, so the headers are exactly the ones written in the evidence.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from types import MappingProxyType
from typing import Any, Final

import orjson

from mcpkit.probe.catalogue import Catalogue
from mcpkit.probe.channels import Exchange, HTTPChannel
from mcpkit.probe.walk import Identity, Session, describe, modern_meta
from mcpkit.protocol.http import STATUS_BY_CODE
from mcpkit.types.constants import LEGACY_VERSIONS, PROTOCOL_VERSION_KEY, Header
from mcpkit.types.era import LEGACY, MODERN
from mcpkit.types.methods import Method

__all__ = [
    "CACHEABLE",
    "CHECKS",
    "FAIL",
    "NA",
    "PASS",
    "Check",
    "RuleInfo",
    "shown",
]

PASS: Final = "pass"
FAIL: Final = "fail"
NA: Final = "n/a"

UNKNOWN_METHOD: Final = "mcpkit/probe-unknown-method"
BAD_VERSION: Final = "1900-01-01"
EVIL_ORIGIN: Final = "http://evil.example"
CACHEABLE: Final = frozenset({Method.DISCOVER, Method.TOOLS_LIST, Method.PROMPTS_LIST,
                              Method.RESOURCES_LIST, Method.RESOURCES_TEMPLATES_LIST,
                              Method.RESOURCES_READ})
"""Results that carry caching hints (CACHE-1)."""


@dataclass(frozen=True, slots=True)
class RuleInfo:
    title: str
    source: str
    eras: frozenset[str]
    transports: frozenset[str]


_BOTH = frozenset({MODERN, LEGACY})
_ANY = frozenset({"stdio", "http"})
CHECKS: Final[Mapping[str, RuleInfo]] = MappingProxyType({
    "missing-meta": RuleInfo("a request without _meta is -32602", "META, VER-1",
                             frozenset({MODERN}), _ANY),
    "unsupported-version": RuleInfo("an unsupported version is -32022 with the supported list",
                                    "VER-2", frozenset({MODERN}), _ANY),
    "result-type": RuleInfo("every result carries resultType", "MSG-5",
                            frozenset({MODERN}), _ANY),
    "caching-hints": RuleInfo("list and read results carry ttlMs and cacheScope", "CACHE-1",
                              frozenset({MODERN}), _ANY),
    "unknown-method": RuleInfo("an unknown method is -32601", "JSON-RPC, HTTP-11", _BOTH, _ANY),
    "header-mismatch": RuleInfo("a mirrored header that disagrees with the body is 400/-32020",
                                "HTTP-18", frozenset({MODERN}), frozenset({"http"})),
    "evil-origin": RuleInfo("a request from a foreign Origin is 403", "HTTP-2",
                            _BOTH, frozenset({"http"})),
    "status-codes": RuleInfo("each answer's HTTP status is the one its error code maps to",
                             "HTTP-11, ERR", frozenset({MODERN}), frozenset({"http"})),
    "stdout-purity": RuleInfo("every stdout line is a JSON-RPC message", "STDIO-3",
                              _BOTH, frozenset({"stdio"})),
    "legacy-handshake": RuleInfo("initialize echoes 2025-11-25 with serverInfo and capabilities",
                                 "LEG-1, LEG-2", frozenset({LEGACY}), _ANY),
    "legacy-version": RuleInfo("initialize with an unknown version is answered with a supported "
                               "one", "LEG-2", frozenset({LEGACY}), _ANY),
    "legacy-ping": RuleInfo("ping is answered with an empty result", "LEG-4",
                            frozenset({LEGACY}), _ANY),
    "call": RuleInfo("the tool named by --call answers a CallToolResult", "TOOL",
                     _BOTH, _ANY),
})
"""Rule name -> what it checks, where the rule comes from, where it applies."""


@dataclass(frozen=True, slots=True)
class Check:
    name: str
    status: str
    sent: str
    got: str

    @property
    def title(self) -> str:
        return CHECKS[self.name].title


def shown(message: Mapping[str, Any] | None, limit: int = 160) -> str:
    """A message as compact JSON, cut to `limit` characters."""
    text = orjson.dumps(message).decode() if message else "(nothing)"
    return text if len(text) <= limit else text[:limit - 1] + "…"


def _headers(headers: Mapping[str, str]) -> str:
    keep = [f"{k}: {v}" for k, v in headers.items() if k.startswith("mcp-") or k == "origin"]
    return "; ".join(keep)


def evidence(exchange: Exchange) -> tuple[str, str]:
    sent = shown(exchange.sent)
    if exchange.headers:
        sent += f" [{_headers(exchange.headers)}]"
    return sent, describe(exchange)


def judge_error(name: str, exchange: Exchange, code: int, status: int | None) -> Check:
    """Pass when the answer is error `code` (with HTTP `status` on HTTP)."""
    sent, got = evidence(exchange)
    ok = exchange.code == code and (exchange.status is None or status is None
                                    or exchange.status == status)
    return Check(name, PASS if ok else FAIL, sent, got)


async def missing_meta(session: Session) -> Check:
    message = {"jsonrpc": "2.0", "id": session.next_id(), "method": Method.DISCOVER,
               "params": {}}
    exchange = await _send(session, message, {Header.PROTOCOL_VERSION: session.version,
                                              Header.METHOD: Method.DISCOVER})
    return judge_error("missing-meta", exchange, -32602, 400)


async def unsupported_version(session: Session) -> Check:
    message = {"jsonrpc": "2.0", "id": session.next_id(), "method": Method.DISCOVER,
               "params": {"_meta": modern_meta(BAD_VERSION, session.capabilities)}}
    exchange = await _send(session, message, {Header.PROTOCOL_VERSION: BAD_VERSION,
                                              Header.METHOD: Method.DISCOVER})
    check = judge_error("unsupported-version", exchange, -32022, 400)
    data = exchange.error.get("data") if exchange.error is not None else None
    supported = data.get("supported") if type(data) is dict else None
    if check.status == PASS and not (type(supported) is list and supported
                                     and session.version in supported):
        return Check(check.name, FAIL, check.sent,
                     f"{check.got}, but data.supported is {shown(supported) if supported else 'missing'}")
    if check.status == PASS:
        return Check(check.name, PASS, check.sent, "-32022 with data.supported: "
                     + ", ".join(map(str, supported or [])))
    return check


async def unknown_method(session: Session) -> Check:
    message = session.message(UNKNOWN_METHOD)
    exchange = await session.send(message)
    return judge_error("unknown-method", exchange, -32601,
                       404 if session.era == MODERN else None)


def result_type(session: Session) -> Check:
    results = list(session.results())
    missing = sorted({m for m, r in results if type(r.get("resultType")) is not str})
    sent = f"{len(results)} results received during the probe"
    if missing:
        return Check("result-type", FAIL, sent, "no resultType on " + ", ".join(missing))
    return Check("result-type", PASS, sent, "every one carries resultType")


async def caching_hints(session: Session, catalogue: Catalogue | None) -> Check:
    if catalogue is not None and catalogue.resources:
        uri = catalogue.resources[0].get("uri")
        if type(uri) is str:
            await session.call(Method.RESOURCES_READ, {"uri": uri})
    cacheable = [(m, r) for m, r in session.results()
                 if m in CACHEABLE and r.get("resultType", "complete") == "complete"]
    bad = sorted({m for m, r in cacheable
                  if not (type(r.get("ttlMs")) is int and r["ttlMs"] >= 0
                          and r.get("cacheScope") in ("public", "private"))})
    sent = f"{len(cacheable)} list, discover and read results"
    if bad:
        return Check("caching-hints", FAIL, sent, "ttlMs or cacheScope missing or invalid on "
                     + ", ".join(bad))
    return Check("caching-hints", PASS, sent, "each carries ttlMs >= 0 and cacheScope")


async def header_mismatch(session: Session) -> Check:
    channel = session.channel
    assert isinstance(channel, HTTPChannel)
    verdicts = []
    evidence_sent = []
    for header_value in (Method.PROMPTS_LIST, None):
        message = session.message(Method.TOOLS_LIST)
        headers = channel.headers_for(message)
        if header_value is None:
            headers.pop(Header.METHOD, None)
        else:
            headers[Header.METHOD] = header_value
        exchange = await _raw(session, message, headers)
        ok = exchange.status == 400 and exchange.code == -32020
        verdicts.append((ok, describe(exchange)))
        evidence_sent.append(f"tools/list with Mcp-Method: {header_value or '(absent)'}")
    return Check("header-mismatch", PASS if all(ok for ok, _ in verdicts) else FAIL,
                 "; ".join(evidence_sent), "; ".join(got for _, got in verdicts))


async def evil_origin(session: Session) -> Check:
    channel = session.channel
    assert isinstance(channel, HTTPChannel)
    if session.era == MODERN:
        message = session.message(Method.DISCOVER)
    else:
        message = {"jsonrpc": "2.0", "id": session.next_id(), "method": Method.PING}
    headers = {**channel.headers_for(message), "origin": EVIL_ORIGIN}
    exchange = await _raw(session, message, headers, keep=False)
    sent, _ = evidence(exchange)
    got = f"HTTP {exchange.status}" if exchange.status is not None else exchange.note
    return Check("evil-origin", PASS if exchange.status == 403 else FAIL, sent, got)


def status_codes(session: Session) -> Check:
    wrong = []
    seen = 0
    for exchange in session.exchanges:
        if exchange.status is None or exchange.response is None:
            continue
        seen += 1
        code = exchange.code
        expected = STATUS_BY_CODE.get(code, 200) if code is not None else 200
        if exchange.status != expected:
            wrong.append(f"{exchange.sent.get('method')}: {code if code is not None else 'result'}"
                         f" came with {exchange.status}, not {expected}")
    sent = f"{seen} answers with a JSON-RPC body"
    if wrong:
        return Check("status-codes", FAIL, sent, "; ".join(wrong[:4]))
    return Check("status-codes", PASS, sent, "each status matches its error code "
                 "(-32601 → 404, -32602/-32020/-32022 → 400, results → 200)")


def stdout_purity(stray: int, examples: list[str]) -> Check:
    sent = "every line the server wrote on stdout"
    if stray:
        return Check("stdout-purity", FAIL, sent, f"{stray} lines are no JSON-RPC message, e.g. "
                     + " | ".join(repr(e) for e in examples[:3]))
    return Check("stdout-purity", PASS, sent, "only JSON-RPC messages")


def legacy_handshake(session: Session, identity: Identity) -> Check:
    first = next((e for e in session.exchanges if e.sent.get("method") == Method.INITIALIZE), None)
    sent = shown(first.sent) if first is not None else "initialize"
    result = first.result if first is not None else None
    problems = []
    if result is None:
        problems.append("no InitializeResult")
    else:
        if result.get("protocolVersion") != LEGACY_VERSIONS[0]:
            problems.append(f"protocolVersion {result.get('protocolVersion')!r}, not the "
                            f"{LEGACY_VERSIONS[0]} asked for")
        info = result.get("serverInfo")
        if not (type(info) is dict and type(info.get("name")) is str
                and type(info.get("version")) is str):
            problems.append("serverInfo lacks a name and version")
        if type(result.get("capabilities")) is not dict:
            problems.append("capabilities is not an object")
    if problems:
        return Check("legacy-handshake", FAIL, sent, "; ".join(problems))
    return Check("legacy-handshake", PASS, sent, f"{identity.version}, serverInfo "
                 f"{(identity.server_info or {}).get('name')}, capabilities "
                 + ", ".join(sorted(identity.capabilities)))


def legacy_version(exchange: Exchange) -> Check:
    sent = shown(exchange.sent)
    result = exchange.result
    version = result.get("protocolVersion") if result is not None else None
    if version in LEGACY_VERSIONS:
        return Check("legacy-version", PASS, sent, f"answered {version}")
    data = exchange.error.get("data") if exchange.error is not None else None
    if type(data) is dict and type(data.get("supported")) is list:
        return Check("legacy-version", PASS, sent, describe(exchange) + "; supported: "
                     + ", ".join(map(str, data["supported"])))
    return Check("legacy-version", FAIL, sent, describe(exchange))


async def legacy_ping(session: Session) -> Check:
    exchange = await session.send(session.message(Method.PING), deliberate=False)
    ok = exchange.result is not None and not (set(exchange.result) - {"_meta"})
    return Check("legacy-ping", PASS if ok else FAIL, shown(exchange.sent),
                 "{}" if ok else describe(exchange))


async def _send(session: Session, message: dict[str, Any], headers: dict[str, str]) -> Exchange:
    channel = session.channel
    if isinstance(channel, HTTPChannel):
        return await _raw(session, message,
                          {**channel.headers_for(message), **headers})
    return await session.send(message)


async def _raw(session: Session, message: dict[str, Any], headers: dict[str, str],
               keep: bool = True) -> Exchange:
    """POST with exactly `headers`; `keep=False` leaves the answer out of the status table
    (a refused Origin is the transport's own 403, not an error code's status)."""
    channel = session.channel
    assert isinstance(channel, HTTPChannel)
    exchange = await channel.request(message, session.timeout, deliberate=True, headers=headers)
    if keep:
        session.exchanges.append(exchange)
    return exchange


def not_applicable(name: str, why: str) -> Check:
    return Check(name, NA, "", why)


def version_of(message: Mapping[str, Any]) -> str | None:
    params = message.get("params")
    meta = params.get("_meta") if type(params) is dict else None
    version = meta.get(PROTOCOL_VERSION_KEY) if type(meta) is dict else None
    return version if type(version) is str else None
