"""`LegacyAdapter`: what the 2025-11-25 era means for a client connection.

The opener picks it for a connection that took the `initialize` handshake, and installs its
`answer` as the transport's request handler before the handshake. From then on:

- a request carries only what it adds to `_meta` (`legacy_params`); the session negotiated the
  rest once, and `logging/setLevel` sets the session's log level on open (LEG-5);
- `discover()` is answered from what `initialize` said, in the shape of a DiscoverResult;
- the server's own requests (elicitation, sampling, roots, ping) are answered by the handlers
  the modern MRTR loop uses (LEG-7);
- an HTTP 404 means the session expired before serving the request: the client connects again
  and sends it once more (LEG-13);
- a -32042 is checked and raised as `URLElicitationRequiredError`, and with a URL handler the
  call is retried once after the user has seen each page (LEG-8);
- the session's unsolicited notifications feed its subscriptions (`LegacyListeners`) and
  its reports of URL elicitations done (`Completions`).

May import `mcpkit.types`, `mcpkit.errors` and the client's era-neutral modules.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping
from typing import Any

from mcpkit.client.adapter import Listener
from mcpkit.client.core import ClientCore
from mcpkit.client.inputs import InputRequest
from mcpkit.client.legacy.listeners import LegacyListeners
from mcpkit.client.legacy.shapes import legacy_discover, legacy_params
from mcpkit.client.legacy.url_required import raise_if_required, retry_after_url_elicitation
from mcpkit.client.transport import http_status
from mcpkit.errors import TransportError, URLElicitationRequiredError
from mcpkit.types.era import LEGACY, Era
from mcpkit.types.methods import Method

__all__ = ["LegacyAdapter"]


class LegacyAdapter:
    """The 2025-11-25 era of one Client, kept across the reconnects of its sessions."""

    era: Era = LEGACY

    def __init__(self, core: ClientCore) -> None:
        self.core = core
        self.listeners = LegacyListeners(core.send)

    async def opened(self, version: str, discover: dict[str, Any] | None) -> None:
        core = self.core
        level = core.options.log_level
        if level is not None and "logging" in (core.server_capabilities or {}):
            await core.send(Method.SET_LEVEL, {"level": level})  # LEG-5

    def params(
        self, fields: dict[str, Any], token: Any, level: str | None,
        meta: Mapping[str, Any] | None,
    ) -> dict[str, Any]:
        # `level` is a modern `_meta` key: a legacy session has one level, set on open.
        return legacy_params(fields, self.core.options.trace_context, token, meta)

    async def call(self, send: Callable[[], Awaitable[dict[str, Any]]], what: str) -> dict[str, Any]:
        try:
            return await send()
        except URLElicitationRequiredError as exc:
            core = self.core
            return await retry_after_url_elicitation(
                send, exc, what, core.inputs, core.server_info,
                core.options.url_elicitation_wait,
            )

    def expired(self, exc: TransportError) -> bool:
        return http_status(exc) == 404

    def check(self, response: dict[str, Any], method: str) -> None:
        if "error" in response:
            raise_if_required(response, method)  # -32042, legacy only (DEP-8)

    async def discover(self, fresh: bool) -> dict[str, Any]:
        core = self.core
        return legacy_discover(core.protocol_version, core.server_capabilities,
                               core.instructions, core.server_info)

    async def answer(self, method: str, params: dict[str, Any] | None) -> dict[str, Any]:
        """A legacy server's own request, answered by the same handlers (LEG-7)."""
        if method == Method.PING:
            return {}
        core = self.core
        request = InputRequest(method, params or {}, core.server_info, "a legacy server request")
        return await core.inputs.answer(request)

    async def unsolicited(self, message: dict[str, Any]) -> None:
        if message.get("method") == Method.ELICITATION_COMPLETE:
            await self.core.inputs.completions.receive(message)
            return
        self.listeners.offer(message)

    async def listen(self, sub: Listener) -> None:
        await self.listeners.start(sub, self.core.server_capabilities or {})

    async def unlisten(self, sub: Listener) -> None:
        await self.listeners.remove(sub)

    def close(self) -> None:
        self.listeners.clear()
