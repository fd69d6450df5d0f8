"""The era walk: which era and version a server speaks, found by the spec's algorithm, with
what each step sent and what came back.

The decision is the client's own table (`mcpkit.client.era.read_probe`, VER-9 for stdio, VER-12
for HTTP), so the probe and the client cannot disagree about a server; what the probe adds is
the record. `server/discover` goes first with the modern version; a modern answer (a
DiscoverResult, or -32022/-32021/-32020) settles it, a retry with the version the server named
included; anything else leads to `initialize` on the same connection (a fresh one when the
server died on the probe or refused the handshake after it), then `notifications/initialized`.

`Session` is the connection once its era is settled: it wraps each request in the era's
envelope (the modern `_meta`; nothing for legacy, which negotiated once) and keeps every
exchange, so the wire checks can judge what the catalogue listing already received.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

from mcpkit._version import __version__
from mcpkit.client.era import read_probe
from mcpkit.errors import NoCommonVersionError, TransportError
from mcpkit.probe.channels import Channel, Exchange, HTTPChannel, Tap, Target, open_channel
from mcpkit.types.constants import (
    CLIENT_CAPABILITIES_KEY,
    CLIENT_INFO_KEY,
    LEGACY_VERSION,
    PROTOCOL_VERSION_KEY,
    SERVER_INFO_KEY,
)
from mcpkit.types.constants import MODERN_VERSION as PREFERRED
from mcpkit.types.era import LEGACY, MODERN
from mcpkit.types.methods import Method

__all__ = [
    "CLIENT_INFO",
    "Identity",
    "Session",
    "Step",
    "modern_meta",
    "walk",
]

CLIENT_INFO = {"name": "mcpkit-probe", "version": __version__}


def modern_meta(version: str, capabilities: dict[str, Any]) -> dict[str, Any]:
    return {PROTOCOL_VERSION_KEY: version, CLIENT_INFO_KEY: dict(CLIENT_INFO),
            CLIENT_CAPABILITIES_KEY: capabilities}


@dataclass(frozen=True, slots=True)
class Step:
    """One step of the walk: `server/discover (2026-07-28)` → `-32601 Method not found`."""

    sent: str
    answer: str

    @classmethod
    def of(cls, sent: str, exchange: Exchange) -> Step:
        return cls(sent, describe(exchange))


def describe(exchange: Exchange) -> str:
    """An answer in a few words: the error's code and message, the result's gist, or the note."""
    status = f"HTTP {exchange.status} " if exchange.status is not None else ""
    error = exchange.error
    if error is not None:
        message = str(error.get("message", ""))[:80]
        return f"{status}{error.get('code')} {message}".strip()
    result = exchange.result
    if result is None:
        return f"{status}{exchange.note or 'no JSON-RPC answer'}".strip()
    if "supportedVersions" in result:
        return "DiscoverResult: " + ", ".join(map(str, result.get("supportedVersions") or []))
    if "protocolVersion" in result:
        return str(result["protocolVersion"])
    return "a result"


@dataclass(slots=True)
class Identity:
    """What the server says about itself, and how its era was found."""

    era: str
    version: str
    steps: list[Step]
    supported: list[str] = field(default_factory=list)
    capabilities: dict[str, Any] = field(default_factory=dict)
    server_info: dict[str, Any] | None = None
    instructions: str | None = None

    @property
    def extensions(self) -> dict[str, Any]:
        found = self.capabilities.get("extensions")
        return found if type(found) is dict else {}

    @property
    def evidence(self) -> str:
        """The walk in one line: `server/discover → -32601 Method not found → initialize → …`."""
        return " → ".join(part for step in self.steps for part in (step.sent, step.answer))


class Session:
    """A connection whose era is settled; requests go out in the era's envelope."""

    def __init__(self, channel: Channel, era: str, version: str,
                 capabilities: dict[str, Any], timeout: float, first_id: int = 1) -> None:
        self.channel = channel
        self.era = era
        self.version = version
        self.capabilities = capabilities
        self.timeout = timeout
        self.exchanges: list[Exchange] = []
        self._ids = iter(range(first_id, 1 << 30))

    def next_id(self) -> int:
        return next(self._ids)

    def message(self, method: str, params: dict[str, Any] | None = None) -> dict[str, Any]:
        params = dict(params or {})
        if self.era == MODERN:
            params["_meta"] = modern_meta(self.version, self.capabilities)
        message: dict[str, Any] = {"jsonrpc": "2.0", "id": self.next_id(), "method": method}
        if params:
            message["params"] = params
        return message

    async def call(self, method: str, params: dict[str, Any] | None = None) -> Exchange:
        exchange = await self.channel.request(self.message(method, params), self.timeout)
        self.exchanges.append(exchange)
        return exchange

    async def send(self, message: dict[str, Any], *, deliberate: bool = True) -> Exchange:
        """A request built by a check (often malformed on purpose), kept with the others."""
        exchange = await self.channel.request(message, self.timeout, deliberate=deliberate)
        self.exchanges.append(exchange)
        return exchange

    def results(self) -> Iterator[tuple[str, dict[str, Any]]]:
        """(method, result) of every result this session received."""
        for exchange in self.exchanges:
            result = exchange.result
            if result is not None:
                yield str(exchange.sent.get("method")), result

    async def close(self) -> None:
        await self.channel.close()


async def _initialize(channel: Channel, capabilities: dict[str, Any], timeout: float,
                      request_id: int, version: str = LEGACY_VERSION) -> Exchange:
    message = {"jsonrpc": "2.0", "id": request_id, "method": Method.INITIALIZE,
               "params": {"protocolVersion": version, "capabilities": capabilities,
                          "clientInfo": dict(CLIENT_INFO)}}
    return await channel.request(message, timeout)


async def open_legacy(target: Target, capabilities: dict[str, Any], timeout: float,
                      tap: Tap | None = None, version: str = LEGACY_VERSION
                      ) -> tuple[Session | None, Exchange]:
    """A new connection opened by `initialize` alone: for a legacy server's catalogue per
    capability set (capabilities are negotiated once per session), and the handshake checks.
    The session is None when the handshake failed; the exchange says how."""
    channel = await open_channel(target, tap)
    exchange = await _initialize(channel, capabilities, timeout, 1, version)
    return await _settle_legacy(channel, exchange, capabilities, timeout), exchange


async def _settle_legacy(channel: Channel, exchange: Exchange, capabilities: dict[str, Any],
                         timeout: float) -> Session | None:
    result = exchange.result
    version = result.get("protocolVersion") if result is not None else None
    if type(version) is not str:
        await channel.close()
        return None
    if isinstance(channel, HTTPChannel):
        channel.legacy_version = version
    await channel.notify({"jsonrpc": "2.0", "method": Method.INITIALIZED})
    session = Session(channel, LEGACY, version, capabilities, timeout, first_id=2)
    session.exchanges.append(exchange)
    return session


async def walk(target: Target, capabilities: dict[str, Any], timeout: float,
               tap: Tap | None = None) -> tuple[Session, Identity]:
    """Open a connection and settle its era, recording each step; raises `TransportError`
    when the server cannot be reached or speaks no version this probe knows."""
    channel = await open_channel(target, tap)
    try:
        return await _walk(channel, target, capabilities, timeout, tap)
    except BaseException:
        await channel.close()
        raise


async def _walk(channel: Channel, target: Target, capabilities: dict[str, Any], timeout: float,
                tap: Tap | None) -> tuple[Session, Identity]:
    steps: list[Step] = []
    sent = PREFERRED
    probe = {"jsonrpc": "2.0", "id": 1, "method": Method.DISCOVER,
             "params": {"_meta": modern_meta(sent, capabilities)}}
    exchange = await channel.request(probe, timeout)
    steps.append(Step.of(f"{Method.DISCOVER} ({sent})", exchange))
    try:
        outcome = read_probe(exchange.response, sent)
    except NoCommonVersionError as exc:
        raise TransportError(f"{target.shown}: {exc}") from None
    if outcome.era == MODERN:
        assert outcome.version is not None
        discover = outcome.discover
        exchanges = [exchange]
        if outcome.retry:
            probe = {**probe, "id": 2,
                     "params": {"_meta": modern_meta(outcome.version, capabilities)}}
            exchange = await channel.request(probe, timeout)
            exchanges.append(exchange)
            steps.append(Step.of(f"{Method.DISCOVER} ({outcome.version})", exchange))
            discover = exchange.result
        if discover is None:
            raise TransportError(f"{target.shown}: server/discover with version "
                                 f"{outcome.version} got {describe(exchange)}")
        session = Session(channel, MODERN, outcome.version, capabilities, timeout, first_id=3)
        session.exchanges.extend(exchanges)
        return session, _identity_of_discover(session, steps, discover)
    if channel.ended:
        await channel.close()
        channel = await open_channel(target, tap)
        steps.append(Step("(restarted)", "the server ended on the probe"))
    reply = await _initialize(channel, capabilities, timeout, 2)
    steps.append(Step.of(f"{Method.INITIALIZE} ({LEGACY_VERSION})", reply))
    legacy = await _settle_legacy(channel, reply, capabilities, timeout)
    if legacy is None:
        raise TransportError(f"{target.shown}: neither era answered: "
                             + " → ".join(f"{s.sent} → {s.answer}" for s in steps))
    legacy.exchanges.insert(0, exchange)
    result = reply.result or {}
    caps = result.get("capabilities")
    info = result.get("serverInfo")
    instructions = result.get("instructions")
    identity = Identity(LEGACY, legacy.version, steps, supported=[legacy.version],
                        capabilities=caps if type(caps) is dict else {},
                        server_info=info if type(info) is dict else None,
                        instructions=instructions if type(instructions) is str else None)
    return legacy, identity


def _identity_of_discover(session: Session, steps: list[Step],
                          discover: dict[str, Any]) -> Identity:
    caps = discover.get("capabilities")
    meta = discover.get("_meta")
    info = meta.get(SERVER_INFO_KEY) if type(meta) is dict else None
    instructions = discover.get("instructions")
    supported = [v for v in discover.get("supportedVersions") or [] if type(v) is str]
    return Identity(MODERN, session.version, steps, supported=supported,
                    capabilities=caps if type(caps) is dict else {},
                    server_info=info if type(info) is dict else None,
                    instructions=instructions if type(instructions) is str else None)
