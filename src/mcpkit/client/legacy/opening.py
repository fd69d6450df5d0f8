"""`INITIALIZE_OPENING`: the 2025-11-25 handshake (LEG-1), the opener's fallback.

The opener (`mcpkit.client.opening`) knows one era of its own, the modern one, and falls back to
the `Fallback` it is given for a server that is not modern, or when `ClientOptions.era` pins the
older era. This is the one `Client` gives it: `initialize` sent with the client's capabilities
and `ClientOptions.legacy_version`, after the era's adapter is installed as the transport's
request handler (a legacy server may ask before it answers); the answer opens the era only at a
version of that era, and `notifications/initialized` follows it.

May import `mcpkit.types`, `mcpkit.errors` and the client's era-neutral modules.
"""

from __future__ import annotations

from typing import Any, Final

from mcpkit.client.adapter import EraAdapter
from mcpkit.client.core import ClientCore, Opened, exchange, result_of
from mcpkit.client.era import NoCommonVersionError
from mcpkit.client.legacy.adapter import LegacyAdapter
from mcpkit.client.opening import Fallback, Opener, set_notification_handler
from mcpkit.client.transport import ClientTransport
from mcpkit.protocol.codec import notification_message
from mcpkit.types.constants import LEGACY_VERSIONS
from mcpkit.types.era import LEGACY, Era
from mcpkit.types.methods import Method

__all__ = [
    "INITIALIZE_OPENING",
    "InitializeOpening",
]


class InitializeOpening:
    """The initialize era's opening, as the opener's `Fallback`."""

    era: Final[Era] = LEGACY

    def adapter(self, core: ClientCore) -> EraAdapter:
        return LegacyAdapter(core)

    async def handshake(self, opener: Opener, transport: ClientTransport) -> dict[str, Any]:
        transport.set_request_handler(opener.adapter_for(LEGACY).answer)
        set_notification_handler(transport, opener.on_notification)
        params = {
            "protocolVersion": opener.options.legacy_version,
            "capabilities": opener.capabilities,
            "clientInfo": opener.client_info,
        }
        message = {"jsonrpc": "2.0", "id": opener.next_id(), "method": Method.INITIALIZE,
                   "params": params}
        response = await exchange(transport, message, None, opener.options.timeout)
        return result_of(response, Method.INITIALIZE)

    async def opened(self, opener: Opener, transport: ClientTransport,
                     result: dict[str, Any]) -> Opened:
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
            transport, LEGACY, version, opener.adapter_for(LEGACY),
            server_info=info if type(info) is dict else None,
            capabilities=caps if type(caps) is dict else {},
            instructions=instructions if type(instructions) is str else None,
        )


INITIALIZE_OPENING: Final[Fallback] = InitializeOpening()
"""The fallback `Client` gives its opener."""
