"""A slow or broken probe is not a legacy server: real servers that are slow to answer
`server/discover`, or whose answer is lost, are still reached in the modern era, and a server
that answers `initialize` with a modern version is talked to in the modern era.

Over HTTP a legacy server answers the probe (an error, a 4xx), so silence or a broken
connection only means "ask again": the probe is sent again within the connect budget
(`ClientOptions.timeout`). Over stdio silence may be a legacy server (VER-9 c), so the client
goes on with `initialize`; the probe's late answer, or an `initialize` answer naming a modern
version, then proves the server modern. Every message the client sends is checked against the
official schema, and every one the servers send (the Recorder over HTTP, the tap over stdio).
"""

from __future__ import annotations

import asyncio
import sys
from pathlib import Path
from typing import Any

import orjson
import pytest
from helpers import HELPERS
from helpers.client.schema_tap import SchemaTap
from helpers.transports.resume_peer import replaying, request_body, serving
from helpers.wire import LEGACY, MODERN, check_client_message, check_server_message

from mcpkit import Client, ClientOptions, HTTPConnector, Server
from mcpkit.errors import RequestTimeoutError, TransportError
from mcpkit.transports.stdio.client import StdioServer

HERE = Path(__file__).resolve().parent
GATE = 30.0  # a bound on each wait, never reached when the behaviour holds


def echo_server() -> Server:
    server = Server("slow-probe", "1.0.0")

    @server.tool()
    def echo(text: str) -> str:
        """Says it back."""
        return text

    return server


class SlowProbes:
    """ASGI middleware in front of a real server: the first `hold` `server/discover` POSTs are
    held until one more arrives (a server too busy to answer them in time), or held for good
    (`forever`); `broken` first ones get a response stream that ends before the answer (a
    connection lost mid-answer). Every message a client POSTs is checked against the schema
    of its era, and counted by method."""

    def __init__(self, app: Any, *, hold: int = 0, broken: int = 0, forever: bool = False
                 ) -> None:
        self.app = app
        self.hold, self.broken, self.forever = hold, broken, forever
        self.methods: list[str] = []
        self.problems: list[str] = []
        self.more = asyncio.Event()

    async def __call__(self, scope: dict[str, Any], receive: Any, send: Any) -> None:
        if scope["type"] != "http" or scope["method"] != "POST":
            await self.app(scope, receive, send)
            return
        body = await request_body(receive)
        message = orjson.loads(body)
        method = message.get("method", "response")
        legacy = method == "initialize" or any(
            name == b"mcp-session-id" for name, _ in scope["headers"])
        try:
            check_client_message(LEGACY if legacy else MODERN, message)
        except AssertionError as exc:
            self.problems.append(str(exc))
        self.methods.append(method)
        probes = self.methods.count("server/discover")
        if method == "server/discover":
            if probes <= self.broken:
                await send({"type": "http.response.start", "status": 200,
                            "headers": [(b"content-type", b"text/event-stream")]})
                await send({"type": "http.response.body", "body": b"", "more_body": False})
                return
            if self.forever:  # never answered: held until the client gives up on it
                while (await receive())["type"] != "http.disconnect":
                    pass
                return
            if probes <= self.hold:
                await asyncio.wait_for(self.more.wait(), GATE)
            else:
                self.more.set()
        await self.app(scope, replaying(body, receive), send)


async def test_a_probe_slower_than_the_probe_timeout_is_sent_again_not_read_as_legacy() -> None:
    slow = SlowProbes(echo_server().asgi(), hold=1)
    async with serving(slow) as (url, _recorder):
        options = ClientOptions(probe_timeout=0.2, timeout=GATE)
        async with Client(HTTPConnector(url), options=options) as client:
            assert client.era == "modern" and client.protocol_version == MODERN
            assert client.server_info == {"name": "slow-probe", "version": "1.0.0"}
            result = await client.call_tool("echo", {"text": "hi"})
            assert result["content"][0]["text"] == "hi"
    assert not slow.problems, slow.problems
    assert "initialize" not in slow.methods
    assert slow.methods.count("server/discover") == 2


async def test_a_probe_whose_answer_is_lost_is_sent_again_not_read_as_legacy() -> None:
    broken = SlowProbes(echo_server().asgi(), broken=2)
    async with serving(broken) as (url, _recorder):
        options = ClientOptions(probe_timeout=5, timeout=GATE)
        async with Client(HTTPConnector(url), options=options) as client:
            assert client.era == "modern"
            assert (await client.call_tool("echo", {"text": "x"}))["content"][0]["text"] == "x"
    assert not broken.problems, broken.problems
    assert broken.methods.count("server/discover") == 3 and "initialize" not in broken.methods


async def test_a_probe_never_answered_ends_at_the_budget_without_a_legacy_handshake() -> None:
    silent = SlowProbes(echo_server().asgi(), forever=True)
    async with serving(silent) as (url, _recorder):
        options = ClientOptions(probe_timeout=0.1, timeout=0.5)
        with pytest.raises(RequestTimeoutError, match=r"server/discover: no answer within 0\.5 s"):
            async with Client(HTTPConnector(url), options=options):
                pass
    assert not silent.problems, silent.problems
    assert "initialize" not in silent.methods
    assert silent.methods.count("server/discover") >= 2  # sent again within the budget


async def test_a_refused_connection_is_said_at_once_not_probed_until_the_budget() -> None:
    import socket

    with socket.socket() as spare:
        spare.bind(("127.0.0.1", 0))
        port = spare.getsockname()[1]  # closed again below: nothing listens there
    options = ClientOptions(probe_timeout=0.1, timeout=GATE * 10)
    with pytest.raises(TransportError) as caught:
        async with Client(HTTPConnector(f"http://127.0.0.1:{port}/mcp"), options=options):
            pass
    assert "cannot connect" in str(caught.value)
    assert not isinstance(caught.value, RequestTimeoutError)


def test_an_initialize_result_of_a_modern_http_transport_opens_no_legacy_session() -> None:
    from mcpkit.client.legacy.http_session import LegacyHTTPSession

    assert LegacyHTTPSession.negotiated("s", {"protocolVersion": MODERN}) is None
    session = LegacyHTTPSession.negotiated("s", {"protocolVersion": LEGACY})
    assert session is not None and session.legacy_version == LEGACY


# -- stdio: silence may be a legacy server, so initialize follows; modern proves itself -------


def stdio_client(argv: list[str], tap: SchemaTap, log: Path | None = None) -> Client:
    env = {"RAW_SERVER_LOG": str(log)} if log is not None else None
    return Client(StdioServer(argv, env=env, stderr="capture", tap=tap),
                  options=ClientOptions(probe_timeout=0.3, timeout=GATE))


def check_received(tap: SchemaTap) -> None:
    """Each server message against the revision of the request it answers (the tap's own
    check follows the last request sent, and a late probe answer follows an initialize)."""
    sent = {m["id"]: m["method"] for m in tap.sent if "id" in m and "method" in m}
    for direction, message in tap.messages:
        if direction != "send" and "method" not in message:
            method = sent.get(message.get("id"))
            check_server_message(LEGACY if method == "initialize" else MODERN, message, method)


async def test_a_slow_stdio_server_answering_the_probe_late_is_modern_on_the_same_process(
) -> None:
    # A real dual-era mcpkit server behind a relay that holds the probe until initialize comes:
    # the server then answers the probe (modern) and refuses initialize on that connection.
    tap = SchemaTap(check_server=False)
    argv = [sys.executable, str(HELPERS / "client" / "holding_relay.py"), sys.executable, "-m", "mcpkit",
            "run", str(HELPERS / "client" / "task_server.py")]
    async with stdio_client(argv, tap) as client:
        assert client.era == "modern" and client.protocol_version == MODERN
        result = await client.call_tool("slow", {"seconds": 0})
        assert result["content"][0]["text"] == "slept 0.0"
    tap.assert_clean()
    check_received(tap)
    methods = [m.get("method") for m in tap.sent]
    assert methods[:2] == ["server/discover", "initialize"]
    assert "notifications/initialized" not in methods
    assert methods.count("initialize") == 1  # no second process started for a handshake


async def test_an_initialize_answered_with_a_modern_version_goes_on_in_the_modern_era(
    tmp_path: Path,
) -> None:
    # As the official suite's server does on a loaded machine: the first probe unanswered in
    # time, then initialize answered with 2026-07-28. Before, that was NoCommonVersionError.
    tap = SchemaTap(check_server=False)
    log = tmp_path / "raw.log"
    argv = [sys.executable, str(HELPERS / "client" / "raw_server.py"), "modern-initialize"]
    async with stdio_client(argv, tap, log) as client:
        assert client.era == "modern" and client.protocol_version == MODERN
        assert client.server_info == {"name": "raw", "version": "1"}  # from the new probe
        result = await client.call_tool("plain", {"n": 1})  # a modern request, answered
        assert "isError" not in result
    tap.assert_clean()
    check_received(tap)
    methods = [m.get("method") for m in tap.sent]
    assert methods[:3] == ["server/discover", "initialize", "server/discover"]
    assert "notifications/initialized" not in methods
