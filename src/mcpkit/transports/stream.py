"""`StreamConnection`: serving a server over any ordered byte stream (stdio, a pipe, memory).

The rules of the connection (ids in flight, cancellation, the era, matching the client's
answers to our requests) are the sans-IO `mcpkit.protocol.connection.Connection`; this is the
I/O around it: each request runs in its own task, a cancelled one's task is cancelled and
nothing more is sent for it, futures wait for the client's answers, and bytes go out through
one `write` callable, one whole message per call, so messages never interleave. Requests go to
the one `ServerSession` the connection holds (`ModernSession` until an `initialize` opens a
`LegacySession`), so nothing here asks which era a connection speaks.

Whatever a peer sends, the connection goes on: a message that raises is logged and answered,
never allowed to end the stream with the requests it carries.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable
from typing import Any

from mcpkit.errors import InternalError, InvalidRequestError, RPCError, TransportError
from mcpkit.legacy import LegacySession
from mcpkit.protocol.codec import (
    Notification,
    Request,
    RequestId,
    Response,
    decode,
    encode,
    result_message,
)
from mcpkit.protocol.connection import (
    CancelRequested,
    Connection,
    Ignored,
    InitializeReceived,
    NotificationReceived,
    Rejected,
    RequestReceived,
    ResponseReceived,
)
from mcpkit.protocol.framing import Oversized
from mcpkit.protocol.rejections import error_response
from mcpkit.server.session import ModernSession, ServerSession
from mcpkit.types.era import LEGACY

__all__ = ["StreamConnection"]

log = logging.getLogger("mcpkit.transport")

Write = Callable[[bytes], None]
Waiter = asyncio.Future[dict[str, Any]]


class StreamConnection:
    """One client on one byte stream."""

    def __init__(self, server: Any, write: Write, *, principal: Any = None) -> None:
        self.server = server
        self._write = write
        self.principal = principal
        self.state: Connection[Waiter] = Connection("s-")
        self.session: ServerSession = ModernSession(server)
        self._tasks: dict[RequestId, asyncio.Task[None]] = {}
        self._changes: asyncio.Task[None] | None = None

    # -- input -----------------------------------------------------------------------------

    def receive(self, line: bytes | Oversized) -> None:
        """Feed one framed message; work it causes runs in tasks."""
        if isinstance(line, Oversized):
            log.warning("dropped a message of %d bytes (over the size limit)", line.size)
            self.send(error_response(None, InvalidRequestError(
                f"Invalid request: message of {line.size} bytes exceeds the limit of "
                f"{self.server.options.max_message_bytes} bytes")))
            return
        try:
            message = decode(line)
        except RPCError as exc:
            request_id = getattr(exc, "request_id", None)
            if request_id is None:
                log.warning("unreadable message: %s", exc.message)
            self.send(error_response(request_id, exc))
            return
        self.receive_message(message)

    def receive_message(self, message: Request | Notification | Response) -> None:
        """Feed one decoded message (transports that carry objects, not bytes, start here).

        Never raises: an exception here would reach the stream's reader and close the whole
        connection, dropping every request in flight, because of one message.
        """
        try:
            for event in self.state.receive(message):
                if type(event) is RequestReceived:  # `_event`'s first case: every request's
                    self._start(event)
                else:
                    self._event(event)
        except Exception:
            log.exception("internal error while receiving %r", message)
            if isinstance(message, Request) and message.id not in self._tasks:
                self.state.finished(message.id)
                self.send(error_response(message.id, InternalError(
                    f"Internal error while receiving {message.method}")))

    def _event(self, event: Any) -> None:
        if isinstance(event, RequestReceived):
            self._start(event)
        elif isinstance(event, CancelRequested):
            task = self._tasks.pop(event.request_id, None)
            if task is not None:
                task.cancel()
        elif isinstance(event, NotificationReceived):
            self.session.notification(event.notification)
        elif isinstance(event, ResponseReceived):
            self._answered(event.waiter, event.response)
        elif isinstance(event, Rejected):
            self.send(event.message)
        elif isinstance(event, InitializeReceived):
            self._initialize(event.request)
        elif isinstance(event, Ignored):
            log.warning("%s", event.reason)

    def _start(self, received: RequestReceived) -> None:
        request = received.request
        task = asyncio.get_running_loop().create_task(self._run(request, received.use))
        self._tasks[request.id] = task

    async def _run(self, request: Request, use: int) -> None:
        request_id = request.id
        # A cancelled request's task may still be unwinding when the client sends its id
        # again: from then on the id's entries are the new request's, so this task speaks and
        # frees only while the entry is its own. `_start` has made it this task's by the time
        # the task first runs (a cancel before then pops it, and the task never starts), so
        # it is read there; a task factory that starts tasks eagerly runs this first.
        task = self._tasks.get(request_id) or asyncio.current_task()

        async def notify(message: dict[str, Any]) -> None:
            if self._tasks.get(request_id) is task:
                self.send(message)

        try:
            response = await self.session.handle(request, notify, self.principal)
        except asyncio.CancelledError:
            return
        finally:
            if self._tasks.get(request_id) is task:
                del self._tasks[request_id]
            self.state.finished(request_id, use)
        self.send(response)

    def _initialize(self, request: Request) -> None:
        try:
            session, result = LegacySession.open(self.server, request.params, self.request_peer)
        except RPCError as exc:
            self.send(error_response(request.id, exc))
            return
        self.state.pin(LEGACY)
        self.session = session
        self.send(result_message(request.id, result))
        self._changes = asyncio.get_running_loop().create_task(self._forward_changes(session))

    async def _forward_changes(self, session: ServerSession) -> None:
        """What the session says the client hears of each change of the server's lists."""
        async with self.server.broker.subscribe() as changes:
            async for change in changes:
                message = session.forward(change, self.server.capabilities())
                if message is not None:
                    self.send(message)

    @staticmethod
    def _answered(future: Waiter, response: Response) -> None:
        if future.done():
            log.warning("response to an unknown request id %r ignored", response.id)
        elif response.error is not None:
            future.set_exception(RPCError.from_wire(response.error))
        else:
            future.set_result(response.result or {})

    # -- output ----------------------------------------------------------------------------

    def send(self, message: dict[str, Any]) -> None:
        self._write(encode(message) + b"\n")

    async def request_peer(self, method: str, params: dict[str, Any] | None) -> dict[str, Any]:
        """Send a request to the client and wait for its answer."""
        future: Waiter = asyncio.get_running_loop().create_future()
        request_id, message = self.state.send_request(method, params, future)
        try:
            self.send(message)
            return await future
        finally:
            self.state.outstanding.pop(request_id)

    async def close(self) -> None:
        """End of input: listen streams end, what waits on the peer fails, the rest finishes.

        Requests in flight still get their responses: the client closed its side of the
        stream, not necessarily its reading side.
        """
        if self._changes is not None:
            self._changes.cancel()
        for request_id in self.state.listens():
            task = self._tasks.pop(request_id, None)
            if task is not None:
                task.cancel()
        for future in self.state.outstanding.waiters():
            if not future.done():
                future.set_exception(TransportError("the client closed the connection"))
        if self._tasks:
            await asyncio.gather(*self._tasks.values(), return_exceptions=True)

    def cancel_all(self) -> None:
        for task in list(self._tasks.values()):
            task.cancel()
        if self._changes is not None:
            self._changes.cancel()
