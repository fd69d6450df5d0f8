"""What the server sends that no waiting request asked for: its own requests, on a response
stream or the legacy session's GET stream, and that GET stream's notifications.

`ServerMessages` holds them for one `HTTPClientTransport`: each request of the server is
answered in a task of its own through the request handler (`ping` here) and the answer POSTed
back, unless the transport's era has no such requests (`HTTPEra.answers_requests`: it is dropped
then, and costs no POST); the GET stream, opened once a session and a notification handler are
both there, feeds the notification handler. An event larger than the transport's
`max_message_bytes` closes the stream, as it fails a request's stream: otherwise a server could
fill the client's memory with one event that never ends.

Imports: the core, httpx, and the HTTP client's `streams`.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Awaitable, Callable
from contextlib import AbstractAsyncContextManager
from typing import Any

import httpx
import orjson

from mcpkit.errors import InternalError, MethodNotFoundError, RPCError, TransportError
from mcpkit.protocol.codec import RequestId, result_message
from mcpkit.protocol.framing import SSEDecoder
from mcpkit.protocol.http import Status
from mcpkit.protocol.rejections import error_response
from mcpkit.transports.http_client.streams import BlockSize, describe
from mcpkit.types.methods import Method

__all__ = [
    "ServerMessages",
    "Tap",
]

log = logging.getLogger("mcpkit.client")

Tap = Callable[[str, dict[str, Any]], None]
"""Sees each message as it passes: `("send" | "receive", message)`."""


class ServerMessages:
    """The server's own messages on one transport, and the tasks that handle them."""

    def __init__(
        self,
        post: Callable[[dict[str, Any]], Awaitable[None]],
        open_stream: Callable[[], AbstractAsyncContextManager[httpx.Response]],
        answers: Callable[[], bool],
        limit: Callable[[], int],
        tap: Tap | None,
    ) -> None:
        """`post` sends an answer back, `open_stream` makes the session's GET, `answers` says
        whether the era has requests of the server to answer, `limit` is the largest event the
        GET stream may carry."""
        self._post = post
        self._open_stream = open_stream
        self._answers = answers
        self._limit = limit
        self._tap = tap
        self.request_handler: Any = None
        self.notification_handler: Any = None
        self.stream_open = asyncio.Event()
        """Set while the legacy session's GET stream is open (notifications flow from then)."""
        self._tasks: set[asyncio.Task[None]] = set()
        self._stream: asyncio.Task[None] | None = None

    @property
    def stream(self) -> asyncio.Task[None] | None:
        """The task reading the session's GET stream; None when none is open."""
        return self._stream

    @property
    def answering(self) -> set[asyncio.Task[None]]:
        """The answers under way (the live set: a task leaves it when done)."""
        return self._tasks

    def answer(self, request: dict[str, Any]) -> None:
        """Answer `request`, one the server sent, in a task of its own."""
        self._spawn(self._answer(request))

    def open_stream(self, session_id: str | None) -> None:
        """Open the session's GET stream, once there is a session and a notification handler
        and no stream yet."""
        if self.notification_handler is None or session_id is None or self._stream is not None:
            return
        with contextlib.suppress(RuntimeError):  # no running loop: opened on the next call
            self._stream = asyncio.get_running_loop().create_task(self._session_stream())

    def stop_stream(self) -> None:
        """The session ended: its GET stream with it."""
        if self._stream is not None:
            self._stream.cancel()
            self._stream = None

    async def close(self) -> None:
        """Stop every answer under way and the GET stream."""
        tasks = list(self._tasks)
        if self._stream is not None:
            tasks.append(self._stream)
        for task in tasks:
            task.cancel()
        if tasks:
            await asyncio.gather(*tasks, return_exceptions=True)

    def _spawn(self, work: Any) -> None:
        task: asyncio.Task[None] = asyncio.get_running_loop().create_task(work)
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    async def _answer(self, request: dict[str, Any]) -> None:
        if not self._answers():
            return
        request_id: RequestId = request["id"]
        method = request.get("method")
        params = request.get("params")
        try:
            if method == Method.PING:
                result: dict[str, Any] = {}
            elif self.request_handler is None:
                raise MethodNotFoundError(f"Method not found: this client does not handle {method}")
            else:
                result = await self.request_handler(method, params if isinstance(params, dict)
                                                    else None)
            reply = result_message(request_id, result)
        except RPCError as exc:
            reply = error_response(request_id, exc)
        except Exception as exc:
            log.exception("answering the server's %s failed", method)
            reply = error_response(request_id, InternalError(
                f"the client failed to answer {method}: {type(exc).__name__}"))
        try:
            await self._post(reply)
        except TransportError as exc:
            log.warning("could not send the answer to %s: %s", method, exc)

    async def _session_stream(self) -> None:
        """The legacy GET stream: notifications and requests outside any POST."""
        try:
            async with self._open_stream() as response:
                if response.status_code != Status.OK:
                    return  # 405: the server offers no session stream
                self.stream_open.set()
                decoder = SSEDecoder()
                block = BlockSize()
                async for chunk in response.aiter_bytes():
                    block.add(chunk)
                    limit = self._limit()
                    if block.largest > limit:
                        log.warning("the session stream sent an SSE event larger than %d bytes "
                                    "(max_message_bytes); it is closed", limit)
                        return
                    for _event, data, _id, _retry in decoder.feed(chunk):
                        await self._unsolicited(data)
        except (httpx.HTTPError, TransportError) as exc:
            log.info("the session stream ended: %s",
                     describe(exc) if isinstance(exc, httpx.HTTPError) else exc)
        finally:
            self.stream_open.clear()

    async def _unsolicited(self, data: str) -> None:
        if not data:
            return
        try:
            incoming = orjson.loads(data)
        except orjson.JSONDecodeError:
            return
        if not isinstance(incoming, dict) or "method" not in incoming:
            return
        if self._tap is not None:
            self._tap("receive", incoming)
        if "id" in incoming:
            self.answer(incoming)
        elif self.notification_handler is not None:
            await self.notification_handler(incoming)
