"""The inspector's web app: plain ASGI on uvicorn, two origins on 127.0.0.1.

The page's origin (`http://127.0.0.1:PORT/TOKEN/`) serves the static page, the event stream
(`events`, Server-Sent Events) and the actions (`api/NAME`, a JSON POST each). The sandbox
origin (another port, another token) serves only what MCP App views need: the proxy frame of a
prepared view (`view/ID`, with the view's Content Security Policy) and its relay script. Which
origin a request reached is the port of the socket it came in on; every request is judged by
that origin's `Guard` first, and a refusal is a plain-text line saying why.

The event stream replays what the page missed (the `Last-Event-ID` its EventSource sends on a
reconnection), then follows; a comment line every `HEARTBEAT` seconds lets a dead connection
be noticed. A closed page ends its stream: nothing else depends on it.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
from collections.abc import Awaitable, Callable, MutableMapping
from typing import Any, Final

import orjson

from mcpkit.dev.actions import Actions
from mcpkit.dev.assets import SANDBOX, file_table, frame_headers, page_headers, sandbox_frame
from mcpkit.dev.events import EventHub
from mcpkit.dev.guard import Allowed, Guard, verdict
from mcpkit.dev.views import Views
from mcpkit.protocol.framing import sse_event

__all__ = [
    "HEARTBEAT",
    "MAX_BODY",
    "DevApp",
]

HEARTBEAT: Final = 15.0
"""Seconds between keep-alive comments on an idle event stream."""
MAX_BODY: Final = 8 * 1024 * 1024
"""The largest action body read (a tool's arguments, an answer)."""

Scope = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[MutableMapping[str, Any]]]
Send = Callable[[MutableMapping[str, Any]], Awaitable[None]]


async def _answer(send: Send, status: int, body: bytes,
                  headers: list[tuple[bytes, bytes]]) -> None:
    await send({"type": "http.response.start", "status": status, "headers": headers})
    await send({"type": "http.response.body", "body": body})


async def _text(send: Send, status: int, text: str) -> None:
    await _answer(send, status, text.encode(), [
        (b"content-type", b"text/plain; charset=utf-8"), (b"x-content-type-options", b"nosniff"),
        (b"cache-control", b"no-store")])


def _encoded(event: dict[str, Any]) -> bytes:
    """An event as JSON; one orjson cannot write (an integer past 64 bits a server sent) is
    written by the standard library instead of ending the stream."""
    try:
        return orjson.dumps(event, default=str)
    except TypeError:
        return json.dumps(event, default=str, separators=(",", ":")).encode()


class DevApp:
    def __init__(self, hub: EventHub, actions: Actions, views: Views, page: Guard,
                 sandbox: Guard) -> None:
        self.hub = hub
        self.actions = actions
        self.views = views
        self.page = page
        self.sandbox = sandbox

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            if scope["type"] == "websocket":
                await send({"type": "websocket.close", "code": 1008})
            return
        server = scope.get("server") or (None, None)
        guard = self.sandbox if server[1] == self.sandbox.port else self.page
        method = scope["method"]
        judged = verdict(guard, method, scope.get("path", ""), scope.get("headers", []))
        if not isinstance(judged, Allowed):
            await _text(send, judged.status, judged.reason)
            return
        if guard is self.sandbox:
            await self._sandbox(judged.path, send)
        elif judged.path == "events" and method == "GET":
            await self._events(scope, receive, send)
        elif judged.path.startswith("api/") and method == "POST":
            await self._action(judged.path[4:], receive, send)
        else:
            await self._static(judged.path, send)

    async def _static(self, path: str, send: Send) -> None:
        found = file_table().get(path)
        if found is None or path.startswith(f"{SANDBOX}/"):
            await _text(send, 404, f"no page file {path!r}")
            return
        body, kind = found
        await _answer(send, 200, body, page_headers(kind, self.sandbox.origin))

    async def _sandbox(self, path: str, send: Send) -> None:
        if path == "relay.js":
            body, kind = file_table()[f"{SANDBOX}/relay.js"]
            await _answer(send, 200, body, [(b"content-type", kind.encode()),
                                            (b"x-content-type-options", b"nosniff")])
            return
        view = self.views.get(path.removeprefix("view/")) if path.startswith("view/") else None
        if view is None:
            await _text(send, 404, "no such view (views are prepared by the inspector's page)")
            return
        await _answer(send, 200, sandbox_frame(self.page.origin, view.allow),
                      frame_headers(view.policy, self.page.origin))

    async def _action(self, name: str, receive: Receive, send: Send) -> None:
        body = bytearray()
        while True:
            message = await receive()
            if message["type"] == "http.disconnect":
                return
            body += message.get("body", b"")
            if len(body) > MAX_BODY:
                await _text(send, 413, f"an action body is at most {MAX_BODY} bytes")
                return
            if not message.get("more_body"):
                break
        try:
            params = orjson.loads(body) if body else {}
        except orjson.JSONDecodeError as exc:
            await _text(send, 400, f"the body is not JSON: {exc}")
            return
        if not isinstance(params, dict):
            await _text(send, 400, "the body is a JSON object")
            return
        status, answer = await self.actions.run(name, params)
        await _answer(send, status, _encoded(answer), [
            (b"content-type", b"application/json"), (b"cache-control", b"no-store"),
            (b"x-content-type-options", b"nosniff")])

    async def _events(self, scope: Scope, receive: Receive, send: Send) -> None:
        after = 0
        for name, value in scope.get("headers", []):
            if name == b"last-event-id" and value.isdigit():
                after = int(value)
        await send({"type": "http.response.start", "status": 200, "headers": [
            (b"content-type", b"text/event-stream"), (b"cache-control", b"no-store"),
            (b"x-content-type-options", b"nosniff")]})

        async def stream() -> None:
            async with self.hub.subscribed(after) as queue:
                while True:
                    try:
                        event = await asyncio.wait_for(queue.get(), HEARTBEAT)
                    except TimeoutError:
                        await send({"type": "http.response.body", "body": b": alive\n\n",
                                    "more_body": True})
                        continue
                    if event is None:
                        return
                    data = _encoded(event)
                    frame = f"id: {event['seq']}\n".encode() + sse_event(data)
                    await send({"type": "http.response.body", "body": frame, "more_body": True})

        async def gone() -> None:
            while (await receive())["type"] != "http.disconnect":
                pass

        streaming = asyncio.ensure_future(stream())
        watching = asyncio.ensure_future(gone())
        try:
            await asyncio.wait({streaming, watching}, return_when=asyncio.FIRST_COMPLETED)
        finally:
            for task in (streaming, watching):
                task.cancel()
            for task in (streaming, watching):
                with contextlib.suppress(BaseException):
                    await task
        with contextlib.suppress(Exception):
            await send({"type": "http.response.body", "body": b"", "more_body": False})
