"""Every JSON-RPC message of the inspected connection, both ways, as the wire pane shows it.

Messages come from the transport's tap (`StdioServer(tap=)`, `HTTPConnector(tap=)`): each one
as it was written or read, the server's own requests and their answers included. Over HTTP,
httpx's event hooks add what only the HTTP layer knows: the status of the POST that carried a
message, the headers it went with (the mirrored `Mcp-*` ones among them) and the curl command
that sends it again. A hook's request is matched to its message by its body, the same bytes
the transport encoded; a request with no JSON-RPC body (the legacy session's GET stream, its
DELETE, a request to an authorization server) is shown as an HTTP entry of its own, with its
method, address and status only: a body that is not a message is never shown (a token request
carries secrets).

Each entry: `seq`, `at` (ms since the epoch), `dir` (`out`: to the server, `in`: from it),
`kind` (request, response, error, notification, http), `id`, `method` (for a response, the
method it answers), `took` (ms from its request), `message` (a message past `SHOWN_BYTES` is
cut to its first `SHOWN_BYTES`, marked so), `meaning` (an error's code explained), `copy` (the
`mcpkit` line of a request) and, over HTTP, `http`.
"""

from __future__ import annotations

import time
from collections import OrderedDict
from collections.abc import Callable, Mapping
from typing import Any, Final
from urllib.parse import urlsplit

from mcpkit.dev.copies import SECRET_HEADERS, curl_line, mcpkit_line
from mcpkit.dev.events import EventHub
from mcpkit.dev.meanings import meaning
from mcpkit.protocol.codec import encode
from mcpkit.types.methods import Method

__all__ = [
    "OPENING",
    "SHOWN_BYTES",
    "Opening",
    "WireLog",
]

SHOWN_BYTES: Final = 256 * 1024
"""The largest message shown whole; a bigger one is cut (its size said)."""
_PENDING: Final = 1000
"""Requests remembered for matching their answers (the oldest is forgotten first)."""
_BODIES: Final = 200
"""Recent outgoing messages an HTTP hook may still match by body."""
_LEFT_OUT: Final = frozenset({"host", "content-length", "accept-encoding", "connection",
                              "user-agent"})
OPENING: Final = frozenset({Method.DISCOVER, Method.INITIALIZE})
"""The requests that decide a connection's era: their exchanges are the era's evidence."""

Opening = dict[str, Any]
"""One opening exchange: `sent`, `response` (None until it comes), HTTP `status`."""


def _shown_headers(headers: Any) -> dict[str, str]:
    out: dict[str, str] = {}
    for name, value in headers.items():
        name = name.lower()
        if name in _LEFT_OUT:
            continue
        out[name] = "(hidden)" if name in SECRET_HEADERS else value
    return out


def _kind(message: Mapping[str, Any]) -> str:
    if "method" in message:
        return "request" if "id" in message else "notification"
    return "error" if "error" in message else "response"


class WireLog:
    """Turns the taps and hooks of one inspector run into wire entries on the event hub."""

    def __init__(self, hub: EventHub, server: str, *,
                 clock: Callable[[], float] = time.time) -> None:
        self.hub = hub
        self.server = server
        """The SERVER argument the `mcpkit` lines name."""
        self._clock = clock
        self._seq = 0
        self._requests: OrderedDict[tuple[str, Any], dict[str, Any]] = OrderedDict()
        self._bodies: OrderedDict[bytes, dict[str, Any]] = OrderedDict()
        self._by_request: dict[int, dict[str, Any]] = {}
        self.openings: list[Opening] = []
        """Every opening exchange, in order (a reconnection adds its own)."""

    # -- the tap --------------------------------------------------------------------------

    def tap(self, direction: str, message: dict[str, Any]) -> None:
        """A transport's tap: `("send" | "receive", message)`."""
        out = direction == "send"
        kind = _kind(message)
        ident = message.get("id")
        entry: dict[str, Any] = {"at": self._clock() * 1000, "dir": "out" if out else "in",
                                 "kind": kind, "id": ident, "method": message.get("method")}
        body = encode(message)
        entry["message"] = message if len(body) <= SHOWN_BYTES else {
            "truncated": True, "bytes": len(body),
            "text": body[:SHOWN_BYTES].decode("utf-8", "replace")}
        # A request and its answer travel opposite ways: ours are answered "in", the
        # server's "out".
        mine = ("out" if out else "in", ident)
        theirs = ("in" if out else "out", ident)
        if kind == "request":
            remembered = {**entry, "sent": message}
            if out and message.get("method") in OPENING:
                remembered["opening"] = opening = {"sent": message, "response": None,
                                                   "status": None}
                self.openings.append(opening)
            self._remember(mine, remembered)
            if out:
                entry["copy"] = mcpkit_line(self.server, message)
        elif kind in ("response", "error"):
            asked = self._requests.pop(theirs, None)
            if asked is not None:
                entry["method"] = asked["method"]
                entry["took"] = round(entry["at"] - asked["at"], 1)
                if asked.get("http"):
                    entry["http"] = {"status": asked["http"].get("status"),
                                     "reply": asked["http"].get("reply")}
                if "opening" in asked:
                    asked["opening"]["response"] = message
                    asked["opening"]["status"] = (asked.get("http") or {}).get("status")
        if kind == "error":
            error = message.get("error")
            entry["meaning"] = meaning(error.get("code") if isinstance(error, dict) else None)
        published = self._publish(entry)
        if out:
            self._bodies[body] = published
            while len(self._bodies) > _BODIES:
                self._bodies.popitem(last=False)

    def _remember(self, key: tuple[str, Any], entry: dict[str, Any]) -> None:
        self._requests[key] = entry
        while len(self._requests) > _PENDING:
            self._requests.popitem(last=False)

    def _publish(self, entry: dict[str, Any]) -> dict[str, Any]:
        self._seq += 1
        entry["n"] = self._seq
        self.hub.publish("wire", entry)
        return entry

    # -- httpx event hooks ------------------------------------------------------------------

    def hooks(self) -> dict[str, list[Any]]:
        """`httpx_options={"event_hooks": log.hooks()}` for the HTTP transport."""
        return {"request": [self._on_request], "response": [self._on_response]}

    async def _on_request(self, request: Any) -> None:
        headers = _shown_headers(request.headers)
        body = request.content if request.method == "POST" else b""
        entry = self._bodies.get(body) if body else None
        http = {"method": request.method, "url": str(request.url), "headers": headers}
        if entry is None:
            parts = urlsplit(str(request.url))
            entry = self._publish({
                "at": self._clock() * 1000, "dir": "out", "kind": "http", "id": None,
                "method": None, "message": None,
                "http": {**http, "url": f"{parts.scheme}://{parts.netloc}{parts.path}"}})
        else:
            http["curl"] = curl_line(str(request.url), dict(request.headers), body)
            entry["http"] = http
            pending = self._requests.get(("out", entry.get("id")))
            if pending is not None and entry.get("kind") == "request":
                pending["http"] = http
            self.hub.publish("wire.http", {"n": entry["n"], "http": http})
        self._by_request[id(request)] = entry
        while len(self._by_request) > _PENDING:  # requests that never got an answer
            del self._by_request[next(iter(self._by_request))]

    async def _on_response(self, response: Any) -> None:
        entry = self._by_request.pop(id(response.request), None)
        if entry is None:
            return
        http = dict(entry.get("http") or {})
        http["status"] = response.status_code
        http["reply"] = _shown_headers(response.headers)
        entry["http"] = http
        pending = self._requests.get(("out", entry.get("id")))
        if pending is not None and entry.get("kind") == "request":
            pending["http"] = http
        self.hub.publish("wire.http", {"n": entry["n"], "http": http})

