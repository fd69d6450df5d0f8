"""Opening a connection: the dual-era probe, and the fallback to an older era's handshake.

`Opener.open()` returns an `Opened` connection whose era is settled. With `era="auto"` it sends
`server/discover` and reads the answer with `read_probe`; an answer of an older era leads to
that era's handshake (the opener's `Fallback`) on the same connection, a server that died on the
probe is started once more for the handshake, a silent one is waited for `probe_timeout` once
and then given the handshake (without a cancellation, which an older server may not expect
before it), and a server that answered the probe as a modern one but with another version is
asked again with that version. A remembered era (`EraCache`) skips the probe for a known older
server, and is forgotten when it proves wrong.

The era settled, the opener picks the connection's `EraAdapter` (`ModernAdapter`, or the
fallback's) and hands it over in `Opened`: the client's adapter of the same era when it already
has one (a session reconnected after a 404 keeps its subscriptions), a new one otherwise.

Sending the probe, and reading an HTTP refusal in place of its answer, is
`mcpkit.client.probing`'s. The opener names no older era: the fallback is given to `opening()`,
which makes the `Opening` a `ClientCore` (`mcpkit.client.core`) is given; `Client` gives it the
initialize era's (`mcpkit.client.legacy.opening`). Without one, the opener speaks the modern era
only. May import `mcpkit.types`, `mcpkit.errors`, `mcpkit.protocol`.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import Any, Protocol

from mcpkit.client.adapter import EraAdapter
from mcpkit.client.core import ClientCore, Opened, Opening, result_of
from mcpkit.client.era import (
    MODERN_CLIENT_VERSIONS,
    PROCESS_ERAS,
    Era,
    NoCommonVersionError,
    ProbeOutcome,
    read_probe,
)
from mcpkit.client.modern import ModernAdapter, modern_meta
from mcpkit.client.options import ClientOptions
from mcpkit.client.probing import Probe, late_answer, send_probe
from mcpkit.client.transport import ClientTransport, Connector, NotificationHandler, http_status
from mcpkit.errors import ProtocolViolation, RPCError, TransportError
from mcpkit.store.era_cache import EraCache, Remembered
from mcpkit.types.era import MODERN
from mcpkit.types.methods import Method

__all__ = [
    "Fallback",
    "Opener",
    "opening",
    "set_notification_handler",
]

log = logging.getLogger("mcpkit.client")


class Fallback(Protocol):
    """An older era's opening handshake: what the probe falls back to for a server that is not
    modern, and what `ClientOptions.era` set to that era opens at once."""

    @property
    def era(self) -> Era: ...

    def adapter(self, core: ClientCore) -> EraAdapter:
        """A new adapter of the era for a connection of `core`."""
        ...

    async def handshake(self, opener: Opener, transport: ClientTransport) -> dict[str, Any]:
        """Send the era's opening request; its result, or the error it met raised."""
        ...

    async def opened(self, opener: Opener, transport: ClientTransport,
                     result: dict[str, Any]) -> Opened:
        """The era the handshake's `result` opens (its version checked, its follow-up sent)."""
        ...


def opening(fallback: Fallback | None) -> Opening:
    """The `Opening` of a `ClientCore`: an `Opener` for each connection, falling back to
    `fallback` (None: the modern era only)."""

    async def open_connection(
        core: ClientCore, connector: Connector | None, given: ClientTransport | None
    ) -> Opened:
        """A connection for `core`, through `connector` or the transport `given` (once)."""
        return await Opener(connector, given, core.options, core.capabilities, core.client_info,
                            core.next_id, core.unsolicited, core, fallback).open()

    return open_connection


def set_notification_handler(transport: ClientTransport, handler: NotificationHandler) -> None:
    setter: Callable[[Any], None] | None = getattr(transport, "set_notification_handler", None)
    if setter is not None:
        setter(handler)



class Opener:
    """Opens one connection for a Client and settles its era."""

    def __init__(
        self,
        connector: Connector | None,
        given: ClientTransport | None,
        options: ClientOptions,
        capabilities: dict[str, Any],
        client_info: dict[str, Any],
        next_id: Callable[[], int],
        on_notification: NotificationHandler,
        core: ClientCore,
        fallback: Fallback | None = None,
    ) -> None:
        self.connector = connector
        self.given = given
        self.options = options
        self.capabilities = capabilities
        self.client_info = client_info
        self.next_id = next_id
        self.on_notification = on_notification
        self.core = core
        self.fallback = fallback
        self.adapters: dict[Era, Callable[[ClientCore], EraAdapter]] = {MODERN: ModernAdapter}
        """Era -> the adapter a client's connection of that era goes through."""
        if fallback is not None:
            self.adapters[fallback.era] = fallback.adapter
        self.eras = EraCache(options.era_cache) if options.era_cache is not None else None

    def meta_for(self, version: str) -> dict[str, Any]:
        """The `_meta` every modern request of this client carries at `version`."""
        return modern_meta(version, self.capabilities, self.client_info, self.options)

    def adapter_for(self, era: Era) -> EraAdapter:
        """The connection's adapter of `era`: the client's own when it is of that era."""
        current = self.core.adapter
        return current if current.era == era else self.adapters[era](self.core)

    async def open(self) -> Opened:
        transport = await self._new_transport()
        try:
            mode = self.options.era
            if mode == MODERN:
                return self._modern(transport, self.options.protocol_version or _preferred())
            if mode == "auto":
                return await self._probe(transport)
            return await self._fall_back(transport)
        except BaseException:
            await transport.close()
            raise

    async def _new_transport(self) -> ClientTransport:
        if self.connector is not None:
            return await self.connector.connect()
        if self.given is None:
            raise TransportError("this Client was given a transport, which is closed now")
        transport, self.given = self.given, None
        return transport

    # -- remembering -----------------------------------------------------------------------

    def _remembered(self) -> Remembered | None:
        if self.connector is None:
            return None
        key = self.connector.key
        return (self.eras.get(key) if self.eras is not None else None) or PROCESS_ERAS.get(key)

    def _remember(self, era: Era, version: str | None) -> None:
        if self.connector is None:
            return
        PROCESS_ERAS.put(self.connector.key, era, version)
        if self.eras is not None:
            self.eras.put(self.connector.key, era, version)

    def _forget(self) -> None:
        if self.connector is not None:
            PROCESS_ERAS.forget(self.connector.key)
            if self.eras is not None:
                self.eras.forget(self.connector.key)

    # -- the probe -------------------------------------------------------------------------

    async def _restart(self, transport: ClientTransport, why: str) -> ClientTransport:
        """A new connection (for stdio, a new process), for the older era's handshake."""
        if self.connector is None:
            raise TransportError(f"{why}; give the Client a connector so it can reconnect")
        log.info("%s; connecting again for the handshake", why)
        await transport.close()
        return await self.connector.connect()

    async def _probe(self, transport: ClientTransport) -> Opened:
        """The dual-era probe (VER-9, VER-12)."""
        remembered = self._remembered()
        if (remembered is not None and self.fallback is not None
                and remembered.era == self.fallback.era):
            try:
                return await self._fall_back(transport)
            except (RPCError, TransportError, ProtocolViolation) as exc:
                self._forget()
                transport = await self._restart(transport, f"the handshake failed ({exc})")
        sent = self.options.protocol_version or _preferred()
        if remembered is not None and remembered.version in MODERN_CLIENT_VERSIONS:
            sent = self.options.protocol_version or remembered.version
        probe = await self._send_probe(transport, sent)
        if probe.died:
            transport = await self._restart(transport, "the server closed on server/discover")
            return await self._after_probe(transport, await self._handshake(transport), None)
        outcome = read_probe(probe.response, sent)
        if outcome.era == MODERN:
            return await self._modern_probed(transport, outcome)
        try:
            result = await self._handshake(transport)
        except (RPCError, TransportError) as exc:
            if probe.status is not None and http_status(exc) is not None:
                raise self._not_mcp(probe.status, http_status(exc)) from None
            # The probe's answer came after all, and says modern: a slow modern server (one
            # that pinned this connection to the modern era on the probe refuses initialize).
            late = await late_answer(probe, sent, self.options.probe_timeout)
            if late is not None:
                log.info("initialize failed (%s); server/discover was answered late, as by a "
                         "modern server", exc)
                return await self._modern_probed(transport, late)
            # A dual-era server that pinned this connection to the modern era on the probe,
            # or one that closed: a fresh connection takes the handshake.
            transport = await self._restart(transport, f"initialize after the probe failed ({exc})")
            return await self._after_probe(transport, await self._handshake(transport), None)
        return await self._after_probe(transport, result, probe)

    def _not_mcp(self, probe_status: int, status: int | None) -> TransportError:
        """Both eras' first requests met an HTTP error without a JSON-RPC message: whatever
        answers at this URL is no MCP server (a web page, another API, the wrong path)."""
        where = self.connector.key if self.connector is not None else "the URL"
        return TransportError(
            f"{where} is not an MCP endpoint: it answered server/discover with HTTP "
            f"{probe_status} and initialize with HTTP {status}, neither with a JSON-RPC "
            "message (is the path right? `mcpkit run --http` serves /mcp)")

    async def _after_probe(self, transport: ClientTransport, result: dict[str, Any],
                           probe: Probe | None) -> Opened:
        """The handshake answered: legacy, unless its version is a modern one (a modern server
        that answers initialize too, reached after a probe that was slow or lost): then the
        modern era goes on, from the probe's late answer or a probe at that version."""
        version = result.get("protocolVersion")
        if type(version) is not str or version not in MODERN_CLIENT_VERSIONS:
            older = self._older()
            opened = await older.opened(self, transport, result)
            self._remember(older.era, None)
            return opened
        log.info("initialize answered protocol version %s: the server is modern", version)
        late = await late_answer(probe, version, self.options.probe_timeout)
        if late is None:
            again = await self._send_probe(transport, version)
            late = read_probe(again.response, version) if again.response is not None else None
        if late is not None and late.era == MODERN:
            return await self._modern_probed(transport, late)
        self._remember(MODERN, version)
        opened = self._modern(transport, version)
        caps, info = result.get("capabilities"), result.get("serverInfo")
        opened.capabilities = caps if type(caps) is dict else {}
        opened.server_info = info if type(info) is dict else None
        return opened

    async def _modern_probed(self, transport: ClientTransport, outcome: ProbeOutcome) -> Opened:
        """The modern era, as a probe's `outcome` found it (asked again at the version it
        named, if it named another)."""
        assert outcome.version is not None
        discover = outcome.discover
        if outcome.retry:
            again = await self._send_probe(transport, outcome.version)
            if again.died or again.response is None:
                raise TransportError(
                    f"server/discover with version {outcome.version} got no answer"
                )
            discover = result_of(again.response, Method.DISCOVER)
        self._remember(MODERN, outcome.version)
        return self._modern(transport, outcome.version, discover)

    def _probe_message(self, version: str) -> dict[str, Any]:
        return {"jsonrpc": "2.0", "id": self.next_id(), "method": Method.DISCOVER,
                "params": {"_meta": self.meta_for(version)}}

    async def _send_probe(self, transport: ClientTransport, version: str) -> Probe:
        kind = self.connector.kind if self.connector is not None else None
        return await send_probe(transport, lambda: self._probe_message(version), kind,
                                self.options)

    def _modern(
        self, transport: ClientTransport, version: str, discover: dict[str, Any] | None = None
    ) -> Opened:
        set_notification_handler(transport, self.on_notification)
        opened = Opened(transport, MODERN, version, self.adapter_for(MODERN))
        if type(discover) is dict:
            opened.learn(discover)
        return opened

    def _older(self) -> Fallback:
        if self.fallback is None:
            raise NoCommonVersionError(
                "this client opens the modern era only (it was given no older era's handshake), "
                f"speaking {', '.join(MODERN_CLIENT_VERSIONS)}: the server is not modern, or "
                f"ClientOptions.era names another era ({self.options.era!r})")
        return self.fallback

    async def _handshake(self, transport: ClientTransport) -> dict[str, Any]:
        return await self._older().handshake(self, transport)

    async def _fall_back(self, transport: ClientTransport) -> Opened:
        """The older era's handshake, and the era its answer opens."""
        older = self._older()
        return await older.opened(self, transport, await older.handshake(self, transport))


def _preferred() -> str:
    return MODERN_CLIENT_VERSIONS[0]
