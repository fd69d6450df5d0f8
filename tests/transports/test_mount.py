"""`server.asgi()` mounted in Starlette and FastAPI the ways people write it, served by a real
uvicorn on 127.0.0.1 and driven by mcpkit's Client pinned to each era, every message checked
against the schema of its era; and shutting it down from the application's lifespan."""

from __future__ import annotations

import asyncio
import socket
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from typing import Any

import httpx
import pytest
import uvicorn
from fastapi import FastAPI
from helpers.transports.http_peer import checked_transport
from starlette.applications import Starlette
from starlette.routing import Mount, Route

from mcpkit import Client, ClientOptions, Server
from mcpkit.transports.http_server.app import HTTPApp

ERAS = ["modern", "legacy"]


def make_server() -> Server:
    server = Server("mounted", "1.0.0")

    @server.tool()
    async def shout(text: str) -> str:
        """Upper-case the text."""
        return text.upper()

    return server


class Served:
    """One framework application on a real uvicorn, and what its lifespan did."""

    def __init__(self, url: str, runner: uvicorn.Server, mcp: HTTPApp) -> None:
        self.url = url
        self.runner = runner
        self.mcp = mcp


def starlette_app(mcp: HTTPApp, lifespan: Any) -> Any:
    # Route serves /mcp itself; Mount serves /mounted/ (and /mounted by a 307 to it).
    return Starlette(routes=[Route("/mcp", mcp), Mount("/mounted", mcp)], lifespan=lifespan)


def fastapi_app(mcp: HTTPApp, lifespan: Any) -> Any:
    app = FastAPI(lifespan=lifespan)
    app.add_route("/mcp", mcp)
    app.mount("/mounted", mcp)
    return app


FRAMEWORKS: dict[str, Callable[[HTTPApp, Any], Any]] = {
    "starlette": starlette_app, "fastapi": fastapi_app}


@asynccontextmanager
async def serving(app: Any, mcp: HTTPApp) -> AsyncIterator[Served]:
    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    sock.listen()
    runner = uvicorn.Server(uvicorn.Config(app, log_level="error", lifespan="on"))
    task = asyncio.create_task(runner.serve(sockets=[sock]))
    served = Served(f"http://127.0.0.1:{sock.getsockname()[1]}", runner, mcp)
    try:
        await asyncio.wait_for(started(runner), 10)
        yield served
    finally:
        runner.should_exit = True
        await asyncio.wait_for(task, 10)
        sock.close()


async def started(runner: uvicorn.Server) -> None:
    while not runner.started:
        await asyncio.sleep(0.01)


@pytest.fixture(params=list(FRAMEWORKS))
async def site(request: pytest.FixtureRequest) -> AsyncIterator[Served]:
    mcp = make_server().asgi()
    async with serving(FRAMEWORKS[request.param](mcp, mcp.lifespan), mcp) as served:
        yield served


@pytest.mark.parametrize("era", ERAS)
@pytest.mark.parametrize("path", ["/mcp", "/mounted/", "/mounted"],
                         ids=["route", "mount", "mount-redirected"])
async def test_a_mounted_server_answers_the_client_in_both_eras(
    site: Served, era: str, path: str
) -> None:
    transport = checked_transport(site.url + path, check_server=True)
    async with Client(transport, options=ClientOptions(era=era)) as client:  # type: ignore[arg-type]
        assert client.era == era
        tools = await client.list_tools()
        assert [t["name"] for t in tools] == ["shout"]
        result = await client.call_tool("shout", {"text": "hi"})
        assert result["content"] == [{"type": "text", "text": "HI"}]
        # Starlette's Mount answers /mounted with a 307 to /mounted/; the client stays there.
        assert transport.url == site.url + ("/mounted/" if path.startswith("/mounted") else path)


async def test_the_ready_lifespan_closes_the_server_when_the_application_stops() -> None:
    mcp = make_server().asgi()
    async with serving(starlette_app(mcp, mcp.lifespan), mcp) as served:
        async with Client(checked_transport(served.url + "/mcp", check_server=True)) as client:
            await client.call_tool("shout", {"text": "x"})
        assert not mcp.closed
    assert mcp.closed
    assert not served.runner.lifespan.shutdown_failed  # type: ignore[attr-defined]


@pytest.mark.parametrize("framework", list(FRAMEWORKS))
@pytest.mark.parametrize("form", ["await close()", "await aclose()", "async with", "lifespan"])
async def test_an_application_lifespan_of_its_own_closes_the_server(
    framework: str, form: str
) -> None:
    mcp = make_server().asgi()
    events: list[str] = []

    @asynccontextmanager
    async def lifespan(app: Any) -> AsyncIterator[None]:
        events.append("started")
        if form == "async with":
            async with mcp:
                yield
        elif form == "lifespan":
            async with mcp.lifespan(app):
                yield
        else:
            yield
            await (mcp.close() if form == "await close()" else mcp.aclose())
        events.append("stopped")

    async with serving(FRAMEWORKS[framework](mcp, lifespan), mcp) as served, \
            httpx.AsyncClient() as http:
        assert (await http.get(served.url + "/mcp")).status_code == 405  # served, no stream
    assert events == ["started", "stopped"]
    assert mcp.closed
    assert not served.runner.lifespan.shutdown_failed  # type: ignore[attr-defined]


async def test_closing_ends_a_listen_stream_with_its_result_and_may_be_repeated() -> None:
    server = make_server()
    mcp = server.asgi()
    async with serving(starlette_app(mcp, mcp.lifespan), mcp) as served, Client(
            checked_transport(served.url + "/mcp", check_server=True),
            options=ClientOptions(era="modern")) as client:
        async with client.listen(tools=True) as stream:
            await mcp.close()
            await mcp.close()  # again: nothing more happens, nothing fails
            mcp.close()  # and from plain code
            assert [event async for event in stream] == []
        assert mcp.closed


async def test_a_path_set_inside_a_mount_is_the_path_below_it() -> None:
    mcp = make_server().asgi(path="/")
    async with serving(Starlette(routes=[Mount("/tenant", mcp)]), mcp) as served:
        transport = checked_transport(served.url + "/tenant/", check_server=True)
        async with Client(transport, options=ClientOptions(era="modern")) as client:
            assert [t["name"] for t in await client.list_tools()] == ["shout"]
        async with httpx.AsyncClient() as http:
            other = await http.post(served.url + "/tenant/other", content=b"{}",
                                    headers={"content-type": "application/json"})
        assert other.status_code == 404


async def test_a_legacy_session_works_when_mounted_without_lifespan_events() -> None:
    # Starlette delivers no lifespan to a mounted app: nothing of it may need starting.
    server = make_server()
    mcp = server.asgi()
    async with serving(Starlette(routes=[Mount("/m", mcp)]), mcp) as served:
        transport = checked_transport(served.url + "/m/", check_server=True)
        async with Client(transport, options=ClientOptions(era="legacy")) as client:
            await asyncio.wait_for(transport.session_stream_open.wait(), 10)
            def late() -> str:
                """Added later."""
                return "new"

            server.add_tool(late)
            assert "late" in [t["name"] for t in await client.list_tools()]
