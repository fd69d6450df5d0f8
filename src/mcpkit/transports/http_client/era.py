"""The HTTP client transport's era seam: `HTTPEra`, and its 2026-07-28 side, `ModernHTTP`.

`HTTPClientTransport` holds one `HTTPEra` and asks it what a request carries and what a broken
stream or a 404 means, so it never compares eras. `ModernHTTP` is held from the start: every
message is its own POST carrying the mirrored headers (`MCP-Protocol-Version`, `Mcp-Method`,
`Mcp-Name`, and `Mcp-Param-*` from the `x-mcp-header` tables the transport learned), there is no
session, and a stream that breaks is not resumed (2026-07-28 responses carry no event ids). Once
an `initialize` negotiates a version, the transport holds the 2025-11-25 side instead,
`mcpkit.client.legacy.http_session.LegacyHTTPSession`. No I/O here.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Final, Protocol

from mcpkit.errors import TransportError
from mcpkit.protocol.http import client_headers
from mcpkit.types.era import MODERN, Era
from mcpkit.types.methods import Method

__all__ = [
    "HTTPEra",
    "ModernHTTP",
]


class HTTPEra(Protocol):
    """What the transport asks of the era its exchanges are in."""

    @property
    def era(self) -> Era: ...

    @property
    def session_id(self) -> str | None:
        """The legacy session's `Mcp-Session-Id`; None without a session."""

    @property
    def legacy_version(self) -> str | None:
        """The version a legacy `initialize` negotiated; None in the modern era."""

    @property
    def answers_requests(self) -> bool:
        """Whether a request the server sends is answered (POSTed back)."""

    def headers(self, headers: dict[str, str],
                message: Mapping[str, Any] | None) -> dict[str, str]:
        """`headers` completed for `message` (None: a GET or DELETE carrying no message)."""

    def resumes(self, last_event_id: str | None) -> bool:
        """Whether a stream that broke before its response is read on from `last_event_id`."""

    def ends_on(self, status: int) -> bool:
        """Whether a response with `status` is the end of the session."""

    def forget(self) -> None:
        """The session ended."""


class ModernHTTP:
    """The 2026-07-28 era: headers mirrored from each message, no session, nothing resumed.
    `tool_params` is the transport's table of `x-mcp-header` tables by tool name, shared."""

    era: Final[Era] = MODERN
    session_id: Final[None] = None
    legacy_version: Final[None] = None
    answers_requests: Final = False
    """A 2026-07-28 server sends no requests (MRTR-1), and a stateless endpoint has nowhere to
    take an answer: one is dropped unanswered, and a flood of them costs no POSTs."""

    def __init__(self, tool_params: Mapping[str, dict[str, tuple[str, ...]]]) -> None:
        self._tool_params = tool_params

    def headers(self, headers: dict[str, str], message: Mapping[str, Any] | None) -> dict[str, str]:
        if message is None or message.get("method") == Method.INITIALIZE:
            return headers
        params = message.get("params")
        name = params.get("name") if isinstance(params, Mapping) else None
        table = self._tool_params.get(name) if isinstance(name, str) else None
        try:
            headers.update(client_headers(message, table))
        except (TypeError, ValueError) as exc:
            raise TransportError(f"{message.get('method')} {name or ''}: {exc}") from None
        return headers

    def resumes(self, last_event_id: str | None) -> bool:
        return False

    def ends_on(self, status: int) -> bool:
        return False

    def forget(self) -> None:
        pass
