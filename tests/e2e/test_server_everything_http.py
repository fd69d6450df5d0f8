"""The MCP reference "everything" server over Streamable HTTP: legacy interop with a server the
project did not write.

The same pinned package as test_server_everything.py (which drives it over stdio) is started
with `streamableHttp` on 127.0.0.1 and a port the system picks. It speaks 2025-11-25 only, and
refuses `server/discover` with HTTP 400 (no session yet), so the client falls back to
`initialize`, keeps the session id the server gives, and ends the session with DELETE. Every
message the client sends is checked against the 2025-11-25 schema twice: as the client hands it
to the transport (SchemaTap) and as the bytes of each POST (WireLog), which also records the
headers and statuses of every HTTP exchange, GET and DELETE included.

The package's server listens on every interface and only on the port in `PORT`; a small Node
preload (written to the test's own folder) makes it listen on 127.0.0.1 only, and prints the
port it got, so `PORT=0` is a free port without a race.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import re
import signal
import subprocess
import time
from collections.abc import AsyncIterator, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx
import orjson
import pytest
from helpers.client.schema_tap import ROOT, SchemaTap, TappedConnector
from helpers.everything_catalogue import PACKAGE, check_catalogue, npm_env
from helpers.everything_catalogue import installed as installed  # the fixture, shared
from helpers.wire import LEGACY, MODERN, check_client_message
from test_server_everything import elicit, sample

from mcpkit.client import Client, ClientOptions
from mcpkit.errors import RPCError
from mcpkit.transports.http_client.transport import HTTPConnector

pytestmark = pytest.mark.node

START_TIMEOUT = 60.0
"""Seconds for npx to start the installed package (slow on a loaded machine, never reached;
under the suite's 120 s limit per test, setup included)."""
WAIT = 60.0
"""Bound on waiting for something the server sends on its own (its log interval is 5 s)."""

LOOPBACK_PRELOAD = r"""
// Listen on 127.0.0.1 only, and say which port the system gave (PORT=0).
const net = require("node:net");
const listen = net.Server.prototype.listen;
net.Server.prototype.listen = function (...args) {
  if (typeof args[0] === "number" || (typeof args[0] === "string" && /^\d+$/.test(args[0]))) {
    args.splice(1, 0, "127.0.0.1");
  }
  this.once("listening", () => {
    const where = this.address();
    process.stderr.write(`mcpkit-test listening on ${where.address} port ${where.port}\n`);
  });
  return listen.apply(this, args);
};
"""


@dataclass
class ReferenceServer:
    """The reference server's process (npx and its Node child, one process group) and URL."""

    proc: subprocess.Popen[bytes]
    log: Path
    url: str

    def output(self) -> str:
        return self.log.read_text(errors="replace")

    def stop(self) -> None:
        """SIGINT to the group (the server's own clean shutdown), SIGKILL if it lingers."""
        for sig in (signal.SIGINT, signal.SIGKILL):
            if self.proc.poll() is not None:
                break
            with contextlib.suppress(ProcessLookupError):
                os.killpg(self.proc.pid, sig)
            with contextlib.suppress(subprocess.TimeoutExpired):
                self.proc.wait(15)
        with contextlib.suppress(ProcessLookupError):
            os.killpg(self.proc.pid, signal.SIGKILL)  # a child left behind by npx


@pytest.fixture(scope="module")
def reference(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
              ) -> Iterator[ReferenceServer]:
    """The package installed (the stdio test's `installed` fixture), then served over HTTP."""
    request.getfixturevalue("installed")
    folder = tmp_path_factory.mktemp("everything-http")
    preload = folder / "loopback.cjs"
    preload.write_text(LOOPBACK_PRELOAD, encoding="utf-8")
    log = folder / "server.log"
    options = f"{os.environ.get('NODE_OPTIONS', '')} --require {json.dumps(str(preload))}".strip()
    with open(log, "wb") as out:
        proc = subprocess.Popen(
            ["npx", "-y", PACKAGE, "streamableHttp"], stdin=subprocess.DEVNULL, stdout=out,
            stderr=out, cwd=ROOT, start_new_session=True,
            env={**os.environ, **npm_env(), "PORT": "0", "NODE_OPTIONS": options},
        )
    server: ReferenceServer | None = None
    deadline = time.monotonic() + START_TIMEOUT
    while time.monotonic() < deadline and proc.poll() is None:
        found = re.search(r"mcpkit-test listening on 127\.0\.0\.1 port (\d+)",
                          log.read_text(errors="replace"))
        if found:
            server = ReferenceServer(proc, log, f"http://127.0.0.1:{found.group(1)}/mcp")
            break
        time.sleep(0.05)
    if server is None:
        ReferenceServer(proc, log, "").stop()
        pytest.fail(f"the reference server did not start: {log.read_text(errors='replace')}")
    yield server
    server.stop()


@dataclass
class Exchange:
    """One HTTP request the client made, and the status it got."""

    request: httpx.Request
    message: dict[str, Any] | None
    status: int | None = None

    @property
    def method(self) -> str:
        return self.request.method

    @property
    def headers(self) -> httpx.Headers:
        return self.request.headers


@dataclass
class WireLog:
    """httpx event hooks: every request the client makes is recorded, and every POST body is
    checked as a client message of its revision (the probe is modern; from `initialize` on,
    legacy, whatever the headers say)."""

    exchanges: list[Exchange] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)
    revision: str = MODERN
    responded: asyncio.Event = field(default_factory=asyncio.Event)

    async def on_request(self, request: httpx.Request) -> None:
        message = orjson.loads(request.content) if request.method == "POST" else None
        self.exchanges.append(Exchange(request, message))
        if message is None:
            return
        if message.get("method") == "initialize":
            self.revision = LEGACY
        try:
            check_client_message(self.revision, message)
        except AssertionError as exc:
            self.problems.append(str(exc))

    async def on_response(self, response: httpx.Response) -> None:
        for exchange in self.exchanges:
            if exchange.request is response.request:
                exchange.status = response.status_code
        self.responded.set()

    async def settled(self, exchanges: list[Exchange], within_s: float = 10.0) -> None:
        """Until each of `exchanges` has its status. A POST answering one of the server's
        requests is still in flight when the call it unblocked returns: the server may send
        the call's result before it answers that POST."""
        async with asyncio.timeout(within_s):
            while any(e.status is None for e in exchanges):
                self.responded.clear()
                await self.responded.wait()

    def posts(self, method: str | None = None) -> list[Exchange]:
        return [e for e in self.exchanges if e.method == "POST" and e.message is not None
                and (method is None or e.message.get("method") == method)]

    def of(self, verb: str) -> list[Exchange]:
        return [e for e in self.exchanges if e.method == verb]


@dataclass
class Connected:
    client: Client
    tap: SchemaTap
    wire: WireLog
    logs: list[tuple[str, Any]]


@pytest.fixture
async def everything(reference: ReferenceServer) -> AsyncIterator[Connected]:
    """A Client of the reference server (elicitation, sampling and roots handled, log messages
    collected), both schema checks asserted clean at the end."""
    tap = SchemaTap(check_server=False)
    wire = WireLog()
    logs: list[tuple[str, Any]] = []

    def on_log(level: str, data: Any, logger: str | None) -> None:
        logs.append((level, data))

    hooks = {"request": [wire.on_request], "response": [wire.on_response]}
    connector = TappedConnector(HTTPConnector(reference.url,
                                              httpx_options={"event_hooks": hooks}), tap)
    client = Client(connector, elicit=elicit, sample=sample, on_log=on_log,
                    roots=[{"uri": "file:///work", "name": "w"}],
                    options=ClientOptions(log_level="debug", timeout=WAIT))
    client.tap = tap  # type: ignore[attr-defined]
    try:
        yield Connected(client, tap, wire, logs)
    finally:
        await client.close()
    tap.assert_clean()
    assert not wire.problems, "POST bodies off the schema:\n" + "\n".join(wire.problems)


async def test_the_reference_server_over_http_is_reached_by_falling_back_to_initialize(
    everything: Connected,
) -> None:
    client, wire = everything.client, everything.wire
    info = await client.discover()
    assert (client.era, client.protocol_version) == ("legacy", LEGACY)
    assert client.server_info is not None
    assert client.server_info["name"] == "mcp-servers/everything"
    assert {"tools", "resources", "prompts", "logging"} <= set(info["capabilities"])
    sent = [m.get("method") for m in everything.tap.sent]
    assert sent[:4] == ["server/discover", "initialize", "notifications/initialized",
                        "logging/setLevel"]
    probe, initialize, initialized = wire.posts()[:3]
    # The probe is refused by HTTP status (no session yet), the handshake opens one.
    assert probe.message is not None and probe.message["method"] == "server/discover"
    assert probe.status == 400
    assert "mcp-session-id" not in probe.headers and "mcp-session-id" not in initialize.headers
    assert initialize.status == 200
    session = initialized.headers.get("mcp-session-id")
    assert session, "notifications/initialized went without the session id"
    assert initialized.headers["mcp-protocol-version"] == LEGACY
    assert initialized.status == 202


async def test_every_request_of_the_session_carries_its_id_and_version(
    everything: Connected,
) -> None:
    client, wire = everything.client, everything.wire
    await check_catalogue(client, {"echo", "get-sum", "trigger-long-running-operation"})
    later = wire.posts()[2:]
    assert {e.message["method"] for e in later if e.message and "method" in e.message} >= {
        "tools/list", "tools/call", "resources/list", "resources/read", "prompts/get",
        "completion/complete"}
    session = later[0].headers["mcp-session-id"]
    for exchange in later:
        assert exchange.headers.get("mcp-session-id") == session, exchange.message
        assert exchange.headers.get("mcp-protocol-version") == LEGACY, exchange.message
        assert exchange.status in (200, 202), (exchange.message, exchange.status)


async def test_progress_of_a_long_call_arrives_on_its_response_stream(
    everything: Connected,
) -> None:
    client = everything.client
    seen: list[tuple[Any, Any]] = []

    def progress(done: Any, total: Any, message: Any) -> None:
        seen.append((done, total))

    result = await client.call_tool("trigger-long-running-operation",
                                    {"duration": 0.3, "steps": 3}, progress=progress)
    assert "Long running operation completed" in result["content"][0]["text"]
    assert seen == [(1, 3), (2, 3), (3, 3)]
    call = everything.tap.requests("tools/call")[-1]
    assert call["params"]["_meta"]["progressToken"]


async def test_the_reference_servers_requests_on_a_response_stream_are_answered(
    everything: Connected,
) -> None:
    client, wire = everything.client, everything.wire
    elicited = await client.call_tool("trigger-elicitation-request", {})
    assert "User provided the requested information" in elicited["content"][0]["text"]
    sampled = await client.call_tool("trigger-sampling-request",
                                     {"prompt": "Capital of France?", "maxTokens": 20})
    assert "Paris" in sampled["content"][0]["text"]
    roots = await client.call_tool("get-roots-list", {})
    assert "file:///work" in roots["content"][0]["text"]
    # The answers went back as POSTs of the session (schema-checked by the wire log).
    answers = [e for e in wire.posts() if e.message and "method" not in e.message]
    assert len(answers) >= 3
    await wire.settled(answers)
    assert all(e.headers.get("mcp-session-id") and e.status == 202 for e in answers), [
        (e.message, e.headers.get("mcp-session-id"), e.status) for e in answers]


async def test_log_messages_arrive_on_the_session_get_stream(everything: Connected) -> None:
    client, wire = everything.client, everything.wire
    await client.connect()
    assert client.transport is not None
    transport: Any = client.transport.inner  # type: ignore[attr-defined]
    await asyncio.wait_for(transport.session_stream_open.wait(), WAIT)
    started = await client.call_tool("toggle-simulated-logging", {})
    assert "Started simulated" in started["content"][0]["text"]
    try:
        for _ in range(int(WAIT * 10)):
            if any("-level message" in str(data) for _, data in everything.logs):
                break
            await asyncio.sleep(0.1)
    finally:
        await client.call_tool("toggle-simulated-logging", {})
    assert any("-level message" in str(data) for _, data in everything.logs), everything.logs
    streams = wire.of("GET")
    assert streams and streams[0].status == 200
    assert streams[0].headers["accept"] == "text/event-stream"
    assert streams[0].headers["mcp-session-id"] == wire.posts("tools/call")[0].headers[
        "mcp-session-id"]


async def test_closing_ends_the_session_with_delete(
    everything: Connected, reference: ReferenceServer,
) -> None:
    client, wire = everything.client, everything.wire
    await client.list_tools()
    session = wire.posts("tools/list")[0].headers["mcp-session-id"]
    await client.close()
    deletes = wire.of("DELETE")
    assert len(deletes) == 1
    assert deletes[0].headers["mcp-session-id"] == session
    assert deletes[0].status == 200
    # The server has let the session go: a request in it is refused.
    async with httpx.AsyncClient(timeout=WAIT) as http:
        gone = await http.post(reference.url, json={
            "jsonrpc": "2.0", "id": 1, "method": "tools/list", "params": {}},
            headers={"Accept": "application/json, text/event-stream",
                     "Mcp-Session-Id": session, "MCP-Protocol-Version": LEGACY})
    assert gone.status_code in (400, 404), gone.text


async def test_a_session_the_server_ended_is_a_clear_error_naming_it(
    everything: Connected, reference: ReferenceServer,
) -> None:
    """This server answers a session id it does not know with HTTP 400 and a JSON-RPC error,
    not the 404 that would make the client initialize again (LEG-13): the call fails with the
    server's own words, at once, instead of hanging or being retried."""
    client, wire = everything.client, everything.wire
    await client.list_tools()
    session = wire.posts("tools/list")[0].headers["mcp-session-id"]
    async with httpx.AsyncClient(timeout=WAIT) as http:
        ended = await http.delete(reference.url, headers={
            "Mcp-Session-Id": session, "MCP-Protocol-Version": LEGACY})
    assert ended.status_code == 200
    with pytest.raises(RPCError, match="No valid session ID") as raised:
        await client.call_tool("echo", {"message": "hello"})
    assert raised.value.code == -32000
    assert len(wire.posts("initialize")) == 1
    assert wire.posts("tools/call")[-1].status == 400
