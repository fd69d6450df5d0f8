"""`ModernAdapter`: what the 2026-07-28 era means for a client connection.

Every request carries the per-request envelope (`modern_meta`: version, capabilities derived
from the handlers, client info, log level), built once when the era is settled and shared as
it is when nothing per-request is added. `server/discover` is a request like any other, its
answer cached with the rest. The server never sends requests of its own (input arrives in
`input_required` results, `mcpkit.client.inputs.run_rounds`), a listen stream is a request kept
open, and nothing arrives outside a request that the era gives a meaning to.

May import `mcpkit.types`, `mcpkit.errors` and the client's own lower modules, never
`mcpkit.client.legacy`.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping
from typing import Any

from mcpkit.client.adapter import Listener
from mcpkit.client.core import ClientCore
from mcpkit.client.options import ClientOptions, valid_trace_context
from mcpkit.errors import MethodNotFoundError, TransportError
from mcpkit.types.constants import (
    CLIENT_CAPABILITIES_KEY,
    CLIENT_INFO_KEY,
    LOG_LEVEL_KEY,
    PROGRESS_TOKEN_KEY,
    PROTOCOL_VERSION_KEY,
    SERVER_INFO_KEY,
)
from mcpkit.types.era import MODERN, Era
from mcpkit.types.methods import Method

__all__ = [
    "ModernAdapter",
    "modern_meta",
]


def modern_meta(
    version: str, capabilities: dict[str, Any], client_info: dict[str, Any],
    options: ClientOptions,
) -> dict[str, Any]:
    """The `_meta` every modern request of a client carries at `version`."""
    meta: dict[str, Any] = {
        PROTOCOL_VERSION_KEY: version,
        CLIENT_CAPABILITIES_KEY: capabilities,
    }
    if options.send_client_info:
        meta[CLIENT_INFO_KEY] = client_info
    if options.log_level is not None:
        meta[LOG_LEVEL_KEY] = options.log_level
    return meta


class ModernAdapter:
    """The 2026-07-28 era of one Client (also its state before the first connection)."""

    era: Era = MODERN

    def __init__(self, core: ClientCore) -> None:
        self.core = core
        self.meta: dict[str, Any] = {}
        """The envelope of every request, once the version is known."""

    async def opened(self, version: str, discover: dict[str, Any] | None) -> None:
        core = self.core
        self.meta = modern_meta(version, core.capabilities, core.client_info, core.options)
        if discover is not None and core.options.cache:
            core.cache.put(Method.DISCOVER, None, discover)

    def params(
        self, fields: dict[str, Any], token: Any, level: str | None,
        meta: Mapping[str, Any] | None,
    ) -> dict[str, Any]:
        trace = self.core.options.trace_context
        base = self.meta
        if token is None and level is None and trace is None and not meta:
            fields["_meta"] = base
            return fields
        own = dict(base)
        if trace is not None:
            own.update(valid_trace_context(trace()))
        if meta:
            own.update(meta)
        if token is not None:
            own[PROGRESS_TOKEN_KEY] = token
        if level is not None:
            own[LOG_LEVEL_KEY] = level
        fields["_meta"] = own
        return fields

    async def call(self, send: Callable[[], Awaitable[dict[str, Any]]], what: str) -> dict[str, Any]:
        return await send()

    def expired(self, exc: TransportError) -> bool:
        return False

    def check(self, response: dict[str, Any], method: str) -> None:
        return None

    async def discover(self, fresh: bool) -> dict[str, Any]:
        core = self.core
        if core.options.cache and not fresh:
            cached = core.cache.get(Method.DISCOVER)
            if cached is not None:
                return cached
        result = await core.send(Method.DISCOVER, core.params({}))
        caps, info = result.get("capabilities"), (result.get("_meta") or {}).get(SERVER_INFO_KEY)
        core.server_capabilities = caps if type(caps) is dict else {}
        core.server_info = info if type(info) is dict else core.server_info
        instructions = result.get("instructions")
        core.instructions = instructions if type(instructions) is str else None
        if core.options.cache:
            core.cache.put(Method.DISCOVER, None, result)
        return result

    async def answer(self, method: str, params: dict[str, Any] | None) -> dict[str, Any]:
        # Never installed: a modern connection has no request handler (input comes in results).
        raise MethodNotFoundError(f"Method not found: {method}", {"method": method})

    async def unsolicited(self, message: dict[str, Any]) -> None:
        return None

    async def listen(self, sub: Listener) -> None:
        await sub.open_stream()

    async def unlisten(self, sub: Listener) -> None:
        return None

    def close(self) -> None:
        return None
