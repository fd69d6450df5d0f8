"""The whole exception tree of mcpkit, and the one table from JSON-RPC error code to class.

```
MCPError                                   anything mcpkit raises on purpose
├── RPCError                               travels as a JSON-RPC error object (has .code)
│   ├── ParseError                  -32700 the bytes are not JSON
│   ├── InvalidRequestError         -32600 JSON, but not a JSON-RPC request
│   ├── MethodNotFoundError         -32601 unknown, removed or unadvertised method
│   ├── InvalidParamsError          -32602 params (or `_meta`) do not fit the method
│   │   ├── ResourceNotFoundError   -32602 (legacy wire: -32002) with data.uri
│   │   ├── StateRejected           -32602 a sealed requestState or handle failed a check
│   │   │   └── HandleError                a handle failed one (`isError` in tools/call)
│   │   ├── HeldCallGoneError       -32602 a proxy's retry names an upstream call no longer held
│   │   ├── TooManyTasksError       -32602 a principal's share of tasks is full (HTTP 429)
│   │   └── RateLimitedError        -32602 a caller past its rate limit (data.retryAfterS, HTTP 429)
│   ├── InternalError               -32603 a bug or an unexpected failure; details stay in logs
│   │   ├── StoreUnavailableError   -32603 a shared store or broker is out of reach (HTTP 503)
│   │   └── ServiceUnavailableError -32603 the server is stopping or full: retry (HTTP 503)
│   ├── HeaderMismatchError         -32020 an HTTP header disagrees with the body
│   ├── MissingRequiredClientCapabilityError -32021 data.requiredCapabilities
│   ├── UnsupportedProtocolVersionError      -32022 data.supported, data.requested
│   └── URLElicitationRequiredError          -32042 (2025-11-25 only) data.elicitations
├── ToolError                              a tool failed: becomes `isError: true`, never a JSON-RPC error
├── TransportError                         the connection itself failed (closed, timed out, refused)
│   ├── RequestTimeoutError                no response in time (also a TimeoutError)
│   ├── HTTPStatusError                    an HTTP error status without a JSON-RPC message
│   │   └── SessionExpiredError            a legacy session's 404: initialize again
│   └── BrokenStreamError                  an HTTP response stream ended before its response
├── ProtocolViolation                      the peer broke the protocol (raised locally, never sent)
│   ├── FormSchemaError                    a server's requestedSchema is not a renderable form
│   └── SkillVerificationError             a skill's file is not what its entry lists (.skill, .uri)
├── NoCommonVersionError                   the server speaks no version this client speaks
├── ResultTypeError                        a structured result does not fit the type the call
│                                          named (also a TypeError)
├── NotJSONError                           a request would carry a value JSON cannot (an integer
│                                          past 64 bits, a set); nothing sent (also a TypeError)
├── ArgumentsError                         tool arguments do not fit the input schema (.problems)
│                                          (also a ValueError)
├── InvalidHeaderDeclaration               a tool's x-mcp-header declarations break a rule
│                                          (also a ValueError)
├── UsageError                             a command-line mistake: one line, exit status 2
├── TargetError                            `mcpkit run`'s target cannot be loaded
├── SignInFileError, TokenFileError,       a sign-in, token or key file cannot be used; never
│   KeyFileError                           overwritten (each also a ValueError)
├── StoreURLError                          a store URL of no known form (.reason; a ValueError)
├── EventReplayError                       a Last-Event-ID that cannot be resumed from (.kind;
│                                          also a LookupError)
├── EntryError, SkillSourceError,          a skill entry, source or SKILL.md front matter that
│   FrontMatterError                       cannot be used (.line; each also a ValueError)
├── OpenAPIError                           an OpenAPI document mcpkit cannot serve (a ValueError)
├── UnsupportedOperationError              an OpenAPI operation the bridge leaves out, and why
├── ServerConfigError                      an mcpServers file or entry cannot be used (.path)
│                                          (also a ValueError)
├── InspectorRequestError                  `mcpkit dev`'s page sent an action it cannot take
│                                          (also a ValueError)
├── QuestionClosedError                    `mcpkit dev`'s page answered a question no longer open
│                                          (also a LookupError)
├── NotConnectedError                      `mcpkit dev` has no connection for the action
│                                          (also a RuntimeError)
├── CallCancelledError                     a call the user cancelled from `mcpkit dev`'s page
├── ViewError                              an MCP App view a host cannot show as it is
│                                          (also a ValueError)
├── InputRoundsExceededError               a call kept asking for input past the client's limit
├── TaskCancelledError                     a task ended cancelled, with no result (.task_id)
├── ElicitationAnswerError                 a host's answer does not fit the question; not sent
│                                          (also a ValueError)
├── MissingExtraError                      a feature needs an extra that is not installed
│                                          (also an ImportError; raised at start, never per call)
└── AuthError                              authorization failed
    ├── DPoPError                          a DPoP proof failed a check (.reason, .error)
    ├── GrantError                         a token endpoint refused a grant (.error, .status)
    ├── InvalidTokenError                  a resource server refuses an access token (.error)
    ├── VerifierUnavailableError           a resource server cannot check tokens right now
    ├── StepUpNeeded                       a 403 needs scopes a sign-in of the user must add
    │                                      (.scope, .server_url)
    ├── SignInNeeded                       a 401 needs a new sign-in in the browser, and this
    │                                      client has none (.server_url, .issuer)
    ├── RedirectError                      the browser brought back an error, or nothing (.error)
    └── OAuthRequestError                  the authorization proxy refuses a client's request
                                           (.error, .status)
```

Errors that a peer sent us are built with `RPCError.from_wire`, so a caller catches the same
class whichever side raised it; errors that only exist on this side (`TransportError`,
`ProtocolViolation`) carry no code and cannot be mistaken for something the peer said.

One exception-like class stays outside the tree on purpose: `mcpkit.server.mrtr.InputRequired`
is no error but the signal that unwinds a handler which asked for input, a `BaseException` so
that a handler's own `except Exception` cannot swallow it.

Every subclass of `MCPError` is defined here, whichever layer raises it, so the tree above is
the whole of it (`tests/test_layering.py` checks); the modules that raise one also
export it under their own name (`mcpkit.server.handles.HandleError`, ...).

This module imports only the standard library and `mcpkit.types`.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, ClassVar, Literal

__all__ = [
    "ArgumentsError",
    "AuthError",
    "BrokenStreamError",
    "CallCancelledError",
    "DPoPError",
    "ElicitationAnswerError",
    "EntryError",
    "EventReplayError",
    "FormSchemaError",
    "FrontMatterError",
    "GrantError",
    "HTTPStatusError",
    "HandleError",
    "HeaderMismatchError",
    "HeldCallGoneError",
    "InputRoundsExceededError",
    "InspectorRequestError",
    "InternalError",
    "InvalidHeaderDeclaration",
    "InvalidParamsError",
    "InvalidRequestError",
    "InvalidTokenError",
    "KeyFileError",
    "MCPError",
    "MethodNotFoundError",
    "MissingExtraError",
    "MissingRequiredClientCapabilityError",
    "NoCommonVersionError",
    "NotConnectedError",
    "NotJSONError",
    "OAuthRequestError",
    "OpenAPIError",
    "ParseError",
    "ProtocolViolation",
    "QuestionClosedError",
    "RPCError",
    "RateLimitedError",
    "RedirectError",
    "RequestTimeoutError",
    "ResourceNotFoundError",
    "ResultTypeError",
    "ServerConfigError",
    "ServiceUnavailableError",
    "SessionExpiredError",
    "SignInFileError",
    "SignInNeeded",
    "SkillSourceError",
    "SkillVerificationError",
    "StateRejected",
    "StepUpNeeded",
    "StoreURLError",
    "StoreUnavailableError",
    "TargetError",
    "TaskCancelledError",
    "TokenFileError",
    "TooManyTasksError",
    "ToolError",
    "TransportError",
    "URLElicitationRequiredError",
    "UnsupportedOperationError",
    "UnsupportedProtocolVersionError",
    "UsageError",
    "VerifierUnavailableError",
    "ViewError",
    "error_class_for_code",
]


class MCPError(Exception):
    """Base of every exception mcpkit raises on purpose."""


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


class TooManyTasksError(InvalidParamsError):
    """A principal asked for one task more than its share (`TaskOptions.max_*_per_principal`):
    -32602 naming the share, with `data.retryAfterS`, which HTTP answers 429 with Retry-After.
    The client's own load, not the server's failure: it may try again after that long."""

    def __init__(self, message: str, share: str, limit: int, retry_after_s: int) -> None:
        super().__init__(message, {"share": share, "limit": limit,
                                   "retryAfterS": retry_after_s})
        self.retry_after_s = retry_after_s


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


class ToolError(MCPError):
    """Raised by a tool to report a failure to the model as an `isError: true` result."""


class TransportError(MCPError):
    """The connection failed: closed, refused, timed out or broken mid-stream."""

    unreached: bool = False
    """Nothing took the connection (refused, no such host): no server got the request."""

    def __init__(self, *args: object, unreached: bool = False) -> None:
        super().__init__(*args)
        self.unreached = unreached


class RequestTimeoutError(TransportError, TimeoutError):
    """No response within the timeout; the request was cancelled on the wire."""


class HTTPStatusError(TransportError):
    """The server answered with an HTTP error status and no JSON-RPC message in the body."""

    def __init__(self, status_code: int, body: bytes, what: str) -> None:
        shown = body[:200].decode("utf-8", "replace")
        super().__init__(f"{what}: HTTP {status_code}" + (f": {shown}" if shown else ""))
        self.status_code = status_code
        self.body = body


class SessionExpiredError(HTTPStatusError):
    """The legacy session is gone (404): send initialize again, without the old id."""


class BrokenStreamError(TransportError):
    """The response stream ended before the response: the request is lost, unless (legacy
    era) the stream named its last event, which a GET can resume from."""

    def __init__(
        self, message: str, last_event_id: str | None = None, retry_ms: int | None = None
    ) -> None:
        super().__init__(message)
        self.last_event_id = last_event_id
        self.retry_ms = retry_ms


class ProtocolViolation(MCPError):
    """The peer sent something the protocol forbids; raised on this side only."""


class FormSchemaError(ProtocolViolation):
    """A server's `requestedSchema` is not a form a client can render (ELIC-5)."""


class SkillVerificationError(ProtocolViolation):
    """A skill's file fails its entry (digest, size, front matter, unlisted): not used."""

    def __init__(self, message: str, *, skill: str, uri: str) -> None:
        super().__init__(message)
        self.skill, self.uri = skill, uri


class NoCommonVersionError(MCPError):
    """The server speaks no protocol version this client speaks (raised locally)."""


class ResultTypeError(MCPError, TypeError):
    """A tool's structured content does not fit the type `call_tool(..., result=T)` named."""


class NotJSONError(MCPError, TypeError):
    """A request the client was asked to send holds a value JSON cannot carry (an integer
    beyond the 64-bit range, a set, an object); refused before any byte is written."""


class ServerConfigError(MCPError, ValueError):
    """An `mcpServers` file cannot be read, or its entry cannot be used; names the file."""

    def __init__(self, message: str, path: str | None = None) -> None:
        super().__init__(message)
        self.path = path


class InspectorRequestError(MCPError, ValueError):
    """`mcpkit dev`'s page sent an action it cannot take; the message names the field and what
    it takes (answered with HTTP 400)."""


class QuestionClosedError(MCPError, LookupError):
    """`mcpkit dev`'s page answered a question that is no longer open (answered already, or
    the call that asked it ended)."""


class NotConnectedError(MCPError, RuntimeError):
    """An action of `mcpkit dev`'s page needs the connection, and there is none; the message
    says why the last one failed."""


class CallCancelledError(MCPError):
    """The user cancelled a call from `mcpkit dev`'s page: a request in flight is cancelled on
    the wire, a question it waited on is withdrawn, and no retry is sent."""


class ViewError(MCPError, ValueError):
    """An MCP App view a host cannot show as it is (not a view, no HTML, or a policy that asks
    for more than origins); the message names the view and why."""


class InputRoundsExceededError(MCPError):
    """A call kept answering `input_required` past `ClientOptions.max_rounds`."""


class TaskCancelledError(MCPError):
    """A task the client waited on ended `cancelled`, so there is no result (TASK-11)."""

    def __init__(self, message: str, task_id: str) -> None:
        super().__init__(message)
        self.task_id = task_id


class ElicitationAnswerError(MCPError, ValueError):
    """An elicitation answer that does not match the request; nothing was sent."""

    def __init__(self, message: str, problems: Mapping[str, str] | None = None) -> None:
        super().__init__(message)
        self.problems: dict[str, str] = dict(problems or {})
        """Field name -> what is wrong with its value ("" for the answer as a whole)."""


class MissingExtraError(MCPError, ImportError):
    """A feature needs an optional dependency that is not installed.

    The message is the whole of what a user needs, on one line: `<feature> needs the '<extra>'
    extra: pip install 'mcpkit[<extra>]'`. It is raised where the feature is configured or
    registered (`mcpkit.protocol.extras.require`), so a server refuses to start rather than
    fail a call; an ImportError too, so code that already catches one keeps working.
    """

    def __init__(self, feature: str, extra: str, *, module: str | None = None,
                 cause: str | None = None) -> None:
        self.feature = feature
        self.extra = extra
        line = f"{feature} needs the {extra!r} extra: pip install 'mcpkit[{extra}]'"
        if cause:
            line = f"{line} ({cause})"
        super().__init__(line, name=module)


class AuthError(MCPError):
    """Authorization failed."""


class DPoPError(AuthError):
    """A DPoP proof (RFC 9449) failed a check: raised by `mcpkit.auth.dpop.verify_proof`.

    `reason` names the check that failed, one short word a caller can branch on ("typ", "alg",
    "jwk", "signature", "htm", "htu", "iat", "jti", "ath", "jkt", "nonce", "malformed"), and
    `error` is the OAuth error code the answer carries: `use_dpop_nonce` when the proof lacks
    the nonce the server asked for (the client retries with it), `invalid_dpop_proof` for
    everything else. The message never holds the proof or the access token.
    """

    def __init__(self, message: str, reason: str) -> None:
        super().__init__(message)
        self.reason = reason
        self.error = "use_dpop_nonce" if reason == "nonce" else "invalid_dpop_proof"


class StepUpNeeded(AuthError):
    """A 403 `insufficient_scope` that this client cannot answer itself (it has no browser
    step): `scope` is the union it should sign in again with, for `server_url`."""

    def __init__(self, message: str, *, server_url: str, scope: str | None) -> None:
        super().__init__(message)
        self.server_url = server_url
        self.scope = scope


class SignInNeeded(AuthError):
    """A server needs a sign-in (none is kept, or the kept one expired, or its refresh was
    refused: the grant was revoked) that only the browser step can give, and this client has
    none (an `OAuth` without a redirect and callback handler, as the CLI's client commands
    use): `server_url` is the server, `issuer` the authorization server to sign in at."""

    def __init__(self, message: str, *, server_url: str, issuer: str) -> None:
        super().__init__(message)
        self.server_url = server_url
        self.issuer = issuer


class GrantError(AuthError):
    """An authorization server (or an enterprise IdP) refused a token request, or answered one
    with something that is no token response.

    `error` is the OAuth error code it sent (`invalid_grant`, `invalid_client`,
    `invalid_scope`, `unauthorized_client`, ...; `invalid_response` when the answer was not a
    token response), `description` its `error_description` (cut short), `status` the HTTP
    status. The message names the grant and the endpoint, never a token, secret or assertion.
    """

    def __init__(self, message: str, *, error: str, description: str | None = None,
                 status: int | None = None) -> None:
        super().__init__(message)
        self.error = error
        self.description = description
        self.status = status


class InvalidTokenError(AuthError):
    """A resource server refuses an access token: expired, not yet valid, badly signed, for
    another audience or issuer, revoked, or malformed. Raised by token verifiers.

    `error` is the OAuth code the 401 challenge carries (`invalid_token`; `invalid_request`
    for a malformed request, answered 400). The message says why for the challenge's
    `error_description`, and never holds the token.
    """

    def __init__(self, message: str, error: str = "invalid_token") -> None:
        super().__init__(message)
        self.error = error


class VerifierUnavailableError(AuthError):
    """A resource server cannot check tokens right now: its JWKS or introspection endpoint is
    out of reach or answers nonsense. Answered 503, not 401: the client's token may be good.
    `retry_after_s`, when known, is how long until the verifier tries again (the 503's
    `Retry-After`)."""

    def __init__(self, message: str, retry_after_s: float | None = None) -> None:
        super().__init__(message)
        self.retry_after_s = retry_after_s


class RedirectError(AuthError):
    """The authorization response did not come back usable: the authorization server redirected
    the browser with an error (`error` is its code, e.g. `access_denied`), or nothing reached
    the loopback redirect listener in time (`error` is "timeout"). Raised by
    `mcpkit.transports.oauth.redirect`; the message says what to do and holds no code."""

    def __init__(self, message: str, *, error: str) -> None:
        super().__init__(message)
        self.error = error

# -- configuration and local checks: raised here, never sent as they are ---------------------


class ArgumentsError(MCPError, ValueError):
    """The arguments do not fit the schema; `problems` lists each one with its JSON path."""

    def __init__(self, problems: list[str]) -> None:
        self.problems = problems
        super().__init__("; ".join(problems))


class InvalidHeaderDeclaration(MCPError, ValueError):
    """A tool's input schema breaks an `x-mcp-header` rule, so the whole tool is invalid."""


class UsageError(MCPError):
    """A mistake on the command line; its message is what to change, shown on one line (or a
    few, when it lists what the user may choose from), and the exit status is 2."""


class TargetError(MCPError):
    """The target could not be loaded; the message is one line for the user."""


class SignInFileError(MCPError, ValueError):
    """The sign-in file cannot be used; the message names the file and the fix."""


class TokenFileError(MCPError, ValueError):
    """The token file exists but cannot be used (others may read it, or it does not parse).
    It is never overwritten: it may hold the only refresh token of a grant."""


class KeyFileError(MCPError, ValueError):
    """The key file exists but cannot be used (readable by others, malformed). It is never
    overwritten: the keys in it may be the only ones that open the retries in flight."""


class StoreURLError(MCPError, ValueError):
    """A store URL of no form this release knows; the message lists the forms."""

    def __init__(self, value: str, reason: str) -> None:
        super().__init__(f"store {value!r}: {reason}")
        self.reason = reason


class EventReplayError(MCPError, LookupError):
    """A `Last-Event-ID` that cannot be resumed from.

    `kind` is "invalid" for an id this session never had (malformed, not issued yet, or another
    session's) and "gone" for one that is no longer kept (expired, evicted by the store's bounds,
    or forgotten with its session); the message says which and what to do.
    """

    def __init__(self, kind: Literal["invalid", "gone"], message: str) -> None:
        super().__init__(message)
        self.kind = kind


class EntryError(MCPError, ValueError):
    """A skill entry a server sent breaks the extension's rules, so it is never loaded."""


class SkillSourceError(MCPError, ValueError):
    """A skill that cannot be served as written: the message names the file and the fix."""


class FrontMatterError(MCPError, ValueError):
    """The front matter is missing or is not YAML this reader reads exactly; `.line` is the
    1-based line of `SKILL.md` at fault (0 when the block itself is missing)."""

    def __init__(self, message: str, line: int = 0) -> None:
        super().__init__(f"line {line}: {message}" if line else message)
        self.line = line


class OpenAPIError(MCPError, ValueError):
    """An OpenAPI document mcpkit cannot serve, said in one line naming the document and the
    place in it."""


class UnsupportedOperationError(MCPError):
    """What the bridge cannot express for one operation; it is left out, saying why."""



class OAuthRequestError(AuthError):
    """The authorization proxy (`mcpkit.auth.proxy`) refuses what an MCP client or a browser
    asked of it: a registration, an authorization request, a token request, a revocation.

    `error` is the OAuth code of the answer (`invalid_request`, `invalid_client`,
    `invalid_grant`, `unauthorized_client`, `unsupported_grant_type`, `invalid_scope`,
    `access_denied`, `invalid_redirect_uri`, `invalid_client_metadata`, `server_error`,
    `temporarily_unavailable`), `status` the HTTP status of a direct answer; the message is
    the `error_description`, naming the parameter and the fix, never a code, token or secret.
    """

    def __init__(self, message: str, *, error: str, status: int = 400) -> None:
        super().__init__(message)
        self.error = error
        self.status = status


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
