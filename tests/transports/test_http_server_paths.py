"""The HTTP endpoint's less travelled request paths: a Content-Length that is not a number,
chunked bodies over the limit, clients that leave mid-exchange, GET in both eras, answers to
requests the server never sent, and requests to the client still pending when their session
ends or the server stops.

Each test runs the app under uvicorn on 127.0.0.1 (in this process, so the tools can report
what happened to them; or `mcpkit run --http` where the process itself must stop), talks to
it over httpx or a bare socket where the bytes matter, checks every message the server sends
against the schema of its era, and shows the server still answers a plain request afterwards.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import AsyncIterator, Callable
from typing import Any

import httpx
import orjson
import pytest
from helpers.transports.http_peer import FEATURES, Peer, ServerProcess, chunk, head, read_response
from helpers.transports.resume_peer import serving
from helpers.transports.resume_server import Gates
from helpers.wire import LEGACY, MODERN, check_server_message, meta

from mcpkit import Context, Server
from mcpkit.legacy.session import LegacyState
from mcpkit.protocol.http import SESSION
from mcpkit.store.legacy.events import MemoryEventStore
from mcpkit.transports.http_server.app import HTTPApp
from mcpkit.transports.http_server.options import HTTPOptions
from mcpkit.transports.legacy.sessions import MemorySessionStore

TIMEOUT = 10.0
"""Bound on every wait: a path that fails to answer fails the test instead of hanging it."""
LIMIT = 1000
"""The body limit of the app under test (HTTPOptions.max_body_bytes)."""


# -- the server under test ------------------------------------------------------------------------

def build(gates: Gates, rounds: list[dict[str, Any]]) -> Server:
    """A server whose tools tell the test what happened to them."""
    server = Server("paths-tests", "1.0.0")

    @server.tool()
    async def echo(text: str) -> str:
        """Answer at once."""
        return text

    @server.tool()
    async def hold(ctx: Context, stream: bool = False) -> str:
        """Open "entered" (after one progress report when `stream`), wait for "release";
        opens "cancelled" when it is cancelled on the way."""
        try:
            if stream:
                await ctx.report_progress(1, None, "holding")
            gates.open("entered")
            await gates.wait("release", timeout=60)
        except asyncio.CancelledError:
            gates.open("cancelled")
            raise
        return "released"

    @server.tool()
    async def confirm(action: str, ctx: Context) -> str:
        """Ask the user to confirm `action`; every round (each run of the handler) is kept in
        `rounds`, with the answer it got."""
        entry: dict[str, Any] = {"answered": None}
        rounds.append(entry)
        answer = await ctx.elicit("confirm", f"Really {action}?", {"sure": bool})
        entry["answered"] = answer.action
        return f"{action}: {answer.action}"

    return server


class Watch:
    """ASGI middleware between uvicorn and the app: notes each body message the app takes and
    each exchange the app finishes (with the exception it raised, if any), so a test can send
    the next piece of a body only once the app took the previous one."""

    def __init__(self, app: HTTPApp) -> None:
        self.app = app
        self.pieces: list[tuple[int, bool]] = []
        self.finished: list[BaseException | None] = []
        self._changed = asyncio.Event()

    async def __call__(self, scope: dict[str, Any], receive: Any, send: Any) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return

        async def taken() -> dict[str, Any]:
            message: dict[str, Any] = await receive()
            if message["type"] == "http.request":
                self.pieces.append((len(message.get("body", b"")),
                                    bool(message.get("more_body"))))
                self._changed.set()
            return message

        try:
            await self.app(scope, taken, send)
        except BaseException as exc:
            self.finished.append(exc)
            self._changed.set()
            raise
        self.finished.append(None)
        self._changed.set()

    def close(self) -> None:
        self.app.close()

    async def until(self, condition: Callable[[], bool]) -> None:
        """Wait (bounded) until `condition` holds."""
        async def wait() -> None:
            while not condition():
                self._changed.clear()
                await self._changed.wait()

        await asyncio.wait_for(wait(), TIMEOUT)


@contextlib.asynccontextmanager
async def running(app: HTTPApp) -> AsyncIterator[tuple[str, int, Watch, Any]]:
    """(url, port, watch, recorder) of `app` served on 127.0.0.1."""
    watch = Watch(app)
    async with serving(watch) as (url, recorder):
        port = int(url.rsplit(":", 1)[1].split("/", 1)[0])
        yield url, port, watch, recorder


@pytest.fixture
def rounds() -> list[dict[str, Any]]:
    return []


@pytest.fixture
def app(gates: Gates, rounds: list[dict[str, Any]]) -> HTTPApp:
    return HTTPApp(build(gates, rounds), HTTPOptions(max_body_bytes=LIMIT))


async def still_serving(url: str) -> None:
    """A plain modern tools/call on a fresh connection still gets its answer."""
    async with httpx.AsyncClient(timeout=TIMEOUT) as client:
        peer = Peer(url, client)
        reply = await peer.post(peer.request_message(
            "tools/call", {"name": "echo", "arguments": {"text": "still here"}}))
    assert reply.status == 200, reply.body
    assert reply.message["result"]["content"] == [{"type": "text", "text": "still here"}]


# -- bare sockets ---------------------------------------------------------------------------------

def refusal(body: bytes) -> dict[str, Any]:
    """The JSON-RPC error of a refusal: no id (the request was never read), code -32600."""
    message = orjson.loads(body)
    check_server_message(MODERN, message, None)
    assert "id" not in message and message["error"]["code"] == -32600, message
    error: dict[str, Any] = message["error"]
    return error


# -- Content-Length -------------------------------------------------------------------------------

async def test_a_non_numeric_content_length_is_refused_and_the_server_goes_on(
    app: HTTPApp
) -> None:
    async with running(app) as (url, port, watch, _):
        reader, writer = await asyncio.open_connection("127.0.0.1", port)
        try:
            writer.write(head(port, "Content-Length: abc", "Connection: close") + b"{}")
            await writer.drain()
            status, _, body = await read_response(reader)
        finally:
            writer.close()
        # uvicorn's parser refuses such a head itself, before the app is called.
        assert status == 400 and b"Invalid HTTP request" in body
        assert watch.finished == []
        await still_serving(url)


async def _asgi(app: HTTPApp, headers: list[tuple[bytes, bytes]], body: bytes
                ) -> tuple[int, dict[bytes, bytes], bytes]:
    """One POST handed to the app as an ASGI server hands it over: (status, headers, body)."""
    scope = {"type": "http", "method": "POST", "path": "/mcp", "headers": [
        (b"host", b"127.0.0.1"), (b"content-type", b"application/json"),
        (b"mcp-protocol-version", b"2026-07-28"), *headers]}
    incoming = [{"type": "http.request", "body": body, "more_body": False}]
    sent: list[dict[str, Any]] = []

    async def receive() -> dict[str, Any]:
        return incoming.pop(0) if incoming else {"type": "http.disconnect"}

    async def send(message: dict[str, Any]) -> None:
        sent.append(message)

    await asyncio.wait_for(app(scope, receive, send), TIMEOUT)
    start, *rest = sent
    assert start["type"] == "http.response.start"
    return start["status"], dict(start["headers"]), b"".join(m.get("body", b"") for m in rest)


@pytest.mark.parametrize("value", [b"abc", b"12abc", b"1.5", b"\xd9\xa3", b""])
async def test_an_asgi_server_that_passes_a_bad_content_length_through_gets_400(
    app: HTTPApp, value: bytes
) -> None:
    # uvicorn never lets such a value through (see above); other ASGI servers may, and the
    # app must still answer it clearly rather than fail.
    message = {"jsonrpc": "2.0", "id": 1, "method": "tools/list"}
    status, headers, body = await _asgi(app, [(b"content-length", value)], orjson.dumps(message))
    assert status == 400 and headers[b"content-type"] == b"application/json"
    shown = value.decode("latin-1")
    assert refusal(body)["message"] == f"Bad Request: Content-Length {shown!r} is not a number"


# -- chunked bodies over the limit ----------------------------------------------------------------

def _body_of(size: int) -> bytes:
    """A modern request of exactly `size` bytes (padded with a string member)."""
    base = orjson.dumps({"jsonrpc": "2.0", "id": 1, "method": "tools/list", "pad": ""})
    return base[:-2] + b"x" * (size - len(base)) + base[-2:]


async def test_a_chunked_body_that_grows_over_the_limit_is_refused_with_413(app: HTTPApp) -> None:
    body = _body_of(2 * 600)
    async with running(app) as (url, port, watch, _):
        reader, writer = await asyncio.open_connection("127.0.0.1", port)
        try:
            writer.write(head(port, "Transfer-Encoding: chunked") + chunk(body[:600]))
            await writer.drain()
            await watch.until(lambda: len(watch.pieces) == 1)
            writer.write(chunk(body[600:]))  # the end of the body is never sent
            await writer.drain()
            status, headers, answer = await read_response(reader)
        finally:
            writer.close()
        # Each piece alone is under the limit: the sum is what is refused.
        assert watch.pieces == [(600, True), (600, True)]
        assert status == 413 and headers["connection"] == "close"
        assert refusal(answer)["message"] == (
            f"Payload Too Large: the body has 1200 bytes or more; the limit is {LIMIT} bytes "
            "(HTTPOptions.max_body_bytes)")
        await still_serving(url)


async def test_a_first_piece_already_over_the_limit_is_refused_without_waiting_for_more(
    app: HTTPApp
) -> None:
    body = _body_of(1500)
    async with running(app) as (url, port, watch, _):
        reader, writer = await asyncio.open_connection("127.0.0.1", port)
        try:
            # One piece over the limit, and the body not ended: nothing more is coming until
            # the server answers.
            writer.write(head(port, "Transfer-Encoding: chunked") + chunk(body))
            await writer.drain()
            status, _, answer = await read_response(reader)
        finally:
            writer.close()
        assert status == 413
        assert sum(size for size, _ in watch.pieces) == 1500
        assert f"the limit is {LIMIT} bytes" in refusal(answer)["message"]
        await still_serving(url)


# -- clients that leave -------------------------------------------------------------------------

@pytest.mark.parametrize("stream", [False, True], ids=["json", "sse"])
async def test_a_client_that_disconnects_mid_call_cancels_its_handler(
    app: HTTPApp, gates: Gates, stream: bool
) -> None:
    message = {"jsonrpc": "2.0", "id": 7, "method": "tools/call", "params": {
        "name": "hold", "arguments": {"stream": stream},
        "_meta": {**meta(), "progressToken": "p"}}}
    data = orjson.dumps(message)
    async with running(app) as (url, port, watch, recorder):
        reader, writer = await asyncio.open_connection("127.0.0.1", port)
        writer.write(head(port, f"Content-Length: {len(data)}", "Mcp-Method: tools/call",
                          "Mcp-Name: hold", "Accept: application/json, text/event-stream")
                     + data)
        await writer.drain()
        await gates.wait("entered")
        if stream:
            assert (await asyncio.wait_for(reader.readline(), TIMEOUT)).startswith(
                b"HTTP/1.1 200")
        writer.close()
        await gates.wait("cancelled")
        await watch.until(lambda: len(watch.finished) == 1)
        assert watch.finished == [None]
        assert not gates.is_open("release")
        (exchange,) = recorder.exchanges
        if stream:  # the progress event went out, the response never did
            assert exchange.media == "text/event-stream"
            assert [e.message["method"] for e in exchange.events if e.message] == [
                "notifications/progress"]
        else:  # nothing at all was sent for it
            assert exchange.status == 0 and exchange.body == b""
        await still_serving(url)


@pytest.mark.parametrize("sent", [b"", b'{"jsonrpc": "2.0", "id": 1,'],
                         ids=["before-the-body", "mid-body"])
async def test_a_client_that_leaves_before_its_body_ends_gets_nothing_and_breaks_nothing(
    app: HTTPApp, sent: bytes
) -> None:
    async with running(app) as (url, port, watch, recorder):
        _, writer = await asyncio.open_connection("127.0.0.1", port)
        writer.write(head(port, "Content-Length: 200") + sent)
        await writer.drain()
        if sent:
            await watch.until(lambda: len(watch.pieces) == 1)
            assert watch.pieces == [(len(sent), True)]
        writer.close()
        await watch.until(lambda: len(watch.finished) == 1)
        assert watch.finished == [None]
        (exchange,) = recorder.exchanges
        assert exchange.status == 0, "an answer went out for a body that never arrived"
        await still_serving(url)


# -- GET ------------------------------------------------------------------------------------------

async def _legacy_peer(url: str, client: httpx.AsyncClient,
                       capabilities: dict[str, Any] | None = None) -> Peer:
    peer = Peer(url, client)
    await peer.initialize(capabilities)
    return peer


def _session_headers(peer: Peer, accept: str | None) -> dict[str, str]:
    headers = {"Mcp-Session-Id": peer.session or "", "MCP-Protocol-Version": LEGACY}
    if accept is not None:
        headers["Accept"] = accept
    return headers


@pytest.mark.parametrize("accept", ["application/json", "text/html, application/*",
                                    "text/event-stream;q=0"])
async def test_a_session_get_that_does_not_accept_an_event_stream_is_406(
    app: HTTPApp, accept: str
) -> None:
    async with running(app) as (url, _, _, _), httpx.AsyncClient(timeout=TIMEOUT) as client:
        peer = await _legacy_peer(url, client)
        refused = await client.get(url, headers=_session_headers(peer, accept))
        assert refused.status_code == 406
        assert refused.headers["content-type"] == "application/json"
        message = refused.json()
        check_server_message(LEGACY, message, None)
        assert message == {"jsonrpc": "2.0", "error": {"code": -32600, "message": (
            "Not Acceptable: the session stream is text/event-stream; add it to Accept")}}
        # The refusal kept nothing open: the session's one GET stream is still to be had (an
        # Accept-less GET accepts everything).
        async with client.stream("GET", url, headers=_session_headers(peer, None)) as opened:
            assert opened.status_code == 200
            assert opened.headers["content-type"] == "text/event-stream"
        assert (await peer.post(peer.request_message("ping", with_meta=False),
                                mirror=False)).message["result"] == {}
        await still_serving(url)


@pytest.mark.parametrize(("legacy", "session"), [(True, None), (False, None), (False, "s-1")],
                         ids=["dual-era", "modern-only", "modern-only-with-session-id"])
async def test_get_without_a_legacy_session_is_405_naming_what_is_allowed(
    gates: Gates, rounds: list[dict[str, Any]], legacy: bool, session: str | None
) -> None:
    app = HTTPApp(build(gates, rounds), HTTPOptions(legacy=legacy))
    headers = {"Accept": "text/event-stream", "MCP-Protocol-Version": MODERN}
    if session is not None:
        headers["Mcp-Session-Id"] = session
    async with running(app) as (url, _, _, _), httpx.AsyncClient(timeout=TIMEOUT) as client:
        response = await client.get(url, headers=headers)
        assert response.status_code == 405
        assert response.headers["allow"] == ("GET, POST, DELETE" if legacy else "POST")
        message = response.json()
        check_server_message(MODERN, message, None)
        expected = ("Method Not Allowed: GET on the MCP endpoint; 2026-07-28 clients POST "
                    "every message")
        if legacy:
            expected += (" (GET and DELETE need the Mcp-Session-Id of a 2025-11-25 session)")
        assert message == {"jsonrpc": "2.0", "error": {"code": -32600, "message": expected}}
        await still_serving(url)


async def test_get_for_a_session_that_does_not_exist_is_404(app: HTTPApp) -> None:
    async with running(app) as (url, _, _, _), httpx.AsyncClient(timeout=TIMEOUT) as client:
        response = await client.get(url, headers={
            "Accept": "text/event-stream", "Mcp-Session-Id": "no-such-session",
            "MCP-Protocol-Version": LEGACY})
        assert response.status_code == 404
        message = response.json()
        check_server_message(LEGACY, message, None)
        assert message["error"]["code"] == -32600
        assert "'no-such-session' ended or expired" in message["error"]["message"]
        await still_serving(url)


# -- answers to requests the server never sent ----------------------------------------------------

@pytest.mark.parametrize("answer", [
    {"result": {}},
    {"result": {"action": "accept", "content": {"sure": True}}},
    {"error": {"code": -32603, "message": "no such request here"}},
], ids=["empty-result", "elicit-result", "error"])
async def test_an_answer_to_an_id_the_server_never_sent_is_accepted_and_ignored(
    app: HTTPApp, caplog: pytest.LogCaptureFixture, answer: dict[str, Any]
) -> None:
    caplog.set_level(logging.WARNING, "mcpkit.transport")
    async with running(app) as (url, _, _, _), httpx.AsyncClient(timeout=TIMEOUT) as client:
        peer = await _legacy_peer(url, client)
        reply = await peer.post({"jsonrpc": "2.0", "id": "never-sent", **answer}, mirror=False)
        assert reply.status == 202 and reply.body == b""
        assert any(record.getMessage() == f"session {peer.session} answered an unknown "
                   "request id 'never-sent'" for record in caplog.records), caplog.text
        call = await peer.post(peer.request_message("tools/call", {
            "name": "echo", "arguments": {"text": "after"}}, with_meta=False), mirror=False)
        assert call.message["result"] == {"content": [{"type": "text", "text": "after"}]}
        await still_serving(url)


async def test_an_answer_from_another_session_does_not_reach_a_pending_request(
    app: HTTPApp, rounds: list[dict[str, Any]]
) -> None:
    async with running(app) as (url, _, _, _), \
            httpx.AsyncClient(timeout=TIMEOUT) as client, \
            httpx.AsyncClient(timeout=TIMEOUT) as other_client:
        asking = await _legacy_peer(url, client, {"elicitation": {}})
        other = await _legacy_peer(url, other_client, {"elicitation": {}})
        message = asking.request_message("tools/call", {
            "name": "confirm", "arguments": {"action": "deploy"}}, with_meta=False)
        async with asking.stream(message) as events:
            asked = await asyncio.wait_for(anext(events), TIMEOUT)
            assert asked["method"] == "elicitation/create"
            stray = {"jsonrpc": "2.0", "id": asked["id"], "result": {"action": "decline"}}
            assert (await other.post(stray, mirror=False)).status == 202
            right = {"jsonrpc": "2.0", "id": asked["id"], "result": {
                "action": "accept", "content": {"sure": True}}}
            answering = Peer(url, other_client)
            answering.revision, answering.session = asking.revision, asking.session
            assert (await answering.post(right, mirror=False)).status == 202
            final = await asyncio.wait_for(anext(events), TIMEOUT)
        assert final["id"] == message["id"]
        assert final["result"] == {"content": [{"type": "text", "text": "deploy: accept"}]}
        # The first round asked, the second got the answer of the session that was asked.
        assert rounds == [{"answered": None}, {"answered": "accept"}]
        # Answered once, the id is unknown again: a second answer is ignored like any other.
        assert (await answering.post(right, mirror=False)).status == 202
        await still_serving(url)


# -- requests to the client still pending when the session or the server goes -------------------

async def _asked(peer: Peer, events: AsyncIterator[dict[str, Any]]) -> dict[str, Any]:
    asked = await asyncio.wait_for(anext(events), TIMEOUT)
    assert asked["method"] == "elicitation/create" and "id" in asked
    return asked


async def test_deleting_a_session_ends_a_request_waiting_for_the_client(
    app: HTTPApp, rounds: list[dict[str, Any]]
) -> None:
    async with running(app) as (url, _, _, recorder), \
            httpx.AsyncClient(timeout=TIMEOUT) as client:
        peer = await _legacy_peer(url, client, {"elicitation": {}})
        message = peer.request_message("tools/call", {
            "name": "confirm", "arguments": {"action": "drop"}}, with_meta=False)
        async with peer.stream(message) as events:
            asked = await _asked(peer, events)
            async with httpx.AsyncClient(timeout=TIMEOUT) as other:
                deleted = await other.delete(url, headers=_session_headers(peer, None))
                assert deleted.status_code == 200
                # The stream ends without a response: the session it belonged to is gone.
                rest = await asyncio.wait_for(_all(events), TIMEOUT)
                assert rest == []
                late = {"jsonrpc": "2.0", "id": asked["id"], "result": {
                    "action": "accept", "content": {"sure": True}}}
                answering = Peer(url, other)
                answering.revision, answering.session = peer.revision, peer.session
                assert (await answering.post(late, mirror=False)).status == 404
        # The handler asked once and never ran again with an answer.
        assert rounds == [{"answered": None}]
        post = [r for r in recorder.exchanges if r.method == "POST" and r.events]
        assert post[-1].complete
        assert not app._routes[SESSION].sessions._live  # type: ignore[attr-defined]
        await still_serving(url)


async def _all(events: AsyncIterator[dict[str, Any]]) -> list[dict[str, Any]]:
    return [event async for event in events]


CUT_SHORT = ("tools/call: no answer to elicitation/create from the client: the server is "
             "shutting down")


@pytest.mark.parametrize(("options", "close", "reason"), [
    ({}, True, CUT_SHORT),
    ({"peer_timeout_s": 0.01}, False,
     "tools/call: the client did not answer elicitation/create within 0.01 s"),
], ids=["server-closing", "client-silent"])
async def test_a_request_to_the_client_that_will_not_be_answered_fails_naming_why(
    gates: Gates, rounds: list[dict[str, Any]], options: dict[str, Any], close: bool,
    reason: str
) -> None:
    app = HTTPApp(build(gates, rounds), HTTPOptions(**options))
    async with running(app) as (url, _, _, _), httpx.AsyncClient(timeout=TIMEOUT) as client:
        peer = await _legacy_peer(url, client, {"elicitation": {}})
        message = peer.request_message("tools/call", {
            "name": "confirm", "arguments": {"action": "ship"}}, with_meta=False)
        async with peer.stream(message) as events:
            await _asked(peer, events)
            if close:
                app.close()  # what the lifespan shutdown and `run_http` call
            final = await asyncio.wait_for(anext(events), TIMEOUT)
        assert final["id"] == message["id"]
        # Legacy handler errors travel with 200, on the stream the request went out on.
        assert final["error"] == {"code": -32603, "message": reason}
        assert rounds == [{"answered": None}]
        if not close:
            await still_serving(url)


async def test_a_request_to_a_client_that_takes_no_event_stream_fails_naming_why(
    app: HTTPApp, rounds: list[dict[str, Any]]
) -> None:
    async with running(app) as (url, _, _, _), httpx.AsyncClient(timeout=TIMEOUT) as client:
        peer = await _legacy_peer(url, client, {"elicitation": {}})
        message = peer.request_message("tools/call", {
            "name": "confirm", "arguments": {"action": "ship"}}, with_meta=False)
        reply = await peer.post(message, {"Accept": "application/json"}, mirror=False)
        assert reply.status == 200 and reply.media == "application/json"
        assert reply.message["id"] == message["id"]
        assert reply.error == {"code": -32603, "message": (
            "tools/call: cannot send elicitation/create to the client: its Accept header does "
            "not include text/event-stream")}
        assert rounds == [{"answered": None}]
        await still_serving(url)


async def test_a_server_stopping_answers_a_request_waiting_for_the_client() -> None:
    server = ServerProcess.start(FEATURES)
    try:
        async with httpx.AsyncClient(timeout=TIMEOUT) as client:
            peer = await _legacy_peer(server.url, client, {"elicitation": {}})
            message = peer.request_message("tools/call", {
                "name": "confirm", "arguments": {"action": "deploy"}}, with_meta=False)
            async with peer.stream(message) as events:
                await _asked(peer, events)
                server.proc.terminate()
                final = await asyncio.wait_for(anext(events), TIMEOUT)
            assert final["id"] == message["id"]
            assert final["error"] == {"code": -32603, "message": CUT_SHORT}
        await asyncio.to_thread(server.proc.wait, TIMEOUT)
    finally:
        server.stop()


# -- a request to the client that cannot be answered is an expected outcome, logged as one ------

@pytest.mark.parametrize(("options", "how"), [
    ({}, "server-closing"),
    ({"peer_timeout_s": 0.01}, "client-silent"),
    ({}, "no-event-stream"),
], ids=["server-closing", "client-silent", "no-event-stream"])
async def test_a_request_to_the_client_that_cannot_be_answered_is_logged_without_a_traceback(
    gates: Gates, rounds: list[dict[str, Any]], caplog: pytest.LogCaptureFixture,
    options: dict[str, Any], how: str
) -> None:
    caplog.set_level(logging.DEBUG, "mcpkit")
    app = HTTPApp(build(gates, rounds), HTTPOptions(**options))
    async with running(app) as (url, _, watch, _), httpx.AsyncClient(timeout=TIMEOUT) as client:
        peer = await _legacy_peer(url, client, {"elicitation": {}})
        message = peer.request_message("tools/call", {
            "name": "confirm", "arguments": {"action": "ship"}}, with_meta=False)
        if how == "no-event-stream":
            reply = await peer.post(message, {"Accept": "application/json"}, mirror=False)
            error = reply.error
        else:
            async with peer.stream(message) as events:
                await _asked(peer, events)
                if how == "server-closing":
                    app.close()
                error = (await asyncio.wait_for(anext(events), TIMEOUT))["error"]
        assert error["code"] == -32603
        await watch.until(lambda: len(watch.finished) >= 2)
    # One line naming the request and the reason, at warning; no traceback for any of it.
    lines = [r for r in caplog.records if r.getMessage() == error["message"]]
    assert [(r.name, r.levelname, r.exc_info) for r in lines] == [
        ("mcpkit.server", "WARNING", None)], caplog.text
    assert not [r for r in caplog.records if r.exc_info], caplog.text
    assert "Traceback" not in caplog.text


# -- what still fails unexpectedly is answered at the edge, never a 500 -------------------------

class FailingStore(MemorySessionStore):
    """Sessions in memory, with one step that fails once when armed, as a shared store does
    when its backend cannot be reached."""

    def __init__(self) -> None:
        super().__init__()
        self.armed: str | None = None

    def _step(self, step: str) -> None:
        if self.armed == step:
            self.armed = None
            raise RuntimeError(f"the session store cannot be reached ({step})")

    async def load(self, session_id: str) -> LegacyState | None:
        self._step("load")
        return await super().load(session_id)

    async def save(self, session_id: str, state: LegacyState) -> None:
        self._step("save")
        await super().save(session_id, state)

    async def delete(self, session_id: str) -> bool:
        self._step("delete")
        return await super().delete(session_id)


class FailingEvents(MemoryEventStore):
    """Legacy stream events in memory; when armed, keeping a stream's last event fails once."""

    def __init__(self) -> None:
        super().__init__()
        self.armed = False

    async def append(self, session_id: str, stream_id: str, data: bytes, *,
                     final: bool = False) -> str:
        if final and self.armed:
            self.armed = False
            raise RuntimeError("the event store cannot be reached")
        return await super().append(session_id, stream_id, data, final=final)


def _one_traceback(caplog: pytest.LogCaptureFixture, what: str) -> None:
    """The failure was logged once, with its traceback, naming what was being handled."""
    logged = [r for r in caplog.records if r.exc_info]
    assert [(r.name, r.levelname) for r in logged] == [("mcpkit.transport", "ERROR")], caplog.text
    assert what in logged[0].getMessage()
    assert "cannot be reached" in caplog.text


@pytest.fixture
def store() -> FailingStore:
    return FailingStore()


@pytest.fixture
def failing_app(gates: Gates, rounds: list[dict[str, Any]], store: FailingStore) -> HTTPApp:
    return HTTPApp(build(gates, rounds), HTTPOptions(session_store=store,
                                                     event_store=FailingEvents()))


async def _session_goes_on(url: str, peer: Peer, watch: Watch) -> None:
    """No exception reached the ASGI server, and the session serves its next request."""
    assert all(outcome is None for outcome in watch.finished), watch.finished
    ping = await peer.post(peer.request_message("ping", with_meta=False), mirror=False)
    assert ping.status == 200 and ping.message["result"] == {}
    await still_serving(url)


@pytest.mark.parametrize(("step", "message", "error", "what"), [
    pytest.param("load", {"id": 50, "method": "tools/call", "params": {
        "name": "echo", "arguments": {"text": "hi"}}},
        "Internal error while serving tools/call", "tools/call (id 50)", id="request-load"),
    pytest.param("save", {"id": 50, "method": "logging/setLevel", "params": {"level": "info"}},
                 "Internal error while serving logging/setLevel", "logging/setLevel (id 50)",
                 id="request-save"),
    pytest.param("save", {"method": "notifications/initialized"}, None,
                 "notifications/initialized", id="notification-save"),
    pytest.param("load", {"method": "notifications/cancelled", "params": {"requestId": 3}},
                 None, "notifications/cancelled", id="notification-load"),
    pytest.param("load", {"id": "never-sent", "result": {}}, None, "a response",
                 id="response-load"),
])
async def test_a_legacy_post_that_fails_unexpectedly_is_answered_and_the_session_goes_on(
    failing_app: HTTPApp, store: FailingStore, caplog: pytest.LogCaptureFixture, step: str,
    message: dict[str, Any], error: str | None, what: str
) -> None:
    caplog.set_level(logging.WARNING, "mcpkit")
    async with running(failing_app) as (url, _, watch, _), \
            httpx.AsyncClient(timeout=TIMEOUT) as client:
        peer = await _legacy_peer(url, client)
        store.armed = step
        reply = await peer.post({"jsonrpc": "2.0", **message}, mirror=False)
        assert store.armed is None, "the step meant to fail was never reached"
        if error is None:  # a notification or a response: no reply is due
            assert (reply.status, reply.body) == (202, b"")
        else:  # a request: its error, with 200 like every legacy request's error
            assert reply.status == 200 and reply.media == "application/json"
            assert reply.message == {"jsonrpc": "2.0", "id": 50, "error": {
                "code": -32603, "message": error}}
        _one_traceback(caplog, f"a 2025-11-25 POST of {what}")
        await _session_goes_on(url, peer, watch)


@pytest.mark.parametrize(("http_method", "step"), [("GET", "load"), ("DELETE", "delete")])
async def test_a_session_get_or_delete_that_fails_unexpectedly_is_a_json_rpc_error(
    failing_app: HTTPApp, store: FailingStore, caplog: pytest.LogCaptureFixture,
    http_method: str, step: str
) -> None:
    caplog.set_level(logging.WARNING, "mcpkit")
    async with running(failing_app) as (url, _, watch, _), \
            httpx.AsyncClient(timeout=TIMEOUT) as client:
        peer = await _legacy_peer(url, client)
        store.armed = step
        response = await client.request(http_method, url, headers=_session_headers(
            peer, "text/event-stream"))
        assert store.armed is None
        # No JSON-RPC message to answer: the status says the server failed, the body what.
        assert response.status_code == 500
        assert response.headers["content-type"] == "application/json"
        body = response.json()
        check_server_message(LEGACY, body, None)
        assert body == {"jsonrpc": "2.0", "error": {"code": -32603, "message": (
            f"Internal error while handling a 2025-11-25 session {http_method}")}}
        _one_traceback(caplog, f"a 2025-11-25 session {http_method}")
        await _session_goes_on(url, peer, watch)


async def test_a_legacy_stream_whose_last_event_fails_ends_with_an_error_for_its_request(
    failing_app: HTTPApp, gates: Gates, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.WARNING, "mcpkit")
    events_store = failing_app._routes[SESSION].sessions.events  # type: ignore[attr-defined]
    assert isinstance(events_store, FailingEvents)
    async with running(failing_app) as (url, _, watch, recorder), \
            httpx.AsyncClient(timeout=TIMEOUT) as client:
        peer = await _legacy_peer(url, client)
        message = peer.request_message("tools/call", {
            "name": "hold", "arguments": {"stream": True}, "_meta": {"progressToken": "h"}},
            with_meta=False)
        async with peer.stream(message) as events:
            progress = await asyncio.wait_for(anext(events), TIMEOUT)
            assert progress["method"] == "notifications/progress"
            events_store.armed = True
            gates.open("release")
            # The stream had begun: its last event is the request's error, and it ends there.
            final = await asyncio.wait_for(anext(events), TIMEOUT)
            assert final == {"jsonrpc": "2.0", "id": message["id"], "error": {
                "code": -32603, "message": "Internal error while serving tools/call"}}
            assert await asyncio.wait_for(_all(events), TIMEOUT) == []
        assert not events_store.armed
        # Nothing of the request was left behind for the session: no stream a GET could try to
        # resume (one whose end was never kept would be resumed again and again), no exchange.
        assert failing_app._routes[SESSION].sessions._live == {}  # type: ignore[attr-defined]
        _one_traceback(caplog, f"a 2025-11-25 POST of tools/call (id {message['id']})")
        await _session_goes_on(url, peer, watch)
        # The store that failed kept no id for that last event, so it went out without one
        # (the message itself was checked above); every other event had its id.
        assert [f.split(": Event(")[0] for f in recorder.failures] == [
            "POST a 2025-11-25 message went out without an event id"], recorder.failures
        recorder.failures.clear()
