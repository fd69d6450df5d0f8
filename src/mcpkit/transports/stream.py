"""`StreamConnection`: serving a server over any ordered byte stream (stdio, a pipe, memory).

It owns what a long-lived stream adds to request/response: requests run concurrently, each in
its own task; `notifications/cancelled` cancels the matching task and nothing more is sent for
it; the opening exchange pins the connection's era (an `initialize` makes it a legacy session,
a modern request makes a later `initialize` an error); responses from a legacy client to our
own requests are matched to the waiting caller. Bytes go out through one `write` callable, one
whole message per call, so messages never interleave.

Whatever a peer sends, the connection goes on: every field read from a message is checked for
its type where it is read (an id used as a key must be a string or an integer, never a list, a
float or a bool that would collide with an integer id), and a message that still raises is
logged and answered, never allowed to end the stream with the requests it carries.
"""

from __future__ import annotations

import asyncio
import itertools
import logging
from collections.abc import Callable
from typing import Any

from mcpkit.errors import InternalError, InvalidRequestError, RPCError, TransportError
from mcpkit.legacy import LegacySession, initialize_error
from mcpkit.legacy.shapes import change_notification
from mcpkit.protocol.codec import (
    Notification,
    Request,
    RequestId,
    Response,
    decode,
    encode,
    error_message,
    request_message,
    result_message,
)
from mcpkit.protocol.framing import Oversized
from mcpkit.types.constants import MODERN_VERSION, PROTOCOL_VERSION_KEY, Method

__all__ = ["StreamConnection", "peer_id"]

log = logging.getLogger("mcpkit.transport")

Write = Callable[[bytes], None]


def peer_id(value: Any) -> RequestId | None:
    """`value` if it can name a request (a string or an integer), else None.

    A peer's `requestId` is looked up in dicts keyed by request id: a list or an object is
    unhashable (a TypeError), and 1.0 or true hash like 1, so they would cancel request 1.
    Anything but a string or a non-bool integer names no request.
    """
    kind = type(value)
    if kind is str or kind is int:
        return value  # type: ignore[no-any-return]
    if value is not None:
        log.warning("a request id of type %s names no request; ignored", kind.__name__)
    return None


class StreamConnection:
    """One client on one byte stream."""

    def __init__(self, server: Any, write: Write, *, principal: Any = None) -> None:
        self.server = server
        self._write = write
        self.principal = principal
        self.era: str | None = None
        self.legacy: LegacySession | None = None
        self._tasks: dict[RequestId, asyncio.Task[None]] = {}
        self._listens: set[RequestId] = set()
        self._changes: asyncio.Task[None] | None = None
        self._pending: dict[RequestId, asyncio.Future[dict[str, Any]]] = {}
        self._ids = itertools.count(1)

    # -- input -----------------------------------------------------------------------------

    def receive(self, line: bytes | Oversized) -> None:
        """Feed one framed message; work it causes runs in tasks."""
        if isinstance(line, Oversized):
            log.warning("dropped a message of %d bytes (over the size limit)", line.size)
            self.send(error_message(None, InvalidRequestError(
                f"Invalid request: message of {line.size} bytes exceeds the limit of "
                f"{self.server.options.max_message_bytes} bytes").to_error()))
            return
        try:
            message = decode(line)
        except RPCError as exc:
            request_id = getattr(exc, "request_id", None)
            if request_id is None:
                log.warning("unreadable message: %s", exc.message)
            self.send(error_message(request_id, exc.to_error()))
            return
        self.receive_message(message)

    def receive_message(self, message: Request | Notification | Response) -> None:
        """Feed one decoded message (transports that carry objects, not bytes, start here).

        Never raises: an exception here would reach the stream's reader and close the whole
        connection, dropping every request in flight, because of one message.
        """
        try:
            if isinstance(message, Request):
                self._start(message)
            elif isinstance(message, Notification):
                self._notification(message)
            else:
                self._response(message)
        except Exception:
            log.exception("internal error while receiving %r", message)
            if isinstance(message, Request) and message.id not in self._tasks:
                self.send(error_message(message.id, InternalError(
                    f"Internal error while receiving {message.method}").to_error()))

    def _start(self, request: Request) -> None:
        if request.id in self._tasks:
            self.send(error_message(request.id, InvalidRequestError(
                f"Invalid request: id {request.id!r} is already in use by a request in flight"
            ).to_error()))
            return
        if request.method == Method.INITIALIZE:
            self._initialize(request)
            return
        if self.era is None:
            params = request.params
            meta = params.get("_meta") if params else None
            if type(meta) is dict and PROTOCOL_VERSION_KEY in meta:
                self.era = "modern"
        task = asyncio.get_running_loop().create_task(self._run(request))
        self._tasks[request.id] = task
        if request.method == Method.SUBSCRIPTIONS_LISTEN:
            self._listens.add(request.id)

    async def _run(self, request: Request) -> None:
        request_id = request.id

        async def notify(message: dict[str, Any]) -> None:
            if request_id in self._tasks:
                self.send(message)

        try:
            if self.legacy is not None:
                response = await self.legacy.handle(request, notify, self.principal)
            else:
                response = await self.server.handle(request, notify=notify, principal=self.principal)
        except asyncio.CancelledError:
            return
        finally:
            self._tasks.pop(request_id, None)
            self._listens.discard(request_id)
        self.send(response)

    def _initialize(self, request: Request) -> None:
        if self.era == "modern":
            self.send(error_message(request.id, initialize_error(
                f"initialize: this connection already speaks {MODERN_VERSION}").to_error()))
            return
        if self.legacy is not None:
            self.send(error_message(request.id, InvalidRequestError(
                "initialize: this connection is already initialized").to_error()))
            return
        try:
            session, result = LegacySession.open(self.server, request.params, self.request_peer)
        except RPCError as exc:
            self.send(error_message(request.id, exc.to_error()))
            return
        self.era = "legacy"
        self.legacy = session
        self.send(result_message(request.id, result))
        self._changes = asyncio.get_running_loop().create_task(self._forward_changes(session))

    async def _forward_changes(self, session: LegacySession) -> None:
        """A legacy client hears of list changes and updates of the URIs it subscribed to."""
        async with self.server.broker.subscribe() as changes:
            async for change in changes:
                message = change_notification(
                    session.state.subscriptions, change, self.server.capabilities()
                )
                if message is not None:
                    self.send(message)

    def _notification(self, note: Notification) -> None:
        if note.method == Method.CANCELLED:
            request_id = peer_id((note.params or {}).get("requestId"))
            task = self._tasks.pop(request_id, None) if request_id is not None else None
            if task is not None:
                task.cancel()
        elif note.method == Method.INITIALIZED and self.legacy is not None:
            self.legacy.state.initialized = True
        # Other notifications (roots/list_changed, unknown ones) need no answer.

    def _response(self, response: Response) -> None:
        request_id = peer_id(response.id)
        future = self._pending.pop(request_id, None) if request_id is not None else None
        if future is None or future.done():
            log.warning("response to an unknown request id %r ignored", response.id)
            return
        if response.error is not None:
            future.set_exception(RPCError.from_wire(response.error))
        else:
            future.set_result(response.result or {})

    # -- output ----------------------------------------------------------------------------

    def send(self, message: dict[str, Any]) -> None:
        self._write(encode(message) + b"\n")

    async def request_peer(self, method: str, params: dict[str, Any] | None) -> dict[str, Any]:
        """Send a request to a legacy client and wait for its answer."""
        request_id = f"s-{next(self._ids)}"
        future: asyncio.Future[dict[str, Any]] = asyncio.get_running_loop().create_future()
        self._pending[request_id] = future
        try:
            self.send(request_message(request_id, method, params))
            return await future
        finally:
            self._pending.pop(request_id, None)

    async def close(self) -> None:
        """End of input: listen streams end, what waits on the peer fails, the rest finishes.

        Requests in flight still get their responses: the client closed its side of the
        stream, not necessarily its reading side.
        """
        if self._changes is not None:
            self._changes.cancel()
        for request_id in list(self._listens):
            task = self._tasks.pop(request_id, None)
            if task is not None:
                task.cancel()
        for future in self._pending.values():
            if not future.done():
                future.set_exception(TransportError("the client closed the connection"))
        if self._tasks:
            await asyncio.gather(*self._tasks.values(), return_exceptions=True)

    def cancel_all(self) -> None:
        for task in list(self._tasks.values()):
            task.cancel()
        if self._changes is not None:
            self._changes.cancel()
