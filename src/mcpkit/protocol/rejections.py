"""The error responses a connection sends before anything is dispatched, and the one function
that turns one of our exceptions into an error response message.

A rejection is a rule of the protocol, not of a transport: an id already in use by a request in
flight, an `initialize` on a connection whose era is pinned, a request no session can take. The
stream, the HTTP endpoint and the legacy sessions all build their refusals here, so each one is
worded once. Sans-IO: imports `mcpkit.types`, `mcpkit.errors` and `mcpkit.protocol` only.
"""

from __future__ import annotations

from typing import Any

from mcpkit.errors import InvalidRequestError, RPCError
from mcpkit.protocol.codec import RequestId, error_message
from mcpkit.types.constants import MODERN_VERSION, SUPPORTED_VERSIONS

__all__ = [
    "error_response",
    "id_in_use",
    "initialize_error",
]


def error_response(request_id: RequestId | None, exc: RPCError) -> dict[str, Any]:
    """The JSON-RPC error response that answers `request_id` with `exc`."""
    return error_message(request_id, exc.to_error())


def initialize_error(reason: str) -> InvalidRequestError:
    """Refusal of an initialize that names the versions served (VER-7)."""
    return InvalidRequestError(
        f"{reason}; this server supports protocol versions {', '.join(SUPPORTED_VERSIONS)} "
        f"({MODERN_VERSION} needs no initialize)",
        {"supported": list(SUPPORTED_VERSIONS)},
    )


def id_in_use(request_id: RequestId, where: str = "") -> InvalidRequestError:
    """A request whose id names one still in flight (`where` says in what, e.g. a session)."""
    return InvalidRequestError(
        f"Invalid request: id {request_id!r} is already in use by a request in flight{where}")
