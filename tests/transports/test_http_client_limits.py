"""`HTTPClientTransport`'s limits and failure paths: an SSE event or a JSON body over
`max_message_bytes`, a 2xx reply that is not JSON-RPC, a legacy stream whose resume is refused
or brings nothing, and a notification that meets a network error or an ended session.

No correct server misbehaves like this, so most peers are a scripted ASGI app on a real uvicorn
(tests/helpers/transports/servers/hostile_http.py); the ended session is a real `mcpkit run --http` process. Every POST
the client sends is schema-checked (`checked_transport`), and so is every message the scripted
peer sends that is meant to be valid.
"""

from __future__ import annotations

import asyncio
import itertools
import logging
from collections.abc import AsyncIterator
from typing import Any

import httpx
import orjson
import pytest
from helpers.transports.http_peer import ServerProcess, checked_transport, meta
from helpers.transports.servers.hostile_http import (
    SESSION,
    Exchange,
    HostilePeer,
    Reply,
    result,
    serving,
)
from helpers.wire import LEGACY, MODERN, check_server_message

from mcpkit.errors import TransportError
from mcpkit.transports.http_client.streams import BlockSize
from mcpkit.transports.http_client.transport import HTTPClientTransport, SessionExpiredError

LIMIT = 64 * 1024
"""The clients' `max_message_bytes` here: small, so a flood is refused early."""
BUDGET = 32 * 1024 * 1024
"""What a flooding peer writes at most: far more than LIMIT plus every socket buffer between
the two, so a client that hangs up at its limit is seen doing so before the budget is spent."""

EVENTS = 100
"""Events of about 1 KiB a peer sends before it floods: together more than LIMIT."""

KEEP_ALIVE = b": keep-alive\n\n"
"""A comment block, as servers send to keep a quiet stream open."""

_ids = itertools.count(1)


def call(tool: str, revision: str = MODERN, **arguments: Any) -> dict[str, Any]:
    """A tools/call request of `revision` (the transport checks it against the schema)."""
    params: dict[str, Any] = {"name": tool, "arguments": arguments}
    if revision == MODERN:
        params["_meta"] = meta()
    return {"jsonrpc": "2.0", "id": next(_ids), "method": "tools/call", "params": params}


async def echo(exchange: Exchange, reply: Reply) -> bool:
    """Answer the `echo` tool (what proves a client still works); False for anything else."""
    if exchange.tool != "echo":
        return False
    await reply.json(result(exchange.message["id"], exchange.message["params"]["arguments"]
                            ["text"], reply.revision), answers="tools/call")
    return True


async def still_works(transport: HTTPClientTransport, revision: str = MODERN) -> None:
    response = await transport.request(call("echo", revision, text="still here"))
    check_server_message(revision, response, "tools/call")
    assert response["result"]["content"][0]["text"] == "still here"


@pytest.fixture
async def limited() -> AsyncIterator[HTTPClientTransport]:
    """A modern client whose limit is LIMIT (its URL is set by each test)."""
    transport = checked_transport("http://127.0.0.1:1/unset", max_message_bytes=LIMIT)
    yield transport
    await transport.close()


# -- max_message_bytes -------------------------------------------------------------------------

async def test_an_sse_event_over_the_limit_is_refused_and_the_client_hangs_up(
    limited: HTTPClientTransport
) -> None:
    async def script(exchange: Exchange, reply: Reply) -> None:
        if await echo(exchange, reply):
            return
        await reply.open_stream()
        for step in range(1, EVENTS + 1):  # more than LIMIT in all, each event far below it
            await reply.event({"jsonrpc": "2.0", "method": "notifications/progress", "params": {
                "progressToken": "flood", "progress": step, "message": "y" * 1000}})
        # One event that never ends: data lines, and no blank line after them.
        await reply.flood(b"data: " + b"x" * 1017 + b"\n", BUDGET)
        await reply.end()

    seen: list[dict[str, Any]] = []

    async def on_notification(message: dict[str, Any]) -> None:
        seen.append(message)

    peer = HostilePeer(script)
    async with serving(peer) as url:
        limited.url = url
        with pytest.raises(TransportError) as info:
            await limited.request(call("flood"), on_notification=on_notification)
        assert str(info.value) == (
            f"tools/call: an SSE event is larger than {LIMIT} bytes (max_message_bytes)")
        assert type(info.value) is TransportError
        assert [m["params"]["progress"] for m in seen] == list(range(1, EVENTS + 1))
        await still_works(limited)
    flood = peer.calls()[0]
    assert flood.hung_up and flood.sent < BUDGET  # the client stopped reading: memory bounded


async def test_a_json_body_over_the_limit_is_refused_and_the_client_hangs_up(
    limited: HTTPClientTransport
) -> None:
    async def script(exchange: Exchange, reply: Reply) -> None:
        if await echo(exchange, reply):
            return
        # A valid response, only too large: its shape is checked with a short text.
        reply_to = exchange.message["id"]
        check_server_message(MODERN, result(reply_to, "x" * 16), "tools/call")
        head, _, tail = orjson.dumps(result(reply_to, "@")).partition(b"@")
        await reply.start(200, "application/json")
        await reply.write(head)
        await reply.flood(b"x" * 65536, BUDGET)
        await reply.write(tail)  # a client without a limit gets the whole response
        await reply.end()

    peer = HostilePeer(script)
    async with serving(peer) as url:
        limited.url = url
        with pytest.raises(TransportError) as info:
            await limited.request(call("big"))
        assert str(info.value) == (
            f"tools/call: the response is larger than {LIMIT} bytes (max_message_bytes)")
        await still_works(limited)
    big = peer.calls()[0]
    assert big.hung_up and big.sent < BUDGET


async def test_keep_alive_comments_are_no_event_and_never_reach_the_limit(
    limited: HTTPClientTransport
) -> None:
    async def script(exchange: Exchange, reply: Reply) -> None:
        await reply.open_stream()
        for _ in range(2 * LIMIT // len(KEEP_ALIVE)):  # twice the limit in all
            await reply.write(KEEP_ALIVE)
        await reply.write(b": a comment line inside an event\n")
        await reply.event(result(exchange.message["id"], "after a long wait"),
                          answers="tools/call")
        await reply.end()

    async with serving(HostilePeer(script)) as url:
        limited.url = url
        response = await limited.request(call("slow"))
    assert response["result"]["content"][0]["text"] == "after a long wait"


def test_a_blank_line_split_between_two_chunks_still_ends_the_block() -> None:
    block = BlockSize()
    assert block.add(b"data: " + b"x" * 100 + b"\n") == 107
    assert block.add(b"\n") == 0  # the blank line's second half
    assert block.add(b": kept alive\r\n\r") == 15
    assert block.add(b"\n") == 0
    assert block.add(b"data: y") == 7 and block.add(b"y\n") == 9


# -- a 2xx reply that is not JSON-RPC ----------------------------------------------------------

NOT_JSONRPC = {
    "html": (200, "text/html", b"<html><body>Welcome</body></html>", "got HTTP 200 text/html"),
    "no content type": (200, None, b'{"jsonrpc": "2.0"}', "got HTTP 200 without a content type"),
    "garbage JSON": (200, "application/json", b'{"jsonrpc": "2.0", "id": ',
                     "got HTTP 200 application/json that is not JSON"),
    "a JSON list": (200, "application/json", b"[1, 2, 3]",
                    "got HTTP 200 JSON that is not a JSON-RPC response"),
    "a JSON number": (200, "application/json", b"42",
                      "got HTTP 200 JSON that is not a JSON-RPC response"),
    "a notification": (200, "application/json",
                       b'{"jsonrpc": "2.0", "method": "notifications/message", "params": '
                       b'{"level": "info", "data": "hello"}}',
                       "got HTTP 200 JSON that is not a JSON-RPC response"),
    "another id": (200, "application/json",
                   orjson.dumps(result(987654, "for someone else")),
                   "got HTTP 200 with the response to id 987654"),
    "a true id": (200, "application/json", orjson.dumps(result(True, "not a number")),
                  "got HTTP 200 with the response to id True"),
    "202 and no body": (202, None, b"", "got HTTP 202 without a body"),
}


@pytest.mark.parametrize("case", list(NOT_JSONRPC), ids=list(NOT_JSONRPC))
async def test_a_2xx_reply_that_is_not_a_jsonrpc_response_is_a_clear_error(
    case: str, limited: HTTPClientTransport
) -> None:
    status, media, body, expected = NOT_JSONRPC[case]

    async def script(exchange: Exchange, reply: Reply) -> None:
        if not await echo(exchange, reply):
            await reply.raw(body, status=status, media=media)

    async with serving(HostilePeer(script)) as url:
        limited.url = url
        message = {**call("odd"), "id": 1}  # the id a `true` could be mistaken for
        with pytest.raises(TransportError) as info:
            await limited.request(message)
        assert type(info.value) is TransportError
        assert str(info.value) == (
            f"tools/call (id {message['id']!r}): expected a JSON-RPC response, {expected}")
        await still_works(limited)


async def test_on_a_stream_only_the_response_with_the_requests_own_id_answers_it(
    limited: HTTPClientTransport
) -> None:
    async def script(exchange: Exchange, reply: Reply) -> None:
        request_id = exchange.message["id"]
        await reply.open_stream()
        for other in (request_id + 1, True, float(request_id)):  # never this request's answer
            await reply.write(b"data: " + orjson.dumps(result(other, "not yours")) + b"\n\n")
        await reply.event(result(request_id, "yours"), answers="tools/call")
        await reply.end()

    async with serving(HostilePeer(script)) as url:
        limited.url = url
        message = call("mixed")
        response = await limited.request(message)
    assert response["id"] == message["id"]
    assert response["result"]["content"][0]["text"] == "yours"


# -- legacy: a stream cut before its response, and the resumes that follow --------------------

CUT_AFTER = "s.2"
"""The last event id of every cut stream here (resumes must carry it as Last-Event-ID)."""


def initialize() -> dict[str, Any]:
    return {"jsonrpc": "2.0", "id": next(_ids), "method": "initialize", "params": {
        "protocolVersion": LEGACY, "capabilities": {},
        "clientInfo": {"name": "limits-tests", "version": "1.0"}}}


async def open_session(transport: HTTPClientTransport) -> None:
    """The legacy handshake: initialize, then notifications/initialized."""
    response = await transport.request(initialize())
    assert response["result"]["protocolVersion"] == LEGACY
    assert transport.era == "legacy"
    await transport.notify({"jsonrpc": "2.0", "method": "notifications/initialized"})


async def cut_stream(exchange: Exchange, reply: Reply) -> None:
    """A POST stream that primes (retry 0: resume at once), reports progress, and is cut."""
    await reply.open_stream()
    await reply.event(event_id="s.1", retry=0)
    await reply.event({"jsonrpc": "2.0", "method": "notifications/progress", "params": {
        "progressToken": "p", "progress": 1}}, event_id=CUT_AFTER)
    await reply.end()


def resumes_of(peer: HostilePeer) -> list[Exchange]:
    """The GETs the client sent, each checked to be a resume of this session's cut stream."""
    gets = peer.gets()
    for get in gets:
        assert get.headers["mcp-session-id"] == SESSION
        assert get.headers["mcp-protocol-version"] == LEGACY
        assert get.headers["accept"] == "text/event-stream"
    return gets


@pytest.fixture
def legacy(limited: HTTPClientTransport) -> HTTPClientTransport:
    """The same client, named for the tests that make it legacy (`open_session`)."""
    return limited


REFUSED = {
    "400": (400, "text/plain", "got HTTP 400"),
    "410": (410, "application/json", "got HTTP 410"),
    "500": (500, "text/plain", "got HTTP 500"),
    "503": (503, None, "got HTTP 503"),
    "200 but JSON": (200, "application/json",
                     "got HTTP 200 application/json, not an event stream"),
    "200 and no type": (200, None, "got HTTP 200 without a content type, not an event stream"),
}


@pytest.mark.parametrize("case", list(REFUSED), ids=list(REFUSED))
async def test_a_refused_resume_loses_the_request_once_and_keeps_the_session(
    case: str, legacy: HTTPClientTransport
) -> None:
    status, media, expected = REFUSED[case]

    async def script(exchange: Exchange, reply: Reply) -> None:
        if await echo(exchange, reply):
            return
        if exchange.method == "POST":
            await cut_stream(exchange, reply)
        else:
            await reply.raw(b'{"detail": "no such stream"}', status=status, media=media)

    peer = HostilePeer(script, legacy=True)
    async with serving(peer) as url:
        legacy.url = url
        await open_session(legacy)
        with pytest.raises(TransportError) as info:
            await legacy.request(call("slow", LEGACY), retries=3)
        assert type(info.value) is TransportError
        assert str(info.value) == (
            f"tools/call: resuming the response stream after event {CUT_AFTER!r} {expected}; "
            "the request is lost")
        assert [g.headers["last-event-id"] for g in resumes_of(peer)] == [CUT_AFTER]
        assert len(peer.calls()) == 1  # a refused resume is not a broken stream: no re-send
        assert legacy.session_id == SESSION
        await still_works(legacy, LEGACY)


async def test_a_resume_answered_404_ends_the_session(legacy: HTTPClientTransport) -> None:
    async def script(exchange: Exchange, reply: Reply) -> None:
        if exchange.method == "POST":
            await cut_stream(exchange, reply)
        else:
            await reply.raw(b"session not found", status=404, media="text/plain")

    peer = HostilePeer(script, legacy=True)
    async with serving(peer) as url:
        legacy.url = url
        await open_session(legacy)
        with pytest.raises(SessionExpiredError) as info:
            await legacy.request(call("slow", LEGACY))
        assert info.value.status_code == 404 and info.value.body == b"session not found"
        assert str(info.value) == (
            f"tools/call: resuming the response stream after event {CUT_AFTER!r}: the legacy "
            "session ended; initialize again: HTTP 404: session not found")
        assert legacy.session_id is None  # LEG-13: the next initialize goes without the old id
        assert len(resumes_of(peer)) == 1


async def test_five_fruitless_resumes_in_a_row_give_the_request_up(
    legacy: HTTPClientTransport
) -> None:
    async def script(exchange: Exchange, reply: Reply) -> None:
        if exchange.method == "POST":
            await cut_stream(exchange, reply)
            return
        await reply.open_stream()
        if len(peer.gets()) > 5:  # a client that kept going would be answered here
            await reply.event(result(peer.calls()[0].message["id"], "too late", LEGACY),
                              event_id="s.3", answers="tools/call")
        elif len(peer.gets()) % 2:
            await reply.write(b": nothing new\n\n")
        else:
            await reply.event(event_id=CUT_AFTER, retry=0)  # the same id again: no progress
        await reply.end()

    peer = HostilePeer(script, legacy=True)
    async with serving(peer) as url:
        legacy.url = url
        await open_session(legacy)
        with pytest.raises(TransportError) as info:
            await legacy.request(call("slow", LEGACY))
    assert str(info.value) == (
        "tools/call: the response stream ended before the response; the request is lost "
        "(re-send it with a new id, or pass retries=)")
    assert [g.headers["last-event-id"] for g in resumes_of(peer)] == [CUT_AFTER] * 5


async def test_a_resume_that_brings_a_new_event_starts_the_count_again(
    legacy: HTTPClientTransport
) -> None:
    async def script(exchange: Exchange, reply: Reply) -> None:
        if exchange.method == "POST":
            await cut_stream(exchange, reply)
            return
        await reply.open_stream()
        resume = len(peer.gets())
        if resume == 5:
            await reply.event({"jsonrpc": "2.0", "method": "notifications/progress", "params": {
                "progressToken": "p", "progress": 2}}, event_id="s.3")
        elif resume == 10:
            await reply.event(result(peer.calls()[0].message["id"], "done", LEGACY),
                              event_id="s.4", answers="tools/call")
        await reply.end()

    progress: list[Any] = []

    async def on_notification(message: dict[str, Any]) -> None:
        progress.append(message["params"]["progress"])

    peer = HostilePeer(script, legacy=True)
    async with serving(peer) as url:
        legacy.url = url
        await open_session(legacy)
        response = await legacy.request(call("slow", LEGACY), on_notification=on_notification)
    assert response["result"]["content"][0]["text"] == "done"
    assert progress == [1, 2]
    assert [g.headers["last-event-id"] for g in resumes_of(peer)] == [CUT_AFTER] * 5 + ["s.3"] * 5


async def test_a_session_stream_event_over_the_limit_closes_that_stream_only(
    legacy: HTTPClientTransport, caplog: pytest.LogCaptureFixture
) -> None:
    async def script(exchange: Exchange, reply: Reply) -> None:
        if await echo(exchange, reply):
            return
        assert exchange.method == "GET" and "last-event-id" not in exchange.headers
        await reply.open_stream()
        for _ in range(2 * LIMIT // len(KEEP_ALIVE)):  # no event: never near the limit
            await reply.write(KEEP_ALIVE)
        await reply.event(event_id="g.1", retry=0)
        for n in range(EVENTS):  # more than LIMIT in all, each event far below it
            await reply.event({"jsonrpc": "2.0", "method": "notifications/message", "params": {
                "level": "info", "data": "y" * 1000}}, event_id=f"g.{n + 2}")
        await reply.flood(b"data: " + b"x" * 1017 + b"\n", BUDGET)
        await reply.end()

    logged: list[dict[str, Any]] = []

    async def on_notification(message: dict[str, Any]) -> None:
        logged.append(message)

    legacy.set_notification_handler(on_notification)
    peer = HostilePeer(script, legacy=True)
    with caplog.at_level(logging.WARNING, logger="mcpkit.client"):
        async with serving(peer) as url:
            legacy.url = url
            await open_session(legacy)
            stream = legacy._incoming.stream
            assert stream is not None
            await asyncio.wait_for(asyncio.shield(stream), 30)
            assert not legacy.session_stream_open.is_set()
            assert [m["params"]["data"] for m in logged] == ["y" * 1000] * EVENTS
            await still_works(legacy, LEGACY)
    assert (f"the session stream sent an SSE event larger than {LIMIT} bytes "
            "(max_message_bytes); it is closed") in caplog.text
    flood = resumes_of(peer)[0]
    assert flood.hung_up and flood.sent < BUDGET


# -- notifications: a network error, and the session's end ----------------------------------------

async def test_a_notification_that_cannot_reach_the_server_is_a_transport_error(
    legacy: HTTPClientTransport
) -> None:
    async def script(exchange: Exchange, reply: Reply) -> None:
        raise AssertionError("nothing but the handshake reaches this peer")

    peer = HostilePeer(script, legacy=True)
    async with serving(peer) as url:
        legacy.url = url
        await open_session(legacy)
    # The server is gone: its port refuses connections.
    cancel = {"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": 7}}
    with pytest.raises(TransportError) as info:
        await legacy.notify(cancel)
    assert type(info.value) is TransportError
    assert str(info.value).startswith("notifications/cancelled: cannot connect (")
    answer = {"jsonrpc": "2.0", "id": "s-1", "result": {}}  # an answer to a server request
    with pytest.raises(TransportError, match=r"^response: cannot connect \("):
        await legacy.notify(answer)
    assert legacy.session_id == SESSION  # a network error is not the session's end
    assert [e.rpc_method for e in peer.exchanges] == ["initialize", "notifications/initialized"]


async def test_a_notification_answered_404_ends_the_session_and_initialize_starts_anew(
    features: ServerProcess
) -> None:
    transport = checked_transport(features.url)
    sent: list[httpx.Request] = []

    async def record(request: httpx.Request) -> None:
        sent.append(request)

    transport._client.event_hooks["request"].append(record)

    async def on_notification(message: dict[str, Any]) -> None:
        check_server_message(LEGACY, message, None)

    transport.set_notification_handler(on_notification)
    try:
        await open_session(transport)
        await asyncio.wait_for(transport.session_stream_open.wait(), 10)
        old = transport.session_id
        assert old is not None
        async with httpx.AsyncClient() as other:  # the session is ended behind its back
            ended = await other.delete(features.url, headers={
                "Mcp-Session-Id": old, "MCP-Protocol-Version": LEGACY})
            assert ended.status_code in (200, 202, 204), ended.text
        note = {"jsonrpc": "2.0", "method": "notifications/roots/list_changed"}
        with pytest.raises(SessionExpiredError) as info:
            await transport.notify(note)
        assert info.value.status_code == 404
        assert str(info.value).startswith("the legacy session ended: HTTP 404")
        assert sent[-1].headers["mcp-session-id"] == old and orjson.loads(sent[-1].content) == note
        assert transport.session_id is None and transport._incoming.stream is None
        # LEG-13: a new initialize, without the old id, opens a new session.
        await open_session(transport)
        assert transport.session_id not in (None, old)
        again = next(r for r in reversed(sent) if r.method == "POST"
                     and orjson.loads(r.content).get("method") == "initialize")
        assert "mcp-session-id" not in again.headers
        await still_works(transport, LEGACY)
    finally:
        await transport.close()
