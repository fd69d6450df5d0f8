"""`HTTPClientTransport`: the client's side of Streamable HTTP, on httpx.

Modern (2026-07-28) mode sends every message as its own POST with the mirrored headers the
server checks (MCP-Protocol-Version, Mcp-Method, Mcp-Name, and `Mcp-Param-*` for the tools
whose `x-mcp-header` tables it has seen in a `tools/list` result or was given with
`remember_tools`). Legacy (2025-11-25) mode starts when an `initialize` succeeds: the session id
and negotiated version go on every later POST, requests the server sends on a response stream
are answered through the request handler, the session's GET stream feeds the notification
handler (both `ServerMessages`, `mcpkit.transports.http_client.incoming`), and `close()` ends
the session with DELETE.

Responses are read as JSON or as SSE. Cancelling the awaiting task closes the response stream,
which is the cancellation on HTTP. A stream that breaks before its response loses the request;
it is sent again, with a new id, only as many times as the caller allows (`retries=`).
What an era changes (the headers of a request, whether a broken stream is resumed, whether a
404 ends a session) the transport asks the `HTTPEra` it holds (`mcpkit.transports.
http_client.era`): `ModernHTTP` from the start, the `LegacyHTTPSession` an `initialize` opened
(`mcpkit.client.legacy.http_session`) after it. Reading a response stream and the policy of
resuming a legacy one are `mcpkit.transports.http_client.streams`; every request follows a
307 or 308 within its origin, and the transport then keeps the URL it ended at
(`mcpkit.transports.http_client.redirects`); the errors raised here (`HTTPStatusError`,
`SessionExpiredError`, `BrokenStreamError`) are defined in `mcpkit.errors` and importable from
here too. httpx is imported with this module, never by `import mcpkit`.
"""

from __future__ import annotations

import contextlib
import logging
from collections.abc import Iterable, Mapping
from contextlib import AbstractAsyncContextManager
from typing import Any, Final
from urllib.parse import urlsplit

import httpx

from mcpkit.auth.client_challenge import bearer_challenge
from mcpkit.client.legacy.http_session import LegacyHTTPSession
from mcpkit.errors import (
    AuthError,
    HTTPStatusError,
    SessionExpiredError,
    TransportError,
)
from mcpkit.errors import BrokenStreamError as _BrokenStream
from mcpkit.protocol.codec import encode
from mcpkit.protocol.framing import Allowance
from mcpkit.protocol.http import ScreenedTools, Status, screen_tools
from mcpkit.transports.http_client.era import HTTPEra, ModernHTTP
from mcpkit.transports.http_client.incoming import ServerMessages, Tap
from mcpkit.transports.http_client.redirects import opened, send
from mcpkit.transports.http_client.streams import describe as _describe
from mcpkit.transports.http_client.streams import json_reply, read_response, resume
from mcpkit.types.constants import Header
from mcpkit.types.methods import Method

__all__ = [
    "HTTPClientTransport",
    "HTTPConnector",
    "HTTPStatusError",
    "SessionExpiredError",
]

log = logging.getLogger("mcpkit.client")

_ACCEPT: Final = "application/json, text/event-stream"
_BASE_HEADERS: Final = {"accept": _ACCEPT, "content-type": "application/json"}
DEFAULT_MAX_MESSAGE_BYTES: Final = 16 * 1024 * 1024


class HTTPClientTransport:
    """One MCP endpoint over Streamable HTTP; a `ClientTransport`."""

    def __init__(
        self,
        url: str,
        *,
        headers: Mapping[str, str] | None = None,
        client: httpx.AsyncClient | None = None,
        timeout: httpx.Timeout | float | None = None,
        max_message_bytes: int = DEFAULT_MAX_MESSAGE_BYTES,
        httpx_options: Mapping[str, Any] | None = None,
        auth: httpx.Auth | None = None,
        tap: Tap | None = None,
    ) -> None:
        """`client` is an httpx client to share (it is not closed here); otherwise one is made
        with `timeout` (default: 30 s to connect, no limit on reading a stream) and any
        `httpx_options` (TLS `verify`, proxies, `event_hooks`, ...). `auth` authorizes every
        request (`mcpkit.transports.oauth.flow.OAuth`; a 401 or 403 is its to answer). `tap`, when
        given, sees every JSON-RPC message in both directions, as `StdioServer`'s does: each
        one sent (requests, notifications, answers to the server's requests) just before its
        POST, and each one received (responses, and what response and session streams carry)."""
        self.url = url
        self._tap = tap
        self.auth = auth
        self.max_message_bytes = max_message_bytes
        self._allowance = Allowance()
        self.allowing = self._allowance.allowing
        """Accept responses up to a larger size while the block runs (a skill file's read)."""
        self._own_client = client is None
        self._client = client or httpx.AsyncClient(**{
            "timeout": timeout if timeout is not None else httpx.Timeout(30.0, read=None),
            "follow_redirects": False,
            **(httpx_options or {}),
        })
        self._headers = {k.lower(): v for k, v in (headers or {}).items()}
        self._tool_params: dict[str, dict[str, tuple[str, ...]]] = {}
        self._era: HTTPEra = ModernHTTP(self._tool_params)
        """The era of the exchanges: modern until an `initialize` opens a legacy session."""
        self._incoming = ServerMessages(
            self.notify, lambda: self._open("GET", "the session's GET stream", None),
            lambda: self._era.answers_requests, lambda: self.max_message_bytes, tap)
        self.session_stream_open = self._incoming.stream_open
        """Set while the legacy session's GET stream is open (notifications flow from then)."""

    @property
    def era(self) -> str:
        return self._era.era

    @property
    def session_id(self) -> str | None:
        """The legacy session's `Mcp-Session-Id` (None in modern mode, or if the server
        gave none)."""
        return self._era.session_id

    @property
    def legacy_version(self) -> str | None:
        """The version a legacy `initialize` negotiated; set means legacy mode."""
        return self._era.legacy_version

    # -- the ClientTransport interface --------------------------------------------------------

    def set_request_handler(self, handler: Any) -> None:
        self._incoming.request_handler = handler

    def set_notification_handler(self, handler: Any) -> None:
        """Notifications outside any request (a legacy session's GET stream)."""
        self._incoming.notification_handler = handler
        self._incoming.open_stream(self.session_id)

    async def request(
        self, message: dict[str, Any], *, on_notification: Any = None, retries: int = 0
    ) -> dict[str, Any]:
        """POST one request and return its response message (result or error).

        A JSON-RPC error in an HTTP 4xx/5xx body is returned like any response (its code says
        what went wrong); a status without one raises HTTPStatusError. With `retries`, a
        stream that breaks before the response is sent again as a new request whose id gets a
        `.retryN` suffix; the returned response carries that id.
        """
        attempt = 0
        while True:
            try:
                response = await self._exchange(message, on_notification)
            except _BrokenStream as exc:
                if attempt >= retries:
                    raise TransportError(
                        f"{message.get('method')}: {exc}; the request is lost (re-send it with a "
                        "new id, or pass retries=)") from None
                attempt += 1
                message = {**message, "id": f"{message['id']}.retry{attempt}"}
                continue
            self._learn(message, response)
            return response

    async def notify(self, message: dict[str, Any]) -> None:
        """POST one notification (or a legacy answer); the server accepts it with 202."""
        what = message.get("method", "response")
        if self._tap is not None:
            self._tap("send", message)
        try:
            async with self._open("POST", what, message, encode(message)) as response:
                await response.aread()
        except httpx.HTTPError as exc:
            raise TransportError(f"{what}: {_describe(exc)}") from None
        if self._era.ends_on(response.status_code):
            self._forget_session()
            raise SessionExpiredError(Status.NOT_FOUND, response.content,
                                      "the legacy session ended")
        if response.status_code >= Status.BAD_REQUEST:
            raise HTTPStatusError(response.status_code, response.content, f"{what} was refused")
        if message.get("method") == Method.INITIALIZED:
            self._incoming.open_stream(self.session_id)

    async def close(self) -> None:
        """Stop background work, end a legacy session (DELETE), release connections."""
        await self._incoming.close()
        if self.session_id is not None:
            with contextlib.suppress(httpx.HTTPError, TransportError):
                async with self._open("DELETE", "the session's DELETE", None):
                    pass
            self._forget_session()
        if self._own_client:
            await self._client.aclose()

    # -- x-mcp-header tables --------------------------------------------------------------------

    def remember_tools(self, tools: Iterable[Any]) -> ScreenedTools:
        """Learn the `x-mcp-header` tables of `tools` (a `tools/list` page or the client's
        cache) and return them screened: drop `rejected` ones from what the model sees."""
        screened = screen_tools(tools)
        for tool in screened.valid:
            name = tool.get("name") if isinstance(tool, Mapping) else None
            if isinstance(name, str):
                self._tool_params.pop(name, None)
        self._tool_params.update(screened.headers)
        for name, reason in screened.rejected:
            self._tool_params.pop(name, None)
            log.warning("tool %r is unusable over HTTP: %s", name, reason)
        return screened

    def _learn(self, message: Mapping[str, Any], response: Mapping[str, Any]) -> None:
        if message.get("method") == Method.TOOLS_LIST:
            result = response.get("result")
            tools = result.get("tools") if isinstance(result, Mapping) else None
            if isinstance(tools, list):
                self.remember_tools(tools)

    # -- one exchange ---------------------------------------------------------------------------

    def _headers_for(self, message: Mapping[str, Any] | None) -> dict[str, str]:
        return self._era.headers({**_BASE_HEADERS, **self._headers}, message)

    def _open(self, method: str, what: str, message: Mapping[str, Any] | None,
              content: bytes | None = None, last_event_id: str | None = None
              ) -> AbstractAsyncContextManager[httpx.Response]:
        """One request to the endpoint, redirects followed (`redirects`); a GET
        asks for an event stream, from `last_event_id` when it resumes one."""
        headers = self._headers_for(message)
        if method == "GET":
            headers["accept"] = "text/event-stream"
        if last_event_id is not None:
            headers[Header.LAST_EVENT_ID] = last_event_id
        request = self._client.build_request(method, self.url, content=content, headers=headers)
        return opened(self._client, request, what, self._moved, self.auth)

    def _moved(self, url: str) -> None:
        """A request was redirected to `url`: every later one goes there directly."""
        self.url = url

    async def _exchange(self, message: dict[str, Any], on_notification: Any) -> dict[str, Any]:
        method = message.get("method")
        if self._tap is not None:
            self._tap("send", message)
        request = self._client.build_request(
            "POST", self.url, content=encode(message), headers=self._headers_for(message))
        try:
            response = await send(self._client, request, str(method), self._moved, self.auth)
        except httpx.HTTPError as exc:
            raise TransportError(f"{method}: {_describe(exc)}",
                                 unreached=isinstance(exc, httpx.ConnectError)) from None
        session_id: str | None = None
        try:
            if method == Method.INITIALIZE:
                session_id = response.headers.get(Header.SESSION_ID)
            status = response.status_code
            media = response.headers.get("content-type", "").split(";")[0].strip().lower()
            if self._era.ends_on(status):
                body = await self._read_body(response, method)
                self._forget_session()
                raise SessionExpiredError(Status.NOT_FOUND, body,
                                          "the legacy session ended; initialize again")
            if status == Status.OK and media == "text/event-stream":
                try:
                    reply = await self._read_stream(response, message, on_notification)
                except _BrokenStream as broken:
                    if not self._era.resumes(broken.last_event_id):
                        raise
                    await response.aclose()
                    reply = await self._resume(message, on_notification, broken)
            else:
                body = await self._read_body(response, method)
                if status in (Status.UNAUTHORIZED, Status.FORBIDDEN):
                    raise _refused(method, status, response.headers)
                reply = json_reply(status, media, body, message)
        except httpx.HTTPError as exc:
            raise _BrokenStream(f"the response stream broke ({_describe(exc)})") from None
        finally:
            await response.aclose()
        if self._tap is not None:
            self._tap("receive", reply)
        if method == Method.INITIALIZE and isinstance(reply.get("result"), dict):
            self._start_session(session_id, reply["result"])
        return reply

    async def _read_body(self, response: httpx.Response, method: Any) -> bytes:
        chunks: list[bytes] = []
        size = 0
        limit = self._limit()
        async for chunk in response.aiter_bytes():
            size += len(chunk)
            if size > limit:
                raise TransportError(
                    f"{method}: the response is larger than {limit} bytes (max_message_bytes)")
            chunks.append(chunk)
        return b"".join(chunks)

    async def _read_stream(self, response: httpx.Response, message: Mapping[str, Any],
                           on_notification: Any) -> dict[str, Any]:
        tap = self._tap
        if tap is not None:
            given = on_notification

            async def on_notification(incoming: dict[str, Any]) -> None:
                tap("receive", incoming)
                if given is not None:
                    await given(incoming)

        def on_request(incoming: dict[str, Any]) -> None:
            if tap is not None:
                tap("receive", incoming)
            self._incoming.answer(incoming)

        return await read_response(response, message, on_notification, on_request,
                                   self._limit())

    def _limit(self) -> int:
        return max(self.max_message_bytes, self._allowance.raised)

    async def _resume(self, message: Mapping[str, Any], on_notification: Any,
                      broken: _BrokenStream) -> dict[str, Any]:
        """Read on a legacy stream that broke before its response (`resume` says when and how
        often), each time from a GET carrying `Last-Event-ID`."""

        async def attempt(broken: _BrokenStream) -> dict[str, Any]:
            assert broken.last_event_id is not None
            async with self._open("GET", f"{message.get('method')}: the resuming GET", None,
                                  last_event_id=broken.last_event_id) as response:
                media = response.headers.get("content-type", "").split(";")[0].strip().lower()
                status = response.status_code
                where = (f"{message.get('method')}: resuming the response stream after event "
                         f"{broken.last_event_id!r}")
                if self._era.ends_on(status):
                    # The GET carried the session id: a 404 is the session's end (LEG-13),
                    # like on a POST, so the caller initializes again without the old id.
                    body = await self._read_body(response, message.get("method"))
                    self._forget_session()
                    raise SessionExpiredError(
                        Status.NOT_FOUND, body,
                        f"{where}: the legacy session ended; initialize again")
                if status != Status.OK or media != "text/event-stream":
                    got = f"HTTP {status}" if status != Status.OK else (
                        f"HTTP 200 {media or 'without a content type'}, not an event stream")
                    raise TransportError(f"{where} got {got}; the request is lost")
                return await self._read_stream(response, message, on_notification)

        return await resume(broken, attempt)

    # -- legacy sessions ------------------------------------------------------------------------

    def _start_session(self, session_id: str | None, result: Mapping[str, Any]) -> None:
        self._era = LegacyHTTPSession.negotiated(session_id, result) or ModernHTTP(
            self._tool_params)

    def _forget_session(self) -> None:
        self._era.forget()
        self._incoming.stop_stream()


def _refused(method: Any, status: int, headers: httpx.Headers) -> AuthError:
    """A 401 or 403 that reached the transport: the `auth` flow (if any) could not answer
    it. It is an authorization event, never a JSON-RPC answer nor a sign of another era."""
    challenge = bearer_challenge(headers.get_list("www-authenticate"))
    said = f" ({challenge.error})" if challenge is not None and challenge.error else ""
    return AuthError(f"{method}: the server answered HTTP {status}{said}: it requires "
                     "authorization; give the connector auth= (mcpkit.transports.oauth.flow.OAuth) "
                     "or sign in with `mcpkit login URL`")


class HTTPConnector:
    """Opens `HTTPClientTransport`s to one URL; its `key` (the origin and path) names the
    server in the client's era cache."""

    kind = "http"

    def __init__(self, url: str, **options: Any) -> None:
        parts = urlsplit(url)
        if parts.scheme not in ("http", "https") or not parts.netloc:
            raise ValueError(f"{url!r} is not an http(s) URL")
        self.url = url
        self.key = f"{parts.scheme}://{parts.netloc}{parts.path}"
        self.options = options

    async def connect(self) -> HTTPClientTransport:
        return HTTPClientTransport(self.url, **self.options)
