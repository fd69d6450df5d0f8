"""`mcpkit dev` signs in to a protected server through the CLI's own OAuth client: the calendar
served by `mcpkit run --http --auth-issuer` (the authlib authorization server, auto-approving)
first refuses the inspector (401), which the page is told (`authNeeded`); the page's sign-in
action runs `mcpkit login`'s flow, hands the authorization URL to the page, and, once the
browser (a stand-in following the redirects, every hop on 127.0.0.1) comes back to the loopback
listener, reconnects with the tokens it kept, which `mcpkit call` then uses too."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import httpx
import pytest
from helpers.auth.as_process import AuthServer
from helpers.auth.signin_cli import mcpkit, no_secret_in
from helpers.client.schema_tap import SchemaTap
from helpers.transports.http_peer import ServerProcess

from mcpkit.dev.command import inspector
from mcpkit.dev.targets import read_target

ROOT = Path(__file__).resolve().parents[2]
CALENDAR = str(ROOT / "examples" / "calendar" / "server.py")
WAIT = 60.0


@pytest.fixture
def calendar(auth_server: AuthServer, tmp_path: Path) -> Iterator[ServerProcess]:
    server = ServerProcess.start(CALENDAR, "--auth-issuer", auth_server.issuer,
                                 "--auth-scopes", "calendar:read",
                                 env={"CALENDAR_DB": str(tmp_path / "calendar.sqlite3")})
    yield server
    server.stop()


async def state(hub: Any, key: str, done: Any) -> Any:
    """The state event `key` once `done(data)` holds (waiting on the hub's stream)."""
    async def wait() -> Any:
        async with hub.subscribed() as queue:
            while True:
                event = await queue.get()
                if event is not None and event["type"] == key and done(event["data"]):
                    return event["data"]

    return await asyncio.wait_for(wait(), WAIT)


def follow(url: str) -> int:
    """What the user's browser does with an auto-approving server: follow the redirects to
    the loopback listener; the status of the last page."""
    with httpx.Client(trust_env=False, timeout=10, follow_redirects=False) as http:
        for _ in range(5):
            assert urlsplit(url).hostname == "127.0.0.1", url
            answer = http.get(url)
            if not answer.is_redirect:
                return answer.status_code
            url = str(answer.next_request.url) if answer.next_request else ""
    raise AssertionError("too many redirects")


async def test_the_page_signs_in_to_a_protected_server_and_the_cli_shares_the_tokens(
        auth_server: AuthServer, calendar: ServerProcess, tmp_path: Path,
        monkeypatch: pytest.MonkeyPatch) -> None:
    data = tmp_path / "data"
    monkeypatch.setenv("MCPKIT_DATA_DIR", str(data))
    monkeypatch.setenv("NO_PROXY", "127.0.0.1")
    tap = SchemaTap()
    async with inspector(read_target(calendar.url), tap=tap) as running:
        hub = running.hub
        failed = await state(hub, "connection", lambda c: c["state"] == "failed")
        assert failed["authNeeded"] is True and failed["signIn"] is True
        origin = "{0.scheme}://{0.netloc}".format(urlsplit(running.url))
        async with httpx.AsyncClient(trust_env=False) as client:
            started = await client.post(running.url + "api/signin", json={},
                                        headers={"Origin": origin})
        assert started.json() == {"ok": True, "started": True}
        opened = await state(hub, "signin", lambda s: s["state"] == "open")
        assert opened["url"].startswith(f"{auth_server.issuer}/")
        assert await asyncio.to_thread(follow, opened["url"]) == 200
        await state(hub, "signin", lambda s: s["state"] == "done")
        connected = await state(hub, "connection", lambda c: c["state"] == "connected")
        assert connected["serverInfo"]["name"] == "calendar"
        catalogue = await state(hub, "catalogue", lambda c: True)
        assert "create_event" in [t["name"] for t in catalogue["tools"]]
        shown = str(hub.kept())
    read = await asyncio.to_thread(mcpkit, data, "read", calendar.url, "calendar://week", "--json")
    assert read.returncode == 0, read.stderr
    no_secret_in(data, shown)  # nothing the page was sent holds a token
    tap.assert_clean()

