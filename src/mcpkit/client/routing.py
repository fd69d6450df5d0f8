"""`StreamRouter`: the client's half of one ordered message stream (stdio, memory).

On a stream every message shares one channel, so the client must sort what comes back:
responses go to the request with their id; progress goes to the request that gave its token;
listen-stream notifications go to the listen request named by their `subscriptionId`; log
messages go to the requests that asked for a log level (a stdio server cannot say which one a
message belongs to, so each of them sees it); whatever belongs to no request in flight goes to
the unsolicited-notification handler. Requests a legacy server sends are answered by the
request handler, each in its own task, at most `MAX_SERVER_REQUESTS` at once; without a handler
(the 2026-07-28 era, which has no server requests) each is answered -32601 on the spot. Cancelling a request's awaiting task sends
`notifications/cancelled` (never for `initialize`, which must not be cancelled).

A transport supplies `write` (one whole message, never blocking) and, optionally, `drain` for
back-pressure; it calls `receive` with each decoded message and `close` when the stream ends.

May import `mcpkit.types`, `mcpkit.errors` and `mcpkit.protocol`; never a transport.
"""

from __future__ import annotations

import asyncio
import logging
import re
from collections.abc import Awaitable, Callable
from typing import Any

from mcpkit.client.transport import NotificationHandler, RequestHandler
from mcpkit.errors import (
    InternalError,
    InvalidRequestError,
    MethodNotFoundError,
    ProtocolViolation,
    RPCError,
    TransportError,
)
from mcpkit.protocol.codec import (
    Request,
    Response,
    classify,
    error_message,
    notification_message,
    result_message,
)
from mcpkit.protocol.outstanding import Outstanding, peer_id
from mcpkit.types.constants import LOG_LEVEL_KEY, PROGRESS_TOKEN_KEY, SUBSCRIPTION_ID_KEY
from mcpkit.types.methods import Method

__all__ = ["StreamRouter"]

log = logging.getLogger("mcpkit.client")

Write = Callable[[dict[str, Any]], None]

_ANSWER_HEAD = re.compile(
    rb'\A\s*\{\s*(?:"jsonrpc"\s*:\s*"2\.0"\s*,\s*)?"id"\s*:\s*(-?[0-9]{1,19}|"[^"\\]{0,200}")'
    rb'\s*,\s*(?:"jsonrpc"\s*:\s*"2\.0"\s*,\s*)?"(?:result|error)"\s*:')
"""The opening of a response whose id comes first (as encoders write one): a top-level `id`
that is an integer or a plain string, then `result` or `error`. Anything else (a request, a
notification, other key orders) names no request of ours for certain."""

MAX_SERVER_REQUESTS = 64
"""Requests of a server answered at once; one more is refused at once (-32603) rather than
queued, so a server that floods requests cannot pile up handler calls (each may be a person
asked a question) or the tasks that wait for them."""


class _Pending:
    __slots__ = ("future", "logs", "method", "on_notification", "token")

    def __init__(
        self,
        future: asyncio.Future[dict[str, Any]],
        method: str,
        on_notification: NotificationHandler | None,
        token: Any,
        logs: bool,
    ) -> None:
        self.future = future
        self.method = method
        self.on_notification = on_notification
        self.token = token
        self.logs = logs


class StreamRouter:
    """Matches what a server sends on a stream to the client's requests in flight."""

    def __init__(self, write: Write, drain: Callable[[], Awaitable[None]] | None = None) -> None:
        self._write = write
        self._drain = drain
        self._pending: Outstanding[_Pending] = Outstanding()
        self._tokens: dict[Any, Any] = {}
        self._request_handler: RequestHandler | None = None
        self._notification_handler: NotificationHandler | None = None
        self._tasks: set[asyncio.Task[None]] = set()
        self._answering = 0
        self._closed: TransportError | None = None

    # -- the ClientTransport surface -------------------------------------------------------

    def set_request_handler(self, handler: RequestHandler | None) -> None:
        self._request_handler = handler

    def set_notification_handler(self, handler: NotificationHandler | None) -> None:
        self._notification_handler = handler

    async def request(
        self, message: dict[str, Any], *, on_notification: NotificationHandler | None = None
    ) -> dict[str, Any]:
        if self._closed is not None:
            raise TransportError(str(self._closed))
        request_id = message["id"]
        method = message["method"]
        if request_id in self._pending:
            raise ValueError(f"{method}: request id {request_id!r} is already in flight")
        params = message.get("params")
        meta = params.get("_meta") if params else None
        token = logs = None
        if type(meta) is dict:
            token = meta.get(PROGRESS_TOKEN_KEY)
            logs = LOG_LEVEL_KEY in meta
        future: asyncio.Future[dict[str, Any]] = asyncio.get_running_loop().create_future()
        self._pending.add(request_id, _Pending(future, method, on_notification, token, bool(logs)))
        if token is not None:
            self._tokens[token] = request_id
        try:
            self._write(message)
            if self._drain is not None:
                await self._drain()
            return await future
        except asyncio.CancelledError:
            # Cancelling the awaiting task cancels `future` too; a future holding an answer
            # means the server already finished, and there is nothing left to cancel.
            answered = future.done() and not future.cancelled()
            if method != Method.INITIALIZE and not answered and self._closed is None:
                self._cancel_on_wire(request_id)
            raise
        finally:
            self._pending.pop(request_id)
            if token is not None:
                self._tokens.pop(token, None)

    async def notify(self, message: dict[str, Any]) -> None:
        if self._closed is not None:
            raise TransportError(str(self._closed))
        self._write(message)
        if self._drain is not None:
            await self._drain()

    def _cancel_on_wire(self, request_id: Any) -> None:
        try:
            self._write(notification_message(
                Method.CANCELLED, {"requestId": request_id, "reason": "cancelled by the client"}
            ))
        except Exception:  # the stream is gone; there is nobody to tell
            log.debug("could not send notifications/cancelled for %r", request_id)

    # -- input from the transport ----------------------------------------------------------

    def receive(self, message: dict[str, Any]) -> None:
        """Route one decoded message from the server; one that is not JSON-RPC is ignored.

        The codec's shape check comes first, so an id here is a string or an integer and a
        method a non-empty string: a list as an id would be unhashable in the tables of
        requests in flight (a TypeError that ends the stream's reader), and `true` or `1.0`
        would answer request 1. A request whose id is not one cannot be answered at all.
        """
        try:
            decoded = classify(message)
        except InvalidRequestError as exc:
            self._malformed(message, exc)
            return
        if isinstance(decoded, Response):
            self._response(decoded.id, message)
        elif isinstance(decoded, Request):
            self._server_request(decoded.id, decoded.method, decoded.params)
        else:
            self._notification(decoded.method, message)

    def _malformed(self, message: dict[str, Any], exc: InvalidRequestError) -> None:
        """A message that is not JSON-RPC. When it answers a request in flight (its id could be
        read: an error without an integer code, a result that is no object), that request
        fails at once with the reason, rather than waiting for an answer that already came;
        anything else is dropped with a warning."""
        request_id = getattr(exc, "request_id", None)
        answers = type(message) is dict and "method" not in message
        entry = self._pending.get(request_id) if answers else None
        if entry is None or request_id is None:
            log.warning("ignored a message from the server: %s", exc.message)
            return
        if not entry.future.done():
            entry.future.set_exception(ProtocolViolation(
                f"{entry.method}: the server's response is not valid JSON-RPC "
                f"({exc.message.removeprefix('Invalid request: ')})"))

    def oversized(self, head: bytes, size: int, limit: int) -> None:
        """A message over the transport's size limit was dropped unread. When its first bytes
        show it is the response to a request in flight, that request fails now with an error
        naming the limit, instead of waiting out its timeout for an answer that already came
        and was refused; anything else is only logged."""
        found = _ANSWER_HEAD.match(head)
        request_id = int(found[1]) if found and found[1][:1] != b'"' else (
            found[1][1:-1].decode("utf-8", "replace") if found else None)
        entry = self._pending.get(request_id) if request_id is not None else None
        if entry is None:
            log.warning("dropped a %d-byte message from the server (over the %d-byte limit, "
                        "max_message_bytes)", size, limit)
            return
        if not entry.future.done():
            entry.future.set_exception(TransportError(
                f"{entry.method}: the server's response is {size} bytes, over the {limit}-byte "
                "limit (max_message_bytes); it was dropped unread"))

    def _response(self, request_id: Any, message: dict[str, Any]) -> None:
        entry = self._pending.get(request_id) if request_id is not None else None
        if entry is None:
            # A late answer to a request we cancelled or stopped waiting for (CANC-3).
            log.debug("ignored a response to id %r, which is not in flight", request_id)
            return
        if not entry.future.done():
            entry.future.set_result(message)

    def _notification(self, method: str, message: dict[str, Any]) -> None:
        params = message.get("params")
        params = params if type(params) is dict else {}
        targets: list[_Pending] = []
        # Every id, token and subscription id the server names is checked with `peer_id`
        # before it is looked up: any other JSON value names nothing of ours.
        if method == Method.PROGRESS:
            token = peer_id(params.get(PROGRESS_TOKEN_KEY))
            request_id = self._tokens.get(token) if token is not None else None
            entry = self._pending.get(request_id) if request_id is not None else None
            if entry is not None:
                targets.append(entry)
        elif method == Method.MESSAGE:
            targets = [p for p in self._pending.waiters() if p.logs]
        elif method == Method.CANCELLED:
            cancelled = peer_id(params.get("requestId"))
            entry = self._pending.get(cancelled) if cancelled is not None else None
            if entry is not None:
                # The server ended a request of ours (a listen stream it tears down).
                self._deliver(entry, message)
                reason = params.get("reason")
                if not entry.future.done():
                    entry.future.set_exception(TransportError(
                        f"{entry.method}: the server cancelled it"
                        + (f" ({reason})" if type(reason) is str and reason else "")
                    ))
                return
        else:
            meta = params.get("_meta")
            subscription = peer_id(meta.get(SUBSCRIPTION_ID_KEY)) if type(meta) is dict else None
            if subscription is not None:
                entry = self._pending.get(subscription)
                if entry is not None:
                    targets.append(entry)
        if targets:
            for entry in targets:
                self._deliver(entry, message)
        elif self._notification_handler is not None:
            self._spawn(self._notification_handler(message))

    def _deliver(self, entry: _Pending, message: dict[str, Any]) -> None:
        if entry.on_notification is not None:
            self._spawn(entry.on_notification(message))

    def _server_request(self, request_id: Any, method: str, params: dict[str, Any] | None) -> None:
        if self._request_handler is None:
            # The 2026-07-28 era has no server requests (MRTR-1), not even ping, whose empty
            # result would be off its schema. Answered on the spot, with no task to pile up.
            self._reply(request_id, method, error_message(request_id, MethodNotFoundError(
                f"Method not found: {method} (this client handles no server requests)",
                {"method": method}).to_error()))
            return
        if self._answering >= MAX_SERVER_REQUESTS:
            self._reply(request_id, method, error_message(request_id, InternalError(
                f"the client is already answering {MAX_SERVER_REQUESTS} requests of this "
                f"server; {method} was refused").to_error()))
            return
        self._answering += 1
        self._spawn(self._answer(request_id, method, params))

    async def _answer(self, request_id: Any, method: str, params: dict[str, Any] | None) -> None:
        handler = self._request_handler
        try:
            if handler is None:  # unset since the request came: as if it never was
                raise MethodNotFoundError(f"Method not found: {method}", {"method": method})
            reply = result_message(request_id, await handler(method, params))
        except RPCError as exc:
            reply = error_message(request_id, exc.to_error())
        except Exception:
            log.exception("answering the server's %s request failed", method)
            reply = error_message(
                request_id, InternalError(f"Internal error while answering {method}").to_error()
            )
        finally:
            self._answering -= 1
        self._reply(request_id, method, reply)

    def _reply(self, request_id: Any, method: str, reply: dict[str, Any]) -> None:
        if self._closed is None:
            try:
                self._write(reply)
            except Exception:
                log.debug("could not answer the server's %s request; the stream is gone", method)

    def _spawn(self, coro: Awaitable[None]) -> None:
        task = asyncio.ensure_future(coro)
        self._tasks.add(task)
        task.add_done_callback(self._done)

    def _done(self, task: asyncio.Task[None]) -> None:
        self._tasks.discard(task)
        if not task.cancelled() and task.exception() is not None:
            log.error("a notification handler failed", exc_info=task.exception())

    # -- end of stream ---------------------------------------------------------------------

    def close(self, reason: str) -> None:
        """The stream ended: every request in flight fails with `reason`."""
        if self._closed is None:
            self._closed = TransportError(reason)
        for entry in self._pending.waiters():
            if not entry.future.done():
                entry.future.set_exception(TransportError(reason))
        for task in list(self._tasks):
            task.cancel()

    @property
    def closed(self) -> bool:
        return self._closed is not None

    @property
    def in_flight(self) -> int:
        return len(self._pending)


class RoutedTransport:
    """The `ClientTransport` methods of a transport whose messages go through a `StreamRouter`.

    Transports over one ordered stream (stdio, memory) differ only in how bytes move; matching
    responses, notifications and server requests is the router's, so these four methods are
    the same for all of them.
    """

    _router: StreamRouter

    async def request(
        self, message: dict[str, Any], *, on_notification: NotificationHandler | None = None
    ) -> dict[str, Any]:
        return await self._router.request(message, on_notification=on_notification)

    async def notify(self, message: dict[str, Any]) -> None:
        await self._router.notify(message)

    def set_request_handler(self, handler: RequestHandler | None) -> None:
        self._router.set_request_handler(handler)

    def set_notification_handler(self, handler: NotificationHandler | None) -> None:
        self._router.set_notification_handler(handler)

