"""The calendar's week view, rendered for real: headless Chromium loads a minimal host page
(host.html, served on 127.0.0.1 by the test), which renders the view in an iframe sandboxed to
scripts alone and delivers a real `create_event` result from the calendar example served by
`mcpkit run --http`; what the view shows is read back from its DOM.

The host's server side is an mcpkit Client that declares MCP Apps, every message it sends and
receives checked against the official schema. The view's own `tools/call` (the app-only
`week_events`, which fills in the rest of the week) goes through the host page to that Client.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import socket
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
from helpers.client.schema_tap import ROOT, SchemaTap, TappedConnector
from helpers.devtools import launched
from helpers.transports.http_peer import ServerProcess

from mcpkit.client import Client, ClientOptions
from mcpkit.ext.apps import APPS, MIME_TYPE

CALENDAR = str(ROOT / "examples" / "calendar" / "server.py")
HOST_PAGE = Path(__file__).with_name("host.html")
WEEK_VIEW = "ui://calendar/week"
SHOWN = """
new Promise((resolve) => {
  let left = 400;
  const look = () => {
    const status = document.getElementById("status");
    const settled = status !== null && (document.body.dataset.filled === "true" ||
                                        status.classList.contains("error"));
    if (!settled && --left > 0) { setTimeout(look, 50); return; }
    resolve({
      status: status && status.textContent,
      error: Boolean(status && status.classList.contains("error")),
      heading: (document.getElementById("heading") || {}).textContent,
      days: [...document.querySelectorAll("section.day")].map((day) => ({
        date: day.dataset.date,
        label: day.querySelector("h2").textContent,
        events: [...day.querySelectorAll("article.event")].map((card) => ({
          title: card.querySelector(".title").textContent,
          time: card.querySelector("time").textContent,
          created: card.classList.contains("created"),
        })),
      })),
    });
  };
  look();
})
"""


@pytest.fixture
def calendar_url(tmp_path: Path) -> Any:
    server = ServerProcess.start(CALENDAR, env={"CALENDAR_DB": str(tmp_path / "cal.sqlite3")})
    yield server.url
    server.stop()


@pytest.fixture
async def host_client(calendar_url: str) -> AsyncIterator[Client]:
    """The host's own MCP client: it declares MCP Apps with the view mime type."""
    from mcpkit.transports.http_client.transport import HTTPConnector

    tap = SchemaTap()
    options = ClientOptions(extensions={APPS: {"mimeTypes": [MIME_TYPE]}})
    client = Client(TappedConnector(HTTPConnector(calendar_url), tap), options=options)
    yield client
    await client.close()
    tap.assert_clean()


@contextlib.asynccontextmanager
async def hosting(session: dict[str, Any], client: Client,
                  calls: list[dict[str, Any]]) -> AsyncIterator[str]:
    """The host page on a free loopback port (real uvicorn), `session` written into it; its
    POST /call runs a tools/call through `client` and answers the CallToolResult."""
    import uvicorn
    from starlette.applications import Starlette
    from starlette.requests import Request
    from starlette.responses import HTMLResponse, JSONResponse
    from starlette.routing import Route

    embedded = json.dumps(session).replace("</", "<\\/")
    page = HOST_PAGE.read_text(encoding="utf-8").replace("/*SESSION*/null", embedded)

    async def index(request: Request) -> HTMLResponse:
        return HTMLResponse(page)

    async def call(request: Request) -> JSONResponse:
        params = await request.json()
        calls.append(params)
        return JSONResponse((await client.call_tool(params["name"], params.get("arguments"))).raw)

    app = Starlette(routes=[Route("/", index), Route("/call", call, methods=["POST"])])
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))  # bound before serving: the port is known, connects queue
    listener.listen()
    server = uvicorn.Server(uvicorn.Config(app, log_level="warning", lifespan="off"))
    serving = asyncio.create_task(server.serve(sockets=[listener]))
    try:
        yield f"http://127.0.0.1:{listener.getsockname()[1]}/"
    finally:
        server.should_exit = True
        await asyncio.wait_for(serving, 30)
        listener.close()


async def render(client: Client, arguments: dict[str, Any], profile: Path
                 ) -> tuple[dict[str, Any], list[dict[str, Any]], list[dict[str, Any]]]:
    """What the view shows after the host delivered `create_event(arguments)`, the host's
    message log, and the tools/calls its server side made."""
    tools = {tool.name: tool.raw for tool in await client.list_tools()}
    read = await client.read_resource(tools["create_event"]["_meta"]["ui"]["resourceUri"])
    view = read["contents"][0]
    assert view["mimeType"] == MIME_TYPE
    session = {"html": view["text"], "ui": (view.get("_meta") or {}).get("ui"),
               "tools": tools, "call": {"name": "create_event", "arguments": arguments}}
    calls: list[dict[str, Any]] = []
    async with hosting(session, client, calls) as url, launched(profile) as browser:
        page = await browser.new_page()
        await page.open(url)
        shown = await (await page.child_frame()).evaluate(SHOWN)
        log = await page.evaluate("window.hostLog")
    return shown, log, calls


def day(shown: dict[str, Any], date: str) -> dict[str, Any]:
    matches = [d for d in shown["days"] if d["date"] == date]
    assert len(matches) == 1, shown
    return matches[0]


async def test_the_week_view_shows_the_created_event_and_the_rest_of_its_week(
        host_client: Client, tmp_path: Path) -> None:
    await host_client.discover()
    assert APPS in host_client.server_extensions
    # Already in the calendar: one event later in the same week, one the week after.
    for title, when in (("Gym", "2031-03-06T18:00:00+00:00"),
                        ("Next week", "2031-03-12T08:00:00+00:00")):
        done = await host_client.call_tool("create_event", {"title": title, "startsAt": when})
        assert done.get("isError") is not True, done
    title = "Dentist <b>not markup</b>"
    shown, log, calls = await render(
        host_client, {"title": title, "startsAt": "2031-03-04T09:30:00+00:00"}, tmp_path / "p")

    assert not shown["error"], shown
    assert shown["heading"] == "Week of 3 Mar 2031"
    assert [d["date"] for d in shown["days"]] == [f"2031-03-{n:02}" for n in range(3, 10)]
    tuesday = day(shown, "2031-03-04")
    assert tuesday["label"] == "Tue 4 Mar"
    assert tuesday["events"] == [{"title": title, "time": "09:30", "created": True}]
    assert day(shown, "2031-03-06")["events"] == [
        {"title": "Gym", "time": "18:00", "created": False}]
    assert all("Next week" not in e["title"] for d in shown["days"] for e in d["events"])

    from_view = [entry["message"] for entry in log if "from" in entry]
    assert from_view[0]["method"] == "ui/initialize"
    assert from_view[0]["params"]["protocolVersion"] == "2026-01-26"
    assert from_view[1]["method"] == "ui/notifications/initialized"
    asked = [m for m in from_view if m.get("method") == "tools/call"]
    assert [m["params"] for m in asked] == [
        {"name": "week_events", "arguments": {"day": "2031-03-03"}}]
    to_view = [entry["message"].get("method") for entry in log if "to" in entry]
    assert to_view.index("ui/notifications/tool-input") < to_view.index(
        "ui/notifications/tool-result")
    assert [c["name"] for c in calls] == ["create_event", "week_events"]


async def test_the_view_shows_the_text_of_a_failed_call(
        host_client: Client, tmp_path: Path) -> None:
    shown, _, calls = await render(
        host_client, {"title": "Broken", "startsAt": "not a date"}, tmp_path / "p")
    assert shown["error"] is True
    assert "Invalid arguments for tool 'create_event'" in shown["status"]
    assert [c["name"] for c in calls] == ["create_event"]  # nothing to fill a week with
