"""The HTTP client and redirects: a 307 or 308 within the origin is followed with the method,
body and headers kept, and the final URL is used from then on; a 301/302/303, a redirect to
another origin, one without a Location and a loop are refused naming the status and the
Location. Served by a real uvicorn on 127.0.0.1 (a Starlette app: the server mounted, and
routes that redirect), in both eras; the rule itself is checked without I/O at the end."""

from __future__ import annotations

import asyncio
import socket
from collections.abc import AsyncIterator
from typing import Any

import httpx
import orjson
import pytest
import uvicorn
from helpers.transports.http_peer import checked_transport, meta
from helpers.wire import MODERN, check_server_message
from starlette.applications import Starlette
from starlette.responses import Response
from starlette.routing import Mount, Route

from mcpkit import Client, ClientOptions, Server
from mcpkit.errors import HTTPStatusError
from mcpkit.protocol.http_redirects import MAX_REDIRECTS, next_hop, origin_of

Scope = dict[str, Any]


class Recorder:
    """Passes every request on to the mounted server, noting the method, path, body and
    session id of each as they reached it."""

    def __init__(self, app: Any) -> None:
        self.app = app
        self.seen: list[tuple[str, str, bytes, str | None]] = []

    async def __call__(self, scope: Scope, receive: Any, send: Any) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        chunks: list[bytes] = []
        more = True
        while more:
            message = await receive()
            chunks.append(message.get("body", b""))
            more = message.get("more_body", False)
        headers = dict(scope["headers"])
        session = headers.get(b"mcp-session-id")
        self.seen.append((scope["method"], scope["path"], b"".join(chunks),
                          session.decode() if session else None))
        replayed = False

        async def again() -> dict[str, Any]:
            nonlocal replayed
            if not replayed:
                replayed = True
                return {"type": "http.request", "body": b"".join(chunks), "more_body": False}
            return await receive()

        await self.app(scope, again, send)


def make_server() -> Server:
    server = Server("redirected", "1.0.0")

    @server.tool()
    async def echo(text: str) -> str:
        """Return the text."""
        return text

    return server


class Site:
    def __init__(self, url: str, recorder: Recorder, hits: dict[str, int]) -> None:
        self.url = url
        self.recorder = recorder
        self.hits = hits


def redirect(status: int, location: str, hits: dict[str, int]) -> Any:
    async def answer(request: Any) -> Response:
        hits[request.url.path] = hits.get(request.url.path, 0) + 1
        target = location.format(port=request.url.port)
        return Response(status_code=status, headers={"location": target})

    return answer


@pytest.fixture
async def site() -> AsyncIterator[Site]:
    recorder = Recorder(make_server().asgi())
    hits: dict[str, int] = {}
    methods = ["GET", "POST", "DELETE"]
    app = Starlette(routes=[
        Route("/moved", redirect(308, "/mcp/", hits), methods=methods),
        Route("/temporary", redirect(307, "/mcp/", hits), methods=methods),
        Route("/absolute", redirect(307, "http://127.0.0.1:{port}/mcp/", hits), methods=methods),
        Route("/found", redirect(302, "/mcp/", hits), methods=methods),
        Route("/see-other", redirect(303, "/mcp/", hits), methods=methods),
        Route("/permanent", redirect(301, "/mcp/", hits), methods=methods),
        Route("/elsewhere", redirect(307, "http://localhost:{port}/mcp/", hits),
              methods=methods),
        Route("/tls", redirect(308, "https://127.0.0.1:{port}/mcp/", hits), methods=methods),
        Route("/nowhere", redirect(307, "", hits), methods=methods),
        Route("/loop", redirect(307, "/loop", hits), methods=methods),
        Mount("/mcp", recorder),
    ])
    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    sock.listen()
    runner = uvicorn.Server(uvicorn.Config(app, log_level="error", lifespan="off"))
    task = asyncio.create_task(runner.serve(sockets=[sock]))
    yield Site(f"http://127.0.0.1:{sock.getsockname()[1]}", recorder, hits)
    runner.should_exit = True
    await asyncio.wait_for(task, 10)
    sock.close()


def call(text: str, request_id: int = 1) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "id": request_id, "method": "tools/call",
            "params": {"name": "echo", "arguments": {"text": text}, "_meta": meta()}}


# -- followed -----------------------------------------------------------------------------------

@pytest.mark.parametrize("path", ["/mcp", "/moved", "/temporary", "/absolute"],
                         ids=["starlette-mount-307", "308", "307", "307-absolute"])
async def test_a_redirect_within_the_origin_is_followed_keeping_method_and_body(
    site: Site, path: str
) -> None:
    transport = checked_transport(site.url + path, check_server=True)
    try:
        message = call("kept")
        reply = await transport.request(message)
        check_server_message(MODERN, reply, "tools/call")
        assert reply["result"]["content"] == [{"type": "text", "text": "kept"}]
        # The server behind the redirect saw the POST, its body byte for byte.
        ((method, where, body, _),) = site.recorder.seen
        assert (method, where) == ("POST", "/mcp/")
        assert orjson.loads(body) == message
        # Later requests go to the final URL directly: the redirect is not asked again.
        assert transport.url == site.url + "/mcp/"
        await transport.request(call("again", 2))
        assert [w for _, w, _, _ in site.recorder.seen] == ["/mcp/", "/mcp/"]
        assert sum(site.hits.values()) == (0 if path == "/mcp" else 1)
    finally:
        await transport.close()


async def test_a_legacy_session_behind_a_redirect_keeps_its_id_on_every_request(
    site: Site
) -> None:
    async with Client(checked_transport(site.url + "/mcp", check_server=True),
                      options=ClientOptions(era="legacy")) as client:
        assert client.era == "legacy"
        result = await client.call_tool("echo", {"text": "legacy"})
        assert result["content"] == [{"type": "text", "text": "legacy"}]
        transport = client.transport
        assert transport is not None
        session = getattr(transport, "session_id", None)
        assert session is not None
        await asyncio.wait_for(transport.session_stream_open.wait(), 10)  # type: ignore[attr-defined]
    seen = site.recorder.seen
    assert [(m, w) for m, w, _, _ in seen if m != "POST"] == [("GET", "/mcp/"), ("DELETE", "/mcp/")]
    assert {w for _, w, _, _ in seen} == {"/mcp/"}
    initialize, *later = seen
    assert orjson.loads(initialize[2])["method"] == "initialize"
    assert later and all(sid == session for _, _, _, sid in later)


# -- refused ------------------------------------------------------------------------------------

@pytest.mark.parametrize(("path", "status", "why"), [
    ("/found", 302, "only a 307 or 308 keeps the POST and its body"),
    ("/see-other", 303, "only a 307 or 308 keeps the POST and its body"),
    ("/permanent", 301, "only a 307 or 308 keeps the POST and its body"),
    ("/elsewhere", 307, "it leaves the origin the client was given"),
    ("/tls", 308, "it leaves the origin the client was given"),
], ids=["302", "303", "301", "another-host", "another-scheme"])
async def test_a_redirect_that_would_lose_the_body_or_leave_the_origin_is_refused(
    site: Site, path: str, status: int, why: str
) -> None:
    transport = checked_transport(site.url + path)
    try:
        with pytest.raises(HTTPStatusError) as caught:
            await transport.request(call("lost"))
    finally:
        await transport.close()
    assert caught.value.status_code == status
    text = str(caught.value)
    target = {"/elsewhere": f"http://localhost:{site.url.rsplit(':', 1)[1]}/mcp/",
              "/tls": f"https://127.0.0.1:{site.url.rsplit(':', 1)[1]}/mcp/"}.get(
        path, site.url + "/mcp/")
    assert text.startswith(f"tools/call was redirected from {site.url}{path} to {target}, "
                           f"not followed: {why}"), text
    assert text.endswith(f"HTTP {status}")
    assert site.recorder.seen == []  # nothing reached the server
    assert transport.url == site.url + path


async def test_a_redirect_without_a_location_is_refused_saying_so(site: Site) -> None:
    transport = checked_transport(site.url + "/nowhere")
    try:
        with pytest.raises(HTTPStatusError, match=r"redirected from \S+/nowhere with no "
                           r"Location header: HTTP 307"):
            await transport.request(call("lost"))
    finally:
        await transport.close()


async def test_a_redirect_loop_is_given_up_after_a_bounded_number_of_hops(site: Site) -> None:
    transport = checked_transport(site.url + "/loop")
    try:
        with pytest.raises(HTTPStatusError, match=rf"{MAX_REDIRECTS} redirects in a row"):
            await transport.request(call("lost"))
    finally:
        await transport.close()
    assert site.hits["/loop"] == MAX_REDIRECTS + 1


async def test_the_client_reports_a_refused_redirect_instead_of_guessing_the_era(
    site: Site
) -> None:
    # With the era left to the probe, a redirect is not mistaken for a legacy server.
    with pytest.raises(HTTPStatusError, match=r"redirected .* HTTP 302"):
        async with Client(checked_transport(site.url + "/found")) as client:
            await client.list_tools()
    assert site.recorder.seen == []


async def test_a_shared_client_that_follows_redirects_itself_still_keeps_the_post(
    site: Site
) -> None:
    # httpx would turn the POST into a GET on a 302; the transport follows redirects itself.
    async with httpx.AsyncClient(follow_redirects=True) as shared:
        transport = checked_transport(site.url + "/found", client=shared)
        with pytest.raises(HTTPStatusError, match="HTTP 302"):
            await transport.request(call("lost"))
        await transport.close()
    assert site.recorder.seen == []


# -- the rule, without I/O ---------------------------------------------------------------------

@pytest.mark.parametrize(("url", "status", "location", "expected"), [
    ("http://a:8000/mcp", 307, "/mcp/", "http://a:8000/mcp/"),
    ("http://a:8000/mcp", 308, "mcp/", "http://a:8000/mcp/"),
    ("http://a/mcp", 307, "http://a:80/x", "http://a:80/x"),
    ("https://a/mcp", 308, "https://A:443/x", "https://A:443/x"),
    ("http://a:8000/mcp", 307, "  /x  ", "http://a:8000/x"),
])
def test_the_redirects_followed_stay_in_the_origin(
    url: str, status: int, location: str, expected: str
) -> None:
    assert next_hop(url, status, location, 0) == (expected, None)


@pytest.mark.parametrize(("status", "location", "hops", "why"), [
    (302, "/x", 0, "only a 307 or 308"),
    (300, "/x", 0, "only a 307 or 308"),
    (307, "http://b:8000/x", 0, "leaves the origin"),
    (307, "http://a:8001/x", 0, "leaves the origin"),
    (307, "https://a:8000/x", 0, "leaves the origin"),
    (307, "http://a:port/x", 0, "leaves the origin"),
    (307, None, 0, "no Location header"),
    (308, " ", 0, "no Location header"),
    (307, "/x", MAX_REDIRECTS, "redirects in a row"),
])
def test_the_redirects_refused_say_why(
    status: int, location: str | None, hops: int, why: str
) -> None:
    hop = next_hop("http://a:8000/mcp", status, location, hops)
    assert hop.url is None and hop.refusal is not None and why in hop.refusal


def test_an_origin_makes_the_default_port_explicit() -> None:
    assert origin_of("HTTP://Example.com/x") == ("http", "example.com", 80)
    assert origin_of("https://example.com:443/") == ("https", "example.com", 443)
