"""`LegacyHTTPSession`: a 2025-11-25 session over Streamable HTTP, as the client holds it.

What the initialize era adds to the HTTP client's exchanges, kept in one object so the transport
(`mcpkit.transports.http_client.transport.HTTPClientTransport`) asks it instead of branching on the era:
the session id the server gave and the version `initialize` negotiated (`negotiated`), the
headers every later request carries (`headers`), that a response stream broken after an event
id is resumed (`resumes`), and that a 404 while a session id is held is the session's end
(`ends_on`, LEG-13; `forget` drops the id). The transport holds one only once an `initialize`
negotiated a version; until then it holds the modern counterpart,
`mcpkit.transports.http_client.era.ModernHTTP`, which answers the same questions.

Here, not in the transport's package, because it does no I/O: the GET that resumes, the DELETE
that ends the session and the session's GET stream stay with the transport. May import
`mcpkit.types` and `mcpkit.protocol`.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Final

from mcpkit.protocol.http import Status
from mcpkit.types.constants import LEGACY_VERSIONS, Header
from mcpkit.types.era import LEGACY, Era

__all__ = ["LegacyHTTPSession"]


class LegacyHTTPSession:
    """The session `initialize` opened: its id (None if the server gave none) and version."""

    era: Final[Era] = LEGACY
    answers_requests: Final = True
    """A 2025-11-25 server may send requests; their answers are POSTed in the session."""

    def __init__(self, session_id: str | None, version: str) -> None:
        self.session_id = session_id
        self.legacy_version = version

    @classmethod
    def negotiated(cls, session_id: str | None,
                   result: Mapping[str, Any]) -> LegacyHTTPSession | None:
        """The session an `initialize` result opened, or None when it names no legacy version
        (a modern server that answers `initialize` with its own version opens no session:
        the client goes on in the modern era)."""
        version = result.get("protocolVersion")
        return cls(session_id, version) if version in LEGACY_VERSIONS else None

    def headers(self, headers: dict[str, str], message: Mapping[str, Any] | None) -> dict[str, str]:
        """`headers` with the session id and the negotiated version, the same on every request
        (the era mirrors nothing of the body)."""
        if self.session_id is not None:
            headers[Header.SESSION_ID] = self.session_id
        headers[Header.PROTOCOL_VERSION] = self.legacy_version
        return headers

    def resumes(self, last_event_id: str | None) -> bool:
        """A stream that broke before its response is resumed from its last event id."""
        return last_event_id is not None

    def ends_on(self, status: int) -> bool:
        """A 404 to a request carrying the session id: the session ended or expired."""
        return status == Status.NOT_FOUND and self.session_id is not None

    def forget(self) -> None:
        """The session ended: later requests go without its id (the next initialize too)."""
        self.session_id = None
