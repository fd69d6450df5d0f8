"""`ClientCore`: one client's connection state, and the one request path every call takes.

`mcpkit.Client` is a facade over a `ClientCore`, as an HTTP client is over its transport: the
public methods build a call's params and read its result; everything a call shares with the
others is the core's. The call modules (`calls`, `paging`, `tool_calls`, `tasks`, `listen`) and
the era adapters are handed the core and use only its public members:

- `send(method, params, on_notification, timeout)`: one wire round trip, with the reconnect of
  a dead stdio server (STDIO-9) and of an expired legacy session (LEG-13); the result object,
  or the error raised as its class;
- `params(fields, token, level, meta)`: request params with the era's `_meta`;
- `cache` (`ResultCache`), `inputs` (`InputHandlers`, which answer what the server asks),
  `adapter` (what the connection's era means), `tools` (the usable tools last listed) and
  `outputs` (their compiled output schemas);
- what the server said about itself (`server_info`, `server_capabilities`, `instructions`).

Opening a connection is `mcpkit.client.opening`'s, given to the core as its `Opening`, and the
first adapter (the modern one, with an empty `_meta`, until the era is settled) is given too,
so this module sits below the opener and the adapters, which take the core by its type.

May import `mcpkit.types`, `mcpkit.errors`, `mcpkit.protocol`, `mcpkit.tracing` and the
client's own lower modules; transports arrive as objects, never by import.
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass
from typing import Any, cast

from mcpkit.client.adapter import EraAdapter
from mcpkit.client.cache import ResultCache
from mcpkit.client.inputs import InputHandlers
from mcpkit.client.options import (
    ClientOptions,
    LogHandler,
    RequestTimeoutError,
    call_notifications,
    declared_capabilities,
)
from mcpkit.client.results import Tool
from mcpkit.client.tools import OutputChecker
from mcpkit.client.transport import ClientTransport, Connector, NotificationHandler
from mcpkit.errors import NotJSONError, ProtocolViolation, RPCError, TransportError
from mcpkit.protocol.codec import EncodeError
from mcpkit.tracing.spans import active, client_exchange
from mcpkit.types.constants import SERVER_INFO_KEY
from mcpkit.types.era import Era
from mcpkit.types.methods import Method

__all__ = [
    "DEFAULT_TIMEOUT",
    "ClientCore",
    "Opened",
    "Opening",
    "exchange",
    "result_of",
]

DEFAULT_TIMEOUT: Any = object()
"""A call's `timeout=` when it gives none: `ClientOptions.timeout` applies."""


@dataclass(slots=True)
class Opened:
    """A connection whose era is settled, and what the server said about itself."""

    transport: ClientTransport
    era: Era
    version: str
    adapter: EraAdapter
    """What the era means for this connection; the core holds it until the next one."""
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


class ClientCore:
    """What every call of one client shares: the connection, its era, the request path."""

    def __init__(
        self,
        target: Connector | ClientTransport,
        options: ClientOptions,
        inputs: InputHandlers,
        client_info: dict[str, Any],
        on_log: LogHandler | None,
        first: Callable[[ClientCore], EraAdapter],
        opening: Opening,
    ) -> None:
        self.options = options
        self.connector: Connector | None = None
        """What the client connects (and reconnects) through; None for a given transport."""
        self._given: ClientTransport | None = None
        if hasattr(target, "connect") and hasattr(target, "key"):
            self.connector = cast(Connector, target)
        else:
            self._given = target
        self.inputs = inputs
        self.capabilities = declared_capabilities(inputs.capabilities(), options)
        """What every request declares (CAP-1), derived from the handlers."""
        self.client_info = client_info
        self.on_log = on_log
        # Logs a request with no handler of its own asked for (lists too carry the level).
        self.logs = call_notifications(None, on_log) if on_log else None
        self.cache = ResultCache()
        self.tools: dict[str, Tool] = {}
        """The usable tools from the last `tools/list`, by name."""
        self.outputs = OutputChecker()
        self._opening = opening
        self._transport: ClientTransport | None = None
        self._lock = asyncio.Lock()
        self._ids = itertools.count(1)
        self._tokens = itertools.count(1)
        self.adapter: EraAdapter = first(self)
        """What the connection's era means; `first`'s (modern) until connected."""
        self.era: Era | None = None
        self.protocol_version: str | None = None
        self.server_info: dict[str, Any] | None = None
        self.server_capabilities: dict[str, Any] | None = None
        self.instructions: str | None = None

    # -- the connection ----------------------------------------------------------------------

    @property
    def transport(self) -> ClientTransport | None:
        return self._transport

    def next_id(self) -> int:
        """The id of the next request this client sends."""
        return next(self._ids)

    def next_token(self) -> str:
        """A progress token no other request of this client carries."""
        return f"p{next(self._tokens)}"

    async def connect(self) -> None:
        """Open the transport and settle the era (done on first use when not called)."""
        if self._transport is not None:
            return
        async with self._lock:
            if self._transport is None:
                await self._open()

    async def _open(self) -> None:
        given, self._given = self._given, None
        opened = await self._opening(self, self.connector, given)
        self.era = opened.era
        self.protocol_version = opened.version
        self.server_info = opened.server_info
        self.server_capabilities = opened.capabilities
        self.instructions = opened.instructions
        self._transport = opened.transport
        self.adapter = opened.adapter
        await opened.adapter.opened(opened.version, opened.discover)

    async def close(self) -> None:
        """End every subscription and close the transport (for stdio: end the process)."""
        self.adapter.close()
        transport, self._transport = self._transport, None
        if transport is not None:
            await transport.close()

    async def _reconnect(self, dead: ClientTransport | None) -> None:
        if dead is not None:
            async with self._lock:
                if self._transport is dead:
                    self._transport = None
                    self.cache.clear()
                    with contextlib.suppress(Exception):
                        await dead.close()
        await self.connect()

    # -- the request path --------------------------------------------------------------------

    def params(
        self, fields: dict[str, Any], token: Any = None, level: str | None = None,
        meta: Mapping[str, Any] | None = None,
    ) -> dict[str, Any]:
        """Request params with the era's `_meta` (shared when nothing per-request is added)."""
        return self.adapter.params(fields, token, level, meta)

    async def send(
        self,
        method: str,
        params: dict[str, Any],
        on_notification: NotificationHandler | None = None,
        timeout: float | None = DEFAULT_TIMEOUT,
    ) -> dict[str, Any]:
        """One wire round trip; returns the result object or raises the error."""
        transport = self._transport
        if transport is None or not getattr(transport, "alive", True):
            # Not connected yet, or the server process died since the last call (STDIO-9).
            await self._reconnect(transport)
            transport = self._transport
            assert transport is not None
        message = {"jsonrpc": "2.0", "id": next(self._ids), "method": method, "params": params}
        send = exchange if (tracer := active()) is None else client_exchange(
            tracer, exchange, self.protocol_version, self.connector or transport)
        wait = self.options.timeout if timeout is DEFAULT_TIMEOUT else timeout
        on_notification = on_notification or self.logs
        try:
            response = await send(transport, message, on_notification, wait)
        except EncodeError as exc:
            # Every transport encodes before it writes, so nothing of it reached the server.
            raise NotJSONError(
                f"{method}: the request cannot be sent as JSON ({exc}); an integer beyond "
                "the 64-bit range goes as a string, a set as a list") from None
        except TransportError as exc:
            if not self.adapter.expired(exc) or self.connector is None:
                raise
            # LEG-13: the legacy session ended before serving this request; a new handshake,
            # then the request once more.
            await self._reconnect(transport)
            transport = self._transport
            assert transport is not None
            message = {**message, "id": next(self._ids)}
            response = await send(transport, message, on_notification, wait)
        self.adapter.check(response, method)
        return result_of(response, method)

    async def unsolicited(self, message: dict[str, Any]) -> None:
        """Notifications outside any request: a legacy session's changes and log messages."""
        self.cache.invalidate(message)
        if message.get("method") == Method.MESSAGE:
            if self.logs is not None:
                await self.logs(message)
            return
        await self.adapter.unsolicited(message)


Opening = Callable[[ClientCore, Connector | None, ClientTransport | None], Awaitable[Opened]]
"""Opens a connection for a core, from its connector or the transport it was given once
(`mcpkit.client.opening.open_connection`)."""
