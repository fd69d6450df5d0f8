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

Every subclass of `MCPError` is defined in this package, whichever layer raises it, so the tree
above is the whole of it (`tests/test_layering.py` checks); each module holds one kind:
`base` the root, `rpc` the JSON-RPC errors with their codes and the code table, `transport`
the connection's failures, `calls` what a call meets on this side, `config` configuration and
local checks, `auth` authorization, `inspector` the errors of `mcpkit dev`. Import them from
`mcpkit.errors`; the modules that raise one also export it under their own name
(`mcpkit.server.handles.HandleError`, ...).

The package imports nothing but the standard library.
"""

from __future__ import annotations

from mcpkit.errors.auth import (
    AuthError,
    DPoPError,
    GrantError,
    InvalidTokenError,
    OAuthRequestError,
    RedirectError,
    SignInNeeded,
    StepUpNeeded,
    VerifierUnavailableError,
)
from mcpkit.errors.base import MCPError
from mcpkit.errors.calls import (
    ArgumentsError,
    ElicitationAnswerError,
    EntryError,
    FormSchemaError,
    InputRoundsExceededError,
    NoCommonVersionError,
    NotJSONError,
    ProtocolViolation,
    ResultTypeError,
    SkillVerificationError,
    TaskCancelledError,
    ToolError,
    ViewError,
)
from mcpkit.errors.config import (
    FrontMatterError,
    InvalidHeaderDeclaration,
    KeyFileError,
    MissingExtraError,
    OpenAPIError,
    ServerConfigError,
    SignInFileError,
    SkillSourceError,
    StoreURLError,
    TargetError,
    TokenFileError,
    UnsupportedOperationError,
    UsageError,
)
from mcpkit.errors.inspector import (
    CallCancelledError,
    InspectorRequestError,
    NotConnectedError,
    QuestionClosedError,
)
from mcpkit.errors.rpc import (
    HandleError,
    HeaderMismatchError,
    HeldCallGoneError,
    InternalError,
    InvalidParamsError,
    InvalidRequestError,
    MethodNotFoundError,
    MissingRequiredClientCapabilityError,
    ParseError,
    RateLimitedError,
    ResourceNotFoundError,
    RPCError,
    ServiceUnavailableError,
    StateRejected,
    StoreUnavailableError,
    TooManyTasksError,
    UnsupportedProtocolVersionError,
    URLElicitationRequiredError,
    error_class_for_code,
)
from mcpkit.errors.transport import (
    BrokenStreamError,
    EventReplayError,
    HTTPStatusError,
    RequestTimeoutError,
    SessionExpiredError,
    TransportError,
)

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

# Each class names this package as its home, as it did when the tree was one module: a
# traceback, a span's `error.type` and a pickle say `mcpkit.errors.X`, the path users import,
# whichever module of the package holds the class.
for _name in __all__:
    _value = globals()[_name]
    if isinstance(_value, type):
        _value.__module__ = __name__
del _name, _value
