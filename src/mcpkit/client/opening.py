"""Opening a connection: the dual-era probe, the legacy handshake, and their fallbacks.

`Opener.open()` returns an `Opened` connection whose era is settled. With `era="auto"` it sends
`server/discover` and reads the answer with `read_probe`; a legacy answer leads to `initialize`
on the same connection, a server that died on the probe is started once more for the handshake,
a silent one is waited for `probe_timeout` once and then initialized (without a cancellation,
which a legacy server may not expect before initialize), and a server that answered the probe
as a modern one but with another version is asked again with that version. A remembered era
(`EraCache`) skips the probe for a known legacy server, and is forgotten when it proves wrong.

The era settled, the opener picks the connection's `EraAdapter` (`ADAPTERS`, one per era) and
hands it over in `Opened`: the client's adapter of the same era when it already has one (a
legacy session reconnected after a 404 keeps its subscriptions), a new one otherwise. The
legacy adapter answers the server's requests from the start of the handshake.

`exchange` and `result_of` are the one request path, shared with `Client`.

The one module of the client that imports the legacy adapter (`mcpkit.client.legacy`). May
import `mcpkit.types`, `mcpkit.errors`, `mcpkit.protocol`.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, Final

from mcpkit.client.adapter import ClientCore, EraAdapter
from mcpkit.client.era import (
    MODERN_CLIENT_VERSIONS,
    PROCESS_ERAS,
    Era,
    NoCommonVersionError,
    read_probe,
)
from mcpkit.client.legacy.adapter import LegacyAdapter
from mcpkit.client.modern import ModernAdapter, modern_meta
from mcpkit.client.options import ClientOptions, RequestTimeoutError
from mcpkit.client.transport import ClientTransport, Connector, NotificationHandler, http_status
from mcpkit.errors import AuthError, ProtocolViolation, RPCError, TransportError
from mcpkit.protocol.codec import notification_message
from mcpkit.store.era_cache import EraCache, Remembered
from mcpkit.types.constants import LEGACY_VERSIONS, SERVER_INFO_KEY, Method
from mcpkit.types.era import LEGACY, MODERN

__all__ = ["ADAPTERS", "Opened", "Opener", "exchange", "result_of"]

log = logging.getLogger("mcpkit.client")
_AUTHORIZATION_STATUSES: Final = frozenset({401, 403})
"""Statuses the probe never reads as "a legacy server": they are about the credentials."""

ADAPTERS: Final[Mapping[Era, Callable[[ClientCore], EraAdapter]]] = {
    MODERN: ModernAdapter,
    LEGACY: LegacyAdapter,
}
"""Era -> the adapter a client's connection of that era goes through."""


@dataclass(slots=True)
class Opened:
    """A connection whose era is settled, and what the server said about itself."""

    transport: ClientTransport
    era: Era
    version: str
    adapter: EraAdapter
    """What the era means for this connection; the client holds it until the next one."""
    server_info: dict[str, Any] | None = None
    capabilities: dict[str, Any] | None = None
    instructions: str | None = None
    discover: dict[str, Any] | None = None

    def learn(self, discover: dict[str, Any]) -> None:
        """Take the server's identity and capabilities from a DiscoverResult."""
        caps = discover.get("capabilities")
        self.capabilities = caps if type(caps) is dict else {}
        instructions = discover.get("instructions")
        self.instructions = instructions if type(instructions) is str else None
        meta = discover.get("_meta")
        info = meta.get(SERVER_INFO_KEY) if type(meta) is dict else None
        if type(info) is dict:
            self.server_info = info
        self.discover = discover


async def exchange(
    transport: ClientTransport,
    message: dict[str, Any],
    on_notification: NotificationHandler | None,
    timeout: float | None,
) -> dict[str, Any]:
    """One request on the wire, bounded by `timeout` (cancelled on the wire when it expires)."""
    if timeout is None:
        return await transport.request(message, on_notification=on_notification)
    try:
        async with asyncio.timeout(timeout):
            return await transport.request(message, on_notification=on_notification)
    except TimeoutError:
        raise RequestTimeoutError(
            f"{message['method']}: no response within {timeout} s; the request was cancelled "
            "(raise the timeout for slow servers)"
        ) from None


def result_of(response: dict[str, Any], method: str) -> dict[str, Any]:
    """The result object of a response, or the error it carries raised as its class."""
    error = response.get("error")
    if error is not None:
        raise RPCError.from_wire(error if type(error) is dict else {"message": str(error)})
    result = response.get("result")
    if type(result) is not dict:
        raise ProtocolViolation(f"{method}: the response has no result object")
    return result


def set_notification_handler(transport: ClientTransport, handler: NotificationHandler) -> None:
    setter: Callable[[Any], None] | None = getattr(transport, "set_notification_handler", None)
    if setter is not None:
        setter(handler)


def _consume(task: asyncio.Future[Any]) -> None:
    if not task.cancelled():
        task.exception()


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
    ) -> None:
        self.connector = connector
        self.given = given
        self.options = options
        self.capabilities = capabilities
        self.client_info = client_info
        self.next_id = next_id
        self.on_notification = on_notification
        self.core = core
        self.eras = EraCache(options.era_cache) if options.era_cache is not None else None

    def meta_for(self, version: str) -> dict[str, Any]:
        """The `_meta` every modern request of this client carries at `version`."""
        return modern_meta(version, self.capabilities, self.client_info, self.options)

    def _adapter_for(self, era: Era) -> EraAdapter:
        current = self.core._adapter
        return current if current.era == era else ADAPTERS[era](self.core)

    async def open(self) -> Opened:
        transport = await self._new_transport()
        try:
            mode = self.options.era
            if mode == LEGACY:
                return await self._initialize(transport)
            if mode == MODERN:
                return self._modern(transport, self.options.protocol_version or _preferred())
            return await self._probe(transport)
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
        """A new connection (for stdio, a new process), for the legacy handshake."""
        if self.connector is None:
            raise TransportError(f"{why}; give the Client a connector so it can reconnect")
        log.info("%s; connecting again for the initialize handshake", why)
        await transport.close()
        return await self.connector.connect()

    async def _probe(self, transport: ClientTransport) -> Opened:
        """The dual-era probe (VER-9, VER-12)."""
        remembered = self._remembered()
        if remembered is not None and remembered.era == LEGACY:
            try:
                return await self._initialize(transport)
            except (RPCError, TransportError, ProtocolViolation) as exc:
                self._forget()
                transport = await self._restart(transport, f"initialize failed ({exc})")
        sent = self.options.protocol_version or _preferred()
        if remembered is not None and remembered.version in MODERN_CLIENT_VERSIONS:
            sent = self.options.protocol_version or remembered.version
        response, died = await self._send_probe(transport, sent)
        if died:
            transport = await self._restart(transport, "the server closed on server/discover")
            opened = await self._initialize(transport)
            self._remember(LEGACY, None)
            return opened
        outcome = read_probe(response, sent)
        if outcome.era == MODERN:
            assert outcome.version is not None
            discover = outcome.discover
            if outcome.retry:
                response, died = await self._send_probe(transport, outcome.version)
                if died or response is None:
                    raise TransportError(
                        f"server/discover with version {outcome.version} got no answer"
                    )
                discover = result_of(response, Method.DISCOVER)
            self._remember(MODERN, outcome.version)
            return self._modern(transport, outcome.version, discover)
        try:
            opened = await self._initialize(transport)
        except (RPCError, TransportError) as exc:
            # A dual-era server that pinned this connection to the modern era on the probe,
            # or one that closed: a fresh connection takes the handshake.
            transport = await self._restart(transport, f"initialize after the probe failed ({exc})")
            opened = await self._initialize(transport)
        self._remember(LEGACY, None)
        return opened

    async def _send_probe(
        self, transport: ClientTransport, version: str
    ) -> tuple[dict[str, Any] | None, bool]:
        """(the response, or None when silent; whether the server died on it)."""
        message = {
            "jsonrpc": "2.0", "id": self.next_id(), "method": Method.DISCOVER,
            "params": {"_meta": self.meta_for(version)},
        }
        task = asyncio.ensure_future(transport.request(message))
        done, _ = await asyncio.wait({task}, timeout=self.options.probe_timeout)
        while not done and _authorizing(transport):
            # A 401 started a sign-in (it may take the user minutes): the server answered,
            # so it is not a silent legacy one; wait for the authorized answer.
            done, _ = await asyncio.wait({task}, timeout=self.options.probe_timeout)
        if not done:
            # Slow or silent: do not probe again, and do not cancel on the wire (a legacy
            # server may dislike notifications before initialize); a late answer is ignored.
            task.add_done_callback(_consume)
            return None, False
        try:
            return task.result(), False
        except TransportError as exc:
            status = http_status(exc)
            if status in _AUTHORIZATION_STATUSES:
                # An authorization event, not a sign of a legacy server: falling back to
                # initialize would only meet the same refusal (or worse, send it unauthorized).
                raise AuthError(
                    f"server/discover: the server answered HTTP {status}: it requires "
                    "authorization; give the connector auth= (mcpkit.transports.oauth.OAuth) "
                    "or sign in with `mcpkit login URL`") from None
            if status is not None and 400 <= status < 500:
                return None, False  # HTTP 4xx without a modern error body (VER-12)
            if self.connector is not None and self.connector.kind == "stdio":
                return None, True
            raise

    def _modern(
        self, transport: ClientTransport, version: str, discover: dict[str, Any] | None = None
    ) -> Opened:
        set_notification_handler(transport, self.on_notification)
        opened = Opened(transport, MODERN, version, self._adapter_for(MODERN))
        if type(discover) is dict:
            opened.learn(discover)
        return opened

    async def _initialize(self, transport: ClientTransport) -> Opened:
        """The 2025-11-25 handshake (LEG-1)."""
        adapter = self._adapter_for(LEGACY)
        transport.set_request_handler(adapter.answer)
        set_notification_handler(transport, self.on_notification)
        params = {
            "protocolVersion": self.options.legacy_version,
            "capabilities": self.capabilities,
            "clientInfo": self.client_info,
        }
        message = {"jsonrpc": "2.0", "id": self.next_id(), "method": Method.INITIALIZE,
                   "params": params}
        response = await exchange(transport, message, None, self.options.timeout)
        result = result_of(response, Method.INITIALIZE)
        version = result.get("protocolVersion")
        if type(version) is not str or version not in LEGACY_VERSIONS:
            raise NoCommonVersionError(
                f"initialize: the server answered protocol version {version!r}; this client "
                f"speaks {', '.join(LEGACY_VERSIONS)} in the initialize era"
            )
        await transport.notify(notification_message(Method.INITIALIZED, None))
        caps = result.get("capabilities")
        info = result.get("serverInfo")
        instructions = result.get("instructions")
        return Opened(
            transport, LEGACY, version, adapter,
            server_info=info if type(info) is dict else None,
            capabilities=caps if type(caps) is dict else {},
            instructions=instructions if type(instructions) is str else None,
        )


def _authorizing(transport: ClientTransport) -> bool:
    """Whether the transport's authorization flow is answering a 401 or 403 now (an HTTP
    transport with `auth=`; others have no such flow)."""
    auth = getattr(transport, "auth", None)
    return bool(getattr(auth, "authorizing", 0))


def _preferred() -> str:
    return MODERN_CLIENT_VERSIONS[0]
