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

import functools
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
)
from mcpkit.legacy.shapes import legacy_capabilities, legacy_error, legacy_result
from mcpkit.protocol.codec import Request, RequestId
from mcpkit.protocol.envelope import RequestMeta
from mcpkit.server.context import Notify
from mcpkit.server.methods import call, serve
from mcpkit.types.constants import (
    LEGACY_VERSION,
    LEGACY_VERSIONS,
    LOG_LEVELS,
    MODERN_VERSION,
    PROGRESS_TOKEN_KEY,
    SUPPORTED_VERSIONS,
    Method,
)

__all__ = ["LegacySession", "LegacyState", "RequestPeer", "initialize_error"]

RequestPeer = Callable[[str, dict[str, Any] | None], Awaitable[dict[str, Any]]]

MAX_INPUT_ROUNDS = 16
"""Rounds of input one legacy request may take before it is stopped as a runaway handler."""

SERVED_LEGACY_VERSIONS = LEGACY_VERSIONS[:3]
"""Initialize versions echoed back; older ones are answered with the newest legacy version."""

_LEGACY_METHODS = frozenset(
    {
        Method.TOOLS_LIST,
        Method.TOOLS_CALL,
        Method.RESOURCES_LIST,
        Method.RESOURCES_TEMPLATES_LIST,
        Method.RESOURCES_READ,
        Method.PROMPTS_LIST,
        Method.PROMPTS_GET,
        Method.COMPLETE,
    }
)


_JSON_KINDS = {bool: "a boolean", float: "a number", list: "an array", dict: "an object"}
"""How a value of a peer's JSON is named in an error (the peer never saw Python types)."""


@dataclass(slots=True)
class LegacyState:
    """Everything a legacy session must remember between requests."""

    protocol_version: str
    client_capabilities: dict[str, Any]
    client_info: dict[str, Any] | None
    log_level: str | None = None
    subscriptions: list[str] = field(default_factory=list)
    initialized: bool = False

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


def initialize_error(reason: str) -> InvalidRequestError:
    """Refusal of an initialize that names the versions served (VER-7)."""
    return InvalidRequestError(
        f"{reason}; this server supports protocol versions {', '.join(SUPPORTED_VERSIONS)} "
        f"({MODERN_VERSION} needs no initialize)",
        {"supported": list(SUPPORTED_VERSIONS)},
    )


class LegacySession:
    """Serves the requests of one legacy client through the modern server."""

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
            raise InvalidParamsError("initialize: params.protocolVersion must be a string")
        caps = params.get("capabilities")
        if caps is None:
            caps = {}
        if type(caps) is not dict:
            raise InvalidParamsError("initialize: params.capabilities must be an object")
        info = params.get("clientInfo")
        if info is not None and type(info) is not dict:
            raise InvalidParamsError("initialize: params.clientInfo must be an object")
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

    def meta(self, params: dict[str, Any] | None, method: str = "request") -> RequestMeta:
        """The modern `_meta` this legacy request stands for.

        The client's progress token is checked here, where it is read, so that the error
        names the legacy place it came from (`params._meta.progressToken`).
        """
        token = None
        if params is not None:
            legacy_meta = params.get("_meta")
            if type(legacy_meta) is dict:
                token = legacy_meta.get(PROGRESS_TOKEN_KEY)
        if token is not None and type(token) is not str and type(token) is not int:
            raise InvalidParamsError(
                f"{method}: params._meta.progressToken must be a string or an integer, "
                f"not {_JSON_KINDS.get(type(token), type(token).__name__)}"
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
            self.server, request, notify, principal,
            calls=functools.partial(self._call, peer=peer), errors=legacy_error,
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
        if method == Method.PING:
            return {}
        if method == Method.SET_LEVEL:
            level = (params or {}).get("level")
            if level not in LOG_LEVELS:
                raise InvalidParamsError(
                    f"logging/setLevel: level must be one of {', '.join(LOG_LEVELS)}"
                )
            self.state.log_level = level
            return {}
        if method in (Method.SUBSCRIBE, Method.UNSUBSCRIBE):
            uri = (params or {}).get("uri")
            if type(uri) is not str:
                raise InvalidParamsError(f"{method}: params.uri must be a string")
            subs = self.state.subscriptions
            if method == Method.SUBSCRIBE and uri not in subs:
                subs.append(uri)
            elif method == Method.UNSUBSCRIBE and uri in subs:
                subs.remove(uri)
            return {}
        if method == Method.INITIALIZE:
            raise InvalidRequestError("initialize: this connection is already initialized")
        if method not in _LEGACY_METHODS:
            raise MethodNotFoundError(f"Method not found: {method}", {"method": method})
        modern = dict(params) if params else {}
        modern.pop("inputResponses", None)  # not legacy fields: this session fills them
        modern.pop("requestState", None)
        modern["_meta"] = self.meta(params, method).to_meta()
        result = await call(server, method, modern, request_id, notify, principal)
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
            result = await call(server, method, modern, request_id, notify, principal)
        raise InternalError(
            f"{method}: the handler still asked for input after {MAX_INPUT_ROUNDS} rounds"
        )

    async def _fulfil(
        self, method: str, requests: dict[str, Any], peer: RequestPeer | None
    ) -> dict[str, Any]:
        """Send each input request to the client, one at a time; their results by key."""
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
        return answers
