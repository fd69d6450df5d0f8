"""`LegacySession`: one initialized 2025-11-25 connection and what it negotiated.

What a session remembers is small and serialisable (`LegacyState`), so a shared store can hold
it for sessions that move between instances. Requests the server sends to a legacy client
(elicitation, sampling, roots, ping) go through `request_peer`, which the transport supplies.

Handlers ask for input the modern way (`ctx.elicit`, ...), so the core answers a legacy
request with `input_required` too; the session then fulfils each input request by sending it
to the client as a real request, and serves the request again with the answers and the
`requestState`, until it completes. One handler serves both eras without looking at either.
"""

from __future__ import annotations

import logging
import uuid
from collections.abc import Awaitable, Callable
from dataclasses import asdict, dataclass, field
from typing import Any

from mcpkit.errors import (
    InternalError,
    InvalidParamsError,
    InvalidRequestError,
    MethodNotFoundError,
    RPCError,
    TransportError,
)
from mcpkit.legacy.shapes import (
    change_notification,
    legacy_capabilities,
    legacy_error,
    legacy_result,
)
from mcpkit.legacy.subscriptions import served_by, subscribe, unsubscribe
from mcpkit.protocol.codec import Notification, Request, RequestId
from mcpkit.protocol.envelope import RequestMeta
from mcpkit.protocol.principals import current_text
from mcpkit.protocol.rejections import initialize_error
from mcpkit.server.context import Notify
from mcpkit.server.dispatch import call, serve
from mcpkit.tracing.spans import note_version, trace_keys
from mcpkit.types.constants import (
    LEGACY_VERSION,
    LEGACY_VERSIONS,
    LOG_LEVELS,
    MODERN_VERSION,
    PROGRESS_TOKEN_KEY,
)
from mcpkit.types.methods import METHODS, Method

__all__ = [
    "LegacySession",
    "LegacyState",
    "RequestPeer",
    "initialize_error",
]

log = logging.getLogger("mcpkit.server")

RequestPeer = Callable[[str, dict[str, Any] | None], Awaitable[dict[str, Any]]]

MAX_INPUT_ROUNDS = 16
"""Rounds of input one legacy request may take before it is stopped as a runaway handler."""

SERVED_LEGACY_VERSIONS = LEGACY_VERSIONS[:3]
"""Initialize versions echoed back; older ones are answered with the newest legacy version."""

_LEGACY_METHODS = frozenset(
    name for name, m in METHODS.items() if m.is_request and m.by_client and m.modern and m.legacy)
"""What a legacy client sends that the modern core serves: the requests both eras have."""


_JSON_KINDS = {bool: "a boolean", float: "a number", list: "an array", dict: "an object",
               int: "an integer", str: "a string", type(None): "null"}
"""How a value of a peer's JSON is named in an error (the peer never saw Python types)."""

_OBJECT_CAPABILITIES = ("elicitation", "experimental", "roots", "sampling", "tasks")
"""Client capabilities the 2025-11-25 schema defines, each an object when declared. Others are
the client's own (the set is open) and are kept as sent."""

_ELICITATION_MODES = ("form", "url")


def _kind(value: Any) -> str:
    return _JSON_KINDS.get(type(value), type(value).__name__)


def _found(params: dict[str, Any], key: str) -> str:
    """What a refused `params[key]` was, for the error: its JSON kind, or that it is missing."""
    return _kind(params[key]) if key in params else "missing"


def _legacy_meta(method: str, params: dict[str, Any] | None) -> dict[str, Any] | None:
    """`params._meta` of a legacy request, checked where it is read: anything but an object
    (or no `_meta`) is refused, since a list or a number silently dropped would lose the
    progress token the client meant to send."""
    meta = params.get("_meta") if params is not None else None
    if meta is not None and type(meta) is not dict:
        raise InvalidParamsError(f"{method}: params._meta must be an object, not {_kind(meta)}")
    return meta


def _check_capabilities(caps: dict[str, Any]) -> None:
    """Each capability the schema defines must be an object: the server reads members of them
    (`elicitation.url`, ...) when a handler asks the client for input."""
    for name in _OBJECT_CAPABILITIES:
        value = caps.get(name)
        if value is not None and type(value) is not dict:
            raise InvalidParamsError(
                f"initialize: params.capabilities.{name} must be an object, not {_kind(value)}")
    elicitation: dict[str, Any] = caps.get("elicitation") or {}
    for mode in _ELICITATION_MODES:
        value = elicitation.get(mode)
        if value is not None and type(value) is not dict:
            raise InvalidParamsError(
                f"initialize: params.capabilities.elicitation.{mode} must be an object, not "
                f"{_kind(value)}")


def _check_client_info(info: dict[str, Any]) -> None:
    """`clientInfo.name` and `.version` are strings (the schema requires them); handlers see
    clientInfo as sent (`ctx.client_info`) and may rely on that."""
    for name in ("name", "version"):
        value = info.get(name)
        if value is not None and type(value) is not str:
            raise InvalidParamsError(
                f"initialize: params.clientInfo.{name} must be a string, not {_kind(value)}")


@dataclass(slots=True)
class LegacyState:
    """Everything a legacy session must remember between requests."""

    protocol_version: str
    client_capabilities: dict[str, Any]
    client_info: dict[str, Any] | None
    log_level: str | None = None
    subscriptions: list[str] = field(default_factory=list)
    initialized: bool = False
    principal: str | None = None
    """Who opened the session (`mcpkit.server.sealing.principal_key`; None: no one signed in):
    a request naming the session with another principal's token is refused."""

    def __post_init__(self) -> None:
        if self.principal is not None and "\0" in self.principal:  # kept in the old spelling
            self.principal = current_text(self.principal)

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


class LegacySession:
    """Serves the requests of one legacy client through the modern server (a `ServerSession`:
    transports hold it as they hold the modern one)."""

    forwards_changes = True
    """A legacy client hears of list changes, and of updates to what it subscribed to, unasked."""

    def __init__(self, server: Any, state: LegacyState, request_peer: RequestPeer | None = None):
        self.server = server
        self.state = state
        self.request_peer = request_peer

    @classmethod
    def open(
        cls, server: Any, params: dict[str, Any] | None, request_peer: RequestPeer | None = None
    ) -> tuple[LegacySession, dict[str, Any]]:
        """Answer `initialize`: a new session and its InitializeResult."""
        if params is None:
            raise InvalidParamsError("initialize: params are required")
        requested = params.get("protocolVersion")
        if type(requested) is not str:
            raise InvalidParamsError(f"initialize: params.protocolVersion must be a string, "
                                     f"not {_found(params, 'protocolVersion')}")
        _legacy_meta(Method.INITIALIZE, params)
        caps = params.get("capabilities")
        if caps is None:
            caps = {}
        if type(caps) is not dict:
            raise InvalidParamsError(
                f"initialize: params.capabilities must be an object, not {_kind(caps)}")
        _check_capabilities(caps)
        info = params.get("clientInfo")
        if info is not None and type(info) is not dict:
            raise InvalidParamsError(
                f"initialize: params.clientInfo must be an object, not {_kind(info)}")
        if info is not None:
            _check_client_info(info)
        version = requested if requested in SERVED_LEGACY_VERSIONS else LEGACY_VERSION
        state = LegacyState(version, caps, info)
        result: dict[str, Any] = {
            "protocolVersion": version,
            "capabilities": legacy_capabilities(server.capabilities()),
            "serverInfo": server.info,
        }
        if server.instructions:
            result["instructions"] = server.instructions
        return cls(server, state, request_peer), result

    def notification(self, note: Notification) -> None:
        """`notifications/initialized` completes the handshake; others need nothing."""
        if note.method == Method.INITIALIZED:
            self.state.initialized = True

    def forward(self, change: Any, capabilities: dict[str, Any]) -> dict[str, Any] | None:
        return change_notification(self.state.subscriptions, change, capabilities)

    def meta(self, params: dict[str, Any] | None, method: str = "request") -> RequestMeta:
        """The modern `_meta` this legacy request stands for.

        The client's progress token is checked here, where it is read, so that the error
        names the legacy place it came from (`params._meta.progressToken`).
        """
        legacy_meta = _legacy_meta(method, params)
        token = legacy_meta.get(PROGRESS_TOKEN_KEY) if legacy_meta is not None else None
        if token is not None and type(token) is not str and type(token) is not int:
            raise InvalidParamsError(
                f"{method}: params._meta.progressToken must be a string or an integer, "
                f"not {_kind(token)}"
            )
        s = self.state
        return RequestMeta(MODERN_VERSION, s.client_capabilities, s.client_info, s.log_level, token)

    async def handle(
        self,
        request: Request,
        notify: Notify | None = None,
        principal: Any = None,
        request_peer: RequestPeer | None = None,
    ) -> dict[str, Any]:
        """Serve one legacy request; returns its (legacy-shaped) response message.

        `request_peer`, when given, is how requests to the client travel while this request
        is served (on HTTP, the POST's own SSE stream); otherwise the session's is used.
        """
        peer = request_peer or self.request_peer
        return await serve(
            request,
            self._call(self.server, request.method, request.params, request.id, notify,
                       principal, peer=peer),
            errors=legacy_error,
        )

    async def _call(
        self,
        server: Any,
        method: str,
        params: dict[str, Any] | None,
        request_id: RequestId | None,
        notify: Notify | None,
        principal: Any,
        *,
        peer: RequestPeer | None,
    ) -> dict[str, Any]:
        _legacy_meta(method, params)  # every request, the ones answered here too
        note_version(self.state.protocol_version)  # on the request's span, when tracing
        if method == Method.PING:
            return {}
        if method == Method.SET_LEVEL:
            params = params or {}
            level = params.get("level")
            if type(level) is not str or level not in LOG_LEVELS:
                found = repr(level[:64]) if type(level) is str else _found(params, "level")
                raise InvalidParamsError(
                    f"logging/setLevel: params.level must be one of {', '.join(LOG_LEVELS)}, "
                    f"not {found}"
                )
            self.state.log_level = level
            return {}
        if method in (Method.SUBSCRIBE, Method.UNSUBSCRIBE):
            params = params or {}
            uri = params.get("uri")
            if type(uri) is not str:
                raise InvalidParamsError(
                    f"{method}: params.uri must be a string, not {_found(params, 'uri')}")
            if method == Method.SUBSCRIBE:
                subscribe(self.state.subscriptions, uri, served_by(server))
            else:
                unsubscribe(self.state.subscriptions, uri)
            return {}
        if method == Method.INITIALIZE:
            raise InvalidRequestError("initialize: this connection is already initialized")
        if method not in _LEGACY_METHODS:
            raise MethodNotFoundError(f"Method not found: {method}", {"method": method})
        modern = dict(params) if params else {}
        modern.pop("inputResponses", None)  # not legacy fields: this session fills them
        modern.pop("requestState", None)
        modern["_meta"] = self.meta(params, method).to_meta()
        # The client's trace context (META-10) goes on: `ctx.trace` reads as in a modern request.
        modern["_meta"].update(trace_keys(params.get("_meta") if params else None))
        notify = _rising_progress(notify)  # once for all the rounds of this request
        # A 2025-11-25 client cannot declare extensions: each answer comes in the request.
        result = await call(server, method, modern, request_id, notify, principal,
                            in_request_only=True)
        for _ in range(MAX_INPUT_ROUNDS):
            if result.get("resultType") != "input_required":
                return legacy_result(result)
            modern["inputResponses"] = await self._fulfil(
                method, result.get("inputRequests") or {}, peer
            )
            if "requestState" in result:
                modern["requestState"] = result["requestState"]
            else:
                modern.pop("requestState", None)
            result = await call(server, method, modern, request_id, notify, principal,
                                in_request_only=True)
        raise InternalError(
            f"{method}: the handler still asked for input after {MAX_INPUT_ROUNDS} rounds"
        )

    async def _fulfil(
        self, method: str, requests: dict[str, Any], peer: RequestPeer | None
    ) -> dict[str, Any]:
        """Send each input request to the client, one at a time; their results by key.

        A request the transport could not get answered (the server is stopping, the client
        did not answer in time, it takes no event stream) fails here, where the method and the
        reason are both known: it is an expected outcome, so it is logged as one line, without
        the traceback an unexpected exception gets.
        """
        if requests and peer is None:
            raise InternalError(
                f"{method}: the handler needs input from the client, but this connection "
                f"cannot carry requests to a {LEGACY_VERSION} client"
            )
        answers: dict[str, Any] = {}
        for key, request in requests.items():
            wanted, params = request["method"], request.get("params")
            if wanted == Method.ELICIT and params is not None and params.get("mode") == "url":
                params = {**params, "elicitationId": uuid.uuid4().hex}  # required in 2025-11-25
            assert peer is not None
            try:
                answers[key] = await peer(wanted, params)
            except RPCError as exc:
                raise InternalError(
                    f"{method}: the client answered {wanted} with error {exc.code}: {exc.message}"
                ) from None
            except TransportError as exc:
                log.warning("%s: %s", method, exc)
                raise InternalError(f"{method}: {exc}") from None
        return answers


def _rising_progress(notify: Notify | None) -> Notify | None:
    """`notify`, passing on only progress reports above the last one it passed.

    Each input round runs the handler again from its start (the session's `elicitation/create`
    answers become the retry's `inputResponses`), so the reports it made before asking come
    again; the client has seen them, and 2025-11-25 requires progress to increase with each
    notification, so the repeats are dropped here rather than sent as a step back."""
    if notify is None:
        return None
    last: float | None = None

    async def forward(message: dict[str, Any]) -> None:
        nonlocal last
        if message.get("method") == Method.PROGRESS:
            value = (message.get("params") or {}).get("progress")
            if isinstance(value, int | float) and not isinstance(value, bool):
                if last is not None and value <= last:
                    return
                last = value
        await notify(message)

    return forward
