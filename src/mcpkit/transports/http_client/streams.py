"""Reading the responses a Streamable HTTP server answers with, for `HTTPClientTransport`.

The response in a JSON body, or what came instead (`json_reply`); one response stream's events, each bounded by `max_message_bytes` (`BlockSize`), until the
response to the request it carries (`read_response`); and the policy of resuming a legacy stream
that broke before its response (`resume`: the server's `retry` wait, how many fruitless
resumes in a row and in all). The GET that resumes, and what a session's 404 means, stay with
the transport, which owns the session. httpx is imported with this module.
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import logging
import re
from collections.abc import Awaitable, Callable, Mapping
from typing import Any, Final

import httpx
import orjson

from mcpkit.errors import BrokenStreamError, HTTPStatusError, TransportError
from mcpkit.protocol.framing import SSEDecoder
from mcpkit.protocol.http import Status

__all__ = [
    "BlockSize",
    "describe",
    "json_reply",
    "read_response",
    "resume",
    "same_id",
]

log = logging.getLogger("mcpkit.client")

_MAX_RESUMES: Final = 5
"""Resumes in a row that bring no new event before a legacy request is given up."""
_MAX_ROUNDS: Final = 10_000
"""Resumes of one legacy request in all (a polling server closes every stream after a while)."""
_DEFAULT_RETRY_MS: Final = 1000
"""Wait before resuming when the server sent no `retry` field."""

Incoming = Callable[[dict[str, Any]], Awaitable[None]]


class BlockSize:
    """How many bytes of an SSE stream came since its last blank line: the block (event) being
    read, which `max_message_bytes` bounds. Counting from the last blank line rather than the
    last dispatched event lets keep-alive comment blocks, which dispatch nothing, end a block
    too: a long call that a server keeps alive is never taken for an event over the limit. A
    blank line split between two chunks is found through the previous chunk's last bytes.

    Every block a chunk ends is measured, not only the one it leaves open: an event over the
    limit followed by a small one in the same chunk must be refused as it is when the network
    cuts the bytes between them, or the limit would depend on where the cuts fell."""

    _ENDS: Final = re.compile(rb"(?=\n\r?\n)")
    """Where each blank line starts (zero-width, so "\n\n\n" is two ends, as it is parsed)."""

    def __init__(self) -> None:
        self.size = 0
        self.largest = 0
        """The largest block the last chunk ended or extended (one it ended is counted
        without its last line feed, as it stood while that line feed had not yet come)."""
        self._tail = b""

    def add(self, chunk: bytes) -> int:
        """Count `chunk` in; returns the size of the block now being read (`largest` is what
        to hold against the limit)."""
        seen = self._tail + chunk
        ends = [m.start() + (3 if seen[m.start() + 1] == 0x0D else 2)
                for m in self._ENDS.finditer(seen)]
        if not ends:
            self.size += len(chunk)
            self.largest = self.size
        else:
            largest = self.size + ends[0] - len(self._tail) - 1
            for before, after in itertools.pairwise(ends):
                largest = max(largest, after - before - 1)
            self.size = len(seen) - ends[-1]
            self.largest = max(largest, self.size)
        self._tail = seen[-2:]
        return self.size


async def read_response(response: httpx.Response, message: Mapping[str, Any],
                        on_notification: Incoming | None,
                        on_request: Callable[[dict[str, Any]], None],
                        max_message_bytes: int) -> dict[str, Any]:
    """The response to `message` on an SSE stream. Notifications before it go to
    `on_notification`, requests of the server to `on_request`; a stream that ends or breaks
    first raises `BrokenStreamError` with the last event id and `retry` it named."""
    request_id = message.get("id")
    decoder = SSEDecoder()
    block = BlockSize()
    last_id: str | None = None
    retry: int | None = None
    chunks = response.aiter_bytes()
    while True:
        try:
            chunk = await anext(chunks)
        except StopAsyncIteration:
            break
        except httpx.HTTPError as exc:
            raise BrokenStreamError(
                f"the response stream broke ({describe(exc)})", last_id, retry) from None
        block.add(chunk)
        if block.largest > max_message_bytes:
            raise TransportError(
                f"{message.get('method')}: an SSE event is larger than "
                f"{max_message_bytes} bytes (max_message_bytes)")
        for _event, data, event_id, event_retry in decoder.feed(chunk):
            last_id = event_id if event_id else last_id
            retry = event_retry if event_retry is not None else retry
            if not data:
                continue
            try:
                incoming = orjson.loads(data)
            except orjson.JSONDecodeError:
                log.warning("%s: ignored an SSE event that is not JSON", message.get("method"))
                continue
            if not isinstance(incoming, dict):
                continue
            if "method" not in incoming:
                if same_id(incoming.get("id"), request_id):
                    return incoming
                continue
            if "id" in incoming:
                on_request(incoming)
            elif on_notification is not None:
                await on_notification(incoming)
    raise BrokenStreamError("the response stream ended before the response", last_id, retry)


async def resume(broken: BrokenStreamError,
                 attempt: Callable[[BrokenStreamError], Awaitable[dict[str, Any]]]
                 ) -> dict[str, Any]:
    """Legacy resumability (LEG-11): a stream that ended before its response, having named
    its last event, is read on by `attempt` (a GET carrying `Last-Event-ID`) after the
    server's `retry` wait. A server that polls (closing every stream after a while) is followed
    for as long as each resume brings a new event; `_MAX_RESUMES` resumes in a row that bring
    nothing give up, and `_MAX_ROUNDS` bounds the whole. The 2026-07-28 era has no
    resumability (a broken stream there loses the request)."""
    fruitless = 0
    for _ in range(_MAX_ROUNDS):
        if fruitless >= _MAX_RESUMES:
            break
        assert broken.last_event_id is not None
        before = broken.last_event_id
        wait = broken.retry_ms if broken.retry_ms is not None else _DEFAULT_RETRY_MS
        await asyncio.sleep(wait / 1000)
        try:
            return await attempt(broken)
        except BrokenStreamError as again:
            broken = BrokenStreamError(str(again), again.last_event_id or broken.last_event_id,
                                       again.retry_ms if again.retry_ms is not None
                                       else broken.retry_ms)
        except httpx.HTTPError as exc:
            broken = BrokenStreamError(f"resuming the response stream failed ({describe(exc)})",
                                       broken.last_event_id, broken.retry_ms)
        fruitless = 0 if broken.last_event_id != before else fruitless + 1
    raise broken


def json_reply(status: int, media: str, body: bytes,
           message: Mapping[str, Any]) -> dict[str, Any]:
    """The response in a JSON body. Anything else in a 2xx is a TransportError that says
    what came instead (no body, another content type, text that is not JSON, JSON that is
    not a response, or the response to another id: one POST carries one request, so a
    reply naming another id is the server's mix-up, never this request's answer)."""
    what = f"{message.get('method')} (id {message.get('id')!r})"
    reply: Any = None
    parsed = False
    if body and (media == "application/json" or status >= Status.BAD_REQUEST):
        with contextlib.suppress(orjson.JSONDecodeError):
            reply = orjson.loads(body)
            parsed = True
    if isinstance(reply, dict) and (
            "error" in reply or ("result" in reply and status == Status.OK)):
        answered = reply.get("id")
        if same_id(answered, message.get("id")) or (answered is None and "error" in reply):
            return reply
        if status < Status.BAD_REQUEST:
            raise TransportError(f"{what}: expected a JSON-RPC response, got HTTP {status} "
                                 f"with the response to id {answered!r}")
    if status < Status.BAD_REQUEST:
        if not body:
            got = "without a body"
        elif media != "application/json":
            got = media or "without a content type"
        elif not parsed:
            got = "application/json that is not JSON"
        else:
            got = "JSON that is not a JSON-RPC response"
        raise TransportError(f"{what}: expected a JSON-RPC response, got HTTP {status} {got}")
    raise HTTPStatusError(status, body, what)


def describe(exc: httpx.HTTPError) -> str:
    text = str(exc) or type(exc).__name__
    if isinstance(exc, httpx.ConnectError):
        return f"cannot connect ({text})"
    if isinstance(exc, httpx.TimeoutException):
        return f"timed out ({type(exc).__name__})"
    return text


def same_id(answered: Any, request_id: Any) -> bool:
    """JSON-RPC ids compare by type too: `true` does not answer id 1, nor `1.0` id 1."""
    return type(answered) is type(request_id) and answered == request_id
