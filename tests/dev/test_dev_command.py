"""`mcpkit dev` as a user runs it: a real process, its address printed, its app on 127.0.0.1.

Requests that do not come from the inspector's page are refused before anything reads them: an
address without the run's token, a request from another origin, a request under another host
name (DNS rebinding), an action without its origin or its JSON body; and they change nothing
(the event stream shows no reconnection). `--reload` restarts the server when its file changes,
over stdio and over HTTP; mistakes on the command line are one line and status 2.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import re
import socket
import sys
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import httpx
import pytest
from helpers.client.schema_tap import ROOT

QUICKSTART = str(ROOT / "examples" / "quickstart" / "server.py")
WAIT = 60.0
ADDRESS = re.compile(r"at (http://127\.0\.0\.1:\d+/[\w-]+/) \(MCP App views from "
                     r"(http://127\.0\.0\.1:\d+)\)")


@dataclass
class Running:
    url: str
    sandbox: str
    process: asyncio.subprocess.Process

    @property
    def origin(self) -> str:
        parts = urlsplit(self.url)
        return f"{parts.scheme}://{parts.netloc}"


@contextlib.asynccontextmanager
async def dev(*args: str) -> AsyncIterator[Running]:
    process = await asyncio.create_subprocess_exec(
        sys.executable, "-m", "mcpkit", "dev", *args, "--no-browser",
        stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE)
    assert process.stdout is not None
    try:
        line = (await asyncio.wait_for(process.stdout.readline(), WAIT)).decode()
        found = ADDRESS.search(line)
        assert found, f"no address in {line!r}"
        yield Running(found.group(1), found.group(2), process)
    finally:
        if process.returncode is None:
            process.terminate()
        try:
            await asyncio.wait_for(process.wait(), 30)
        except TimeoutError:
            process.kill()
            await process.wait()


async def events_until(running: Running, done: Callable[[list[dict[str, Any]]], bool]
                       ) -> list[dict[str, Any]]:
    """The inspector's events, as its page gets them, up to the first moment `done(seen)`."""
    seen: list[dict[str, Any]] = []

    async def read() -> list[dict[str, Any]]:
        async with httpx.AsyncClient(timeout=None) as client, client.stream(
                "GET", running.url + "events", headers={"Origin": running.origin}) as stream:
            assert stream.status_code == 200
            async for line in stream.aiter_lines():
                if line.startswith("data: "):
                    seen.append(json.loads(line[6:]))
                    if done(seen):
                        return seen
        raise AssertionError(f"the event stream ended: {seen}")

    return await asyncio.wait_for(read(), WAIT)


def catalogue_with(tool: str) -> Callable[[list[dict[str, Any]]], bool]:
    return lambda seen: any(e["type"] == "catalogue" and tool in
                            [t["name"] for t in e["data"]["tools"]] for e in seen)


def connecting(seen: list[dict[str, Any]]) -> int:
    return sum(1 for e in seen if e["type"] == "wire" and e["data"]["method"] == "tools/list"
               and e["data"]["dir"] == "out")


async def test_each_run_prints_its_own_address_and_serves_the_page_under_its_policy() -> None:
    async with dev(QUICKSTART) as first, dev(QUICKSTART) as second:
        assert first.url != second.url
        token = first.url.rstrip("/").rsplit("/", 1)[1]
        assert len(token) >= 32
        async with httpx.AsyncClient() as client:
            page = await client.get(first.url)
            assert page.status_code == 200
            assert page.headers["content-type"] == "text/html; charset=utf-8"
            policy = page.headers["content-security-policy"]
            assert "script-src 'self';" in policy and "connect-src 'self';" in policy
            assert f"frame-src {first.sandbox};" in policy
            assert "frame-ancestors 'none'" in policy
            assert page.headers["referrer-policy"] == "no-referrer"
            assert '<script type="module" src="js/main.js">' in page.text
            script = await client.get(first.url + "js/main.js")
            assert script.headers["content-type"] == "text/javascript; charset=utf-8"
            assert (await client.get(first.url + "sandbox/relay.js")).status_code == 404
            assert (await client.get(first.url + "../../etc/passwd")).status_code == 403


async def test_requests_without_the_token_from_another_origin_or_host_are_refused() -> None:
    async with dev(QUICKSTART) as running, httpx.AsyncClient() as client:
        before = await events_until(running, catalogue_with("add"))
        origin, port = running.origin, urlsplit(running.url).port
        evil = {"Origin": "http://evil.example", "content-type": "application/json"}
        refused = [
            await client.get(origin + "/"),
            await client.get(origin + "/not-the-token/"),
            await client.get(running.url, headers={"Origin": "http://evil.example"}),
            await client.get(running.url, headers={"Host": f"evil.example:{port}"}),
            await client.get(running.url, headers={"Sec-Fetch-Site": "cross-site"}),
            await client.get(running.url + "events", headers={"Origin": "http://evil.example"}),
            await client.post(running.url + "api/refresh", headers=evil, content=b"{}"),
            await client.post(running.url + "api/refresh", content=b"{}",
                              headers={"content-type": "application/json"}),
            await client.post(running.url + "api/refresh",
                              headers={"Host": f"rebound.example:{port}", "Origin": origin,
                                       "content-type": "application/json"}, content=b"{}"),
        ]
        assert [r.status_code for r in refused] == [403] * 9
        said = [r.text for r in refused]
        assert "lacks the run's token" in said[0] and "lacks the run's token" in said[1]
        assert "another origin" in said[2] and "DNS rebinding" in said[3]
        assert "must say where it comes from" in said[7]
        plain = await client.post(running.url + "api/refresh", content=b"{}",
                                  headers={"Origin": origin, "content-type": "text/plain"})
        assert plain.status_code == 400
        # The sandbox origin serves view frames only: never the page, never an action.
        sandbox_page = running.sandbox + urlsplit(running.url).path
        assert (await client.get(sandbox_page)).status_code == 403
        assert (await client.post(running.sandbox + "/x/view/y", content=b"{}")).status_code == 405

        # None of them acted: the one action the page may send lists the tools again.
        listed = connecting(before)
        done = await client.post(running.url + "api/refresh", content=b"{}",
                                 headers={"Origin": origin, "content-type": "application/json"})
        assert done.status_code == 200 and done.json()["ok"] is True
        after = await events_until(running, lambda seen: connecting(seen) > listed)
        assert connecting(after) == listed + 1


def server_file(path: Path, tools: list[str]) -> None:
    body = "".join(f"\n\n@server.tool()\ndef {name}() -> str:\n    return {name!r}\n"
                   for name in tools)
    path.write_text(f"from mcpkit import Server\n\nserver = Server('reloading'){body}",
                    encoding="utf-8")


@pytest.mark.parametrize("http", [False, True], ids=["stdio", "http"])
async def test_reload_restarts_the_server_when_its_file_changes(tmp_path: Path,
                                                                http: bool) -> None:
    source = tmp_path / "server.py"
    server_file(source, ["one"])
    async with dev(str(source), "--reload", *(["--http"] if http else [])) as running:
        await events_until(running, catalogue_with("one"))
        server_file(source, ["one", "two"])
        seen = await events_until(running, catalogue_with("two"))
        reloads = [e["data"] for e in seen if e["type"] == "reload"]
        assert reloads and reloads[0]["file"] == "server.py"
        connections = [e["data"] for e in seen if e["type"] == "connection"]
        assert connections[-1]["state"] == "connected" and connections[-1]["reload"] >= 1
        assert connections[-1]["transport"] == ("http" if http else "stdio")


async def test_ending_mcpkit_dev_ends_the_server_it_started() -> None:
    async with dev(QUICKSTART, "--http") as running:
        seen = await events_until(running, catalogue_with("add"))
        served = [e["data"] for e in seen if e["type"] == "connection"][-1]["server"]
        async with httpx.AsyncClient() as client:
            assert (await client.get(served)).status_code in (400, 405, 406)  # it is up
        running.process.terminate()
        assert await asyncio.wait_for(running.process.wait(), WAIT) == 0
    async with httpx.AsyncClient() as client:
        with pytest.raises(httpx.ConnectError):
            await client.get(served)


async def test_a_server_that_cannot_be_reached_is_said_on_the_page() -> None:
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        nowhere = f"http://127.0.0.1:{taken.getsockname()[1]}/mcp"
    async with dev(nowhere) as running:
        seen = await events_until(running, lambda seen: any(
            e["type"] == "connection" and e["data"]["state"] == "failed" for e in seen))
        failed = [e["data"] for e in seen if e["type"] == "connection"][-1]
        assert "cannot connect" in failed["error"] or "refused" in failed["error"].lower()
        assert failed["signIn"] is True and failed["authNeeded"] is False


async def run(*args: str) -> tuple[int, str]:
    process = await asyncio.create_subprocess_exec(
        sys.executable, "-m", "mcpkit", "dev", *args, "--no-browser",
        stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE)
    _, err = await asyncio.wait_for(process.communicate(), WAIT)
    assert process.returncode is not None
    return process.returncode, err.decode()


async def test_mistakes_on_the_command_line_are_one_line_and_status_2(tmp_path: Path) -> None:
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = str(taken.getsockname()[1])
        cases = [
            (("http://127.0.0.1:1/mcp", "--reload"), "--http and --reload serve a server file"),
            ((str(tmp_path / "missing.py"),), "file not found"),
            (("npx -y some-server", "--http"), "apply to a server file"),
            ((QUICKSTART, "--port", port), f"cannot serve on 127.0.0.1:{port}"),
        ]
        for args, said in cases:
            status, err = await run(*args)
            assert status == 2, (args, err)
            lines = err.strip().splitlines()
            assert len(lines) == 1 and lines[0].startswith("mcpkit dev: ") and said in lines[0]
