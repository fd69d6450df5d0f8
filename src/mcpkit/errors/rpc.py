"""Errors that are, or came from, a JSON-RPC error object: each class fixes its code, and one
table turns a code back into its class.

Errors that a peer sent are rebuilt with `RPCError.from_wire`, so a caller catches the same class
whichever side raised it.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, ClassVar

from mcpkit.errors.base import MCPError

__all__ = [
    "HandleError",
    "HeaderMismatchError",
    "HeldCallGoneError",
    "InternalError",
    "InvalidParamsError",
    "InvalidRequestError",
    "MethodNotFoundError",
    "MissingRequiredClientCapabilityError",
    "ParseError",
    "RPCError",
    "RateLimitedError",
    "ResourceNotFoundError",
    "ServiceUnavailableError",
    "StateRejected",
    "StoreUnavailableError",
    "TooManyTasksError",
    "URLElicitationRequiredError",
    "UnsupportedProtocolVersionError",
    "error_class_for_code",
]


class RPCError(MCPError):
    """An error that is, or came from, a JSON-RPC error object.

    Subclasses fix `code`; `data` is whatever the error carries on the wire.
    """

    code: ClassVar[int] = -32603
    default_message: ClassVar[str] = "Internal error"

    def __init__(self, message: str | None = None, data: Any = None) -> None:
        self.message = message or self.default_message
        self.data = data
        super().__init__(self.message)

    def to_error(self) -> dict[str, Any]:
        """The JSON-RPC `error` member."""
        error: dict[str, Any] = {"code": self.code, "message": self.message}
        if self.data is not None:
            error["data"] = self.data
        return error

    @staticmethod
    def from_wire(error: Mapping[str, Any]) -> RPCError:
        """Rebuild the error a peer sent, as the class its code belongs to."""
        code = error.get("code")
        message = error.get("message")
        cls = error_class_for_code(code) if isinstance(code, int) else None
        data = error.get("data")
        if cls is InvalidParamsError and isinstance(data, Mapping) and "rateLimit" in data:
            cls = RateLimitedError  # a rate limit says how long to wait: the caller may
        if cls is None:
            exc = RPCError(str(message) if message is not None else None, error.get("data"))
            exc.code = code if isinstance(code, int) else -32603  # type: ignore[misc]
            return exc
        exc = cls.__new__(cls)
        RPCError.__init__(exc, str(message) if message is not None else None, error.get("data"))
        if isinstance(exc, ResourceNotFoundError):
            data = exc.data
            exc.uri = str(data.get("uri", "")) if isinstance(data, Mapping) else ""
        return exc

    def __repr__(self) -> str:
        return f"{type(self).__name__}(code={self.code}, message={self.message!r})"


class ParseError(RPCError):
    code = -32700
    default_message = "Parse error"


class InvalidRequestError(RPCError):
    code = -32600
    default_message = "Invalid request"


class MethodNotFoundError(RPCError):
    code = -32601
    default_message = "Method not found"


class InvalidParamsError(RPCError):
    code = -32602
    default_message = "Invalid params"


class ResourceNotFoundError(InvalidParamsError):
    """-32602 with `data.uri` in the modern era; the legacy adapter sends -32002."""

    LEGACY_CODE: ClassVar[int] = -32002

    def __init__(self, uri: str, message: str | None = None) -> None:
        super().__init__(message or f"Resource not found: {uri}", {"uri": uri})
        self.uri = uri


class StateRejected(InvalidParamsError):
    """A sealed token failed a check; nothing of it may be used.

    `reason` is one of: malformed, version, key, integrity, expired, principal, target,
    arguments, replayed.
    """

    def __init__(self, reason: str, message: str) -> None:
        super().__init__(message, {"reason": reason})
        self.reason = reason


class HandleError(StateRejected):
    """A handle failed a check (malformed, key, integrity, expired, principal, target)."""


class HeldCallGoneError(InvalidParamsError):
    """A retry's `requestState` is sound, but the upstream call it continues is no longer held
    by any proxy process (it waited past its hold time and was cancelled, or the process holding
    it stopped): the call must start again without the state."""


class TooManyTasksError(InvalidParamsError):
    """A principal asked for one task more than its share (`TaskOptions.max_*_per_principal`):
    -32602 naming the share, with `data.retryAfterS`, which HTTP answers 429 with Retry-After.
    The client's own load, not the server's failure: it may try again after that long."""

    def __init__(self, message: str, share: str, limit: int, retry_after_s: int) -> None:
        super().__init__(message, {"share": share, "limit": limit,
                                   "retryAfterS": retry_after_s})
        self.retry_after_s = retry_after_s


class RateLimitedError(InvalidParamsError):
    """A caller made more requests than its rate limit allows
    (`mcpkit.server.middleware.rate_limit`): -32602 with `data.rateLimit` (`limit`, `perS`)
    and `data.retryAfterS`, which HTTP answers 429 with Retry-After, as `TooManyTasksError`.
    The client's own load: it may try again after that long (`retry_after`)."""

    def __init__(self, message: str | None = None, data: Any = None, *,
                 limit: int | None = None, per_s: float | None = None,
                 retry_after_s: int | None = None) -> None:
        if retry_after_s is not None:
            data = {"rateLimit": {"limit": limit, "perS": per_s}, "retryAfterS": retry_after_s}
        super().__init__(message, data)

    @property
    def retry_after(self) -> float | None:
        """Seconds to wait before trying again, as the server said (None when it did not)."""
        data = self.data
        wait = data.get("retryAfterS") if isinstance(data, Mapping) else None
        if isinstance(wait, bool) or not isinstance(wait, int | float) or wait < 0:
            return None
        return float(wait)


class InternalError(RPCError):
    code = -32603
    default_message = "Internal error"


class StoreUnavailableError(InternalError):
    """A shared store or broker (PostgreSQL, Redis) cannot be reached or did not answer in time.

    Raised at once instead of waiting, so the request that needed it fails fast and the server
    stays up; the pool reconnects when the store returns, and nothing was recorded. It travels
    as -32603 with `data.unavailable` naming the engine, which HTTP answers 503, so a client
    knows to try again. The message names the engine, never its address or credentials."""

    default_message = "Service unavailable: a store the server needs cannot be reached"

    def __init__(self, message: str | None = None, data: Any = None, *,
                 store: str = "shared") -> None:
        super().__init__(message, {"unavailable": store} if data is None else data)
        self.store = store


class ServiceUnavailableError(InternalError):
    """The server cannot take this request now but another attempt may succeed: it is
    stopping (a drain), or it runs as many tasks as it may. -32603 with `data.unavailable`
    ("stopping", "busy") and `data.retryAfterS`; HTTP answers 503 with Retry-After, so a
    client or a load balancer tries again, elsewhere or later."""

    default_message = "Service unavailable: try again"

    def __init__(self, message: str, reason: str, retry_after_s: int) -> None:
        super().__init__(message, {"unavailable": reason, "retryAfterS": retry_after_s})
        self.retry_after_s = retry_after_s


class HeaderMismatchError(RPCError):
    code = -32020
    default_message = "Header mismatch"


class MissingRequiredClientCapabilityError(RPCError):
    code = -32021
    default_message = "Missing required client capability"

    def __init__(self, required: Mapping[str, Any], message: str | None = None) -> None:
        names = ", ".join(sorted(required)) or "(none)"
        super().__init__(
            message or f"This request needs the client capability {names}, which it did not declare",
            {"requiredCapabilities": dict(required)},
        )


class UnsupportedProtocolVersionError(RPCError):
    code = -32022
    default_message = "Unsupported protocol version"

    def __init__(self, requested: str, supported: list[str] | tuple[str, ...]) -> None:
        super().__init__(
            f"Unsupported protocol version {requested!r}; supported: {', '.join(supported)}",
            {"supported": list(supported), "requested": requested},
        )


class URLElicitationRequiredError(RPCError):
    """-32042, a 2025-11-25 server's answer: the request can succeed only after the user has
    completed the URL-mode elicitations in `elicitations` (each `{"mode": "url",
    "elicitationId", "url", "message"}`), and may then be retried.

    The client builds it from a legacy error only after checking every entry (the data comes
    from the server); the modern era has no such code (DEP-8), so it is not in the code table
    and a modern server's -32042 stays a plain `RPCError`.
    """

    code = -32042
    default_message = "URL elicitation required"

    def __init__(
        self,
        elicitations: Sequence[Mapping[str, str]],
        message: str | None = None,
        server_message: str | None = None,
    ) -> None:
        items = tuple(dict(e) for e in elicitations)
        super().__init__(message, {"elicitations": [dict(e) for e in items]})
        self.elicitations: tuple[dict[str, str], ...] = items
        """The checked elicitations, in the server's order."""
        self.server_message = server_message
        """The error message the server sent (untrusted text, for display only)."""

    @property
    def urls(self) -> list[str]:
        return [e["url"] for e in self.elicitations]


_BY_CODE: dict[int, type[RPCError]] = {
    cls.code: cls
    for cls in (
        ParseError,
        InvalidRequestError,
        MethodNotFoundError,
        InvalidParamsError,
        InternalError,
        HeaderMismatchError,
        MissingRequiredClientCapabilityError,
        UnsupportedProtocolVersionError,
    )
}
_BY_CODE[ResourceNotFoundError.LEGACY_CODE] = ResourceNotFoundError


def error_class_for_code(code: int) -> type[RPCError] | None:
    """The class for a JSON-RPC error code, or None for codes the spec does not define."""
    return _BY_CODE.get(code)
