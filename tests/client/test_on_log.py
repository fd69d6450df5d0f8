"""`Client(on_log=handler)` alone receives the server's log messages, in both eras, on every
transport: the handler implies a level ("info" unless `ClientOptions.log_level` names one),
sent in each modern request's `_meta` and by `logging/setLevel` in a legacy session.

Against real servers: the client tests' server in memory, and `mcpkit run` of the transport
tests' features server as a stdio subprocess and on 127.0.0.1 over HTTP. Every message either
side sends is checked against the official schema of its era (SchemaTap, checked_transport)."""

from __future__ import annotations

import asyncio
import logging
import sys
from collections.abc import Callable, Iterator
from typing import Any

import pytest
from helpers.client.client_server import make_server
from helpers.client.schema_tap import ROOT, SchemaTap
from helpers.transports.http_peer import FEATURES, ServerProcess, checked_transport
from helpers.wire import spec_available

from mcpkit.client import Client, ClientOptions
from mcpkit.transports.memory import InMemory
from mcpkit.transports.stdio.client import StdioServer

MakeClient = Callable[..., Client]
LEVEL_KEY = "io.modelcontextprotocol/logLevel"
ERAS = ["modern", "legacy"]


class Logs:
    """An `on_log` handler that keeps what it hears and can wait for a number of messages."""

    def __init__(self) -> None:
        self.heard: list[tuple[str, Any, str | None]] = []
        self._changed = asyncio.Event()

    def __call__(self, level: str, data: Any, logger: str | None) -> None:
        self.heard.append((level, data, logger))
        self._changed.set()

    async def wait_for(self, count: int) -> list[tuple[str, Any, str | None]]:
        async with asyncio.timeout(10):
            while len(self.heard) < count:
                self._changed.clear()
                await self._changed.wait()
        return self.heard


def asked_for_level(tap: SchemaTap, era: str) -> list[Any]:
    """The levels the client asked for: each modern request's `_meta` level, or the legacy
    session's `logging/setLevel`."""
    if era == "legacy":
        return [m["params"]["level"] for m in tap.requests("logging/setLevel")]
    return [m["params"]["_meta"].get(LEVEL_KEY) for m in tap.requests("tools/call")]


@pytest.mark.parametrize("json", [False, True], ids=["objects", "json"])
@pytest.mark.parametrize("era", ERAS)
async def test_on_log_alone_receives_a_tools_logs_in_memory(
    memory_client: MakeClient, era: str, json: bool
) -> None:
    logs = Logs()
    client = memory_client(make_server(), json=json, on_log=logs,
                           options=ClientOptions(era=era))  # type: ignore[arg-type]
    result = await client.call_tool("work", {"steps": 1})
    assert result["content"][0]["text"] == "worked"
    assert await logs.wait_for(1) == [("info", "starting 1 steps", "work")], (
        "info and above: the tool's debug message is not asked for"
    )
    assert asked_for_level(client.tap, era) == ["info"]  # type: ignore[attr-defined]
    assert client.options.log_level == "info"


@pytest.mark.parametrize("era", ERAS)
async def test_a_log_level_given_in_the_options_is_kept(
    memory_client: MakeClient, era: str
) -> None:
    logs = Logs()
    client = memory_client(make_server(), on_log=logs,
                           options=ClientOptions(era=era, log_level="debug"))  # type: ignore[arg-type]
    await client.call_tool("work", {"steps": 1})
    assert await logs.wait_for(2) == [("info", "starting 1 steps", "work"), ("debug", "done", None)]
    assert asked_for_level(client.tap, era) == ["debug"]  # type: ignore[attr-defined]


@pytest.mark.parametrize("era", ERAS)
async def test_without_a_log_handler_no_level_is_asked_for(
    memory_client: MakeClient, era: str
) -> None:
    client = memory_client(make_server(), options=ClientOptions(era=era))  # type: ignore[arg-type]
    await client.call_tool("work", {"steps": 1})
    assert asked_for_level(client.tap, era) in ([], [None])  # type: ignore[attr-defined]
    assert client.options.log_level is None


@pytest.mark.parametrize("era", ERAS)
async def test_on_log_alone_receives_a_tools_logs_from_a_stdio_server(
    taps: list[SchemaTap], clients: list[Client], era: str
) -> None:
    tap = SchemaTap()
    taps.append(tap)
    logs = Logs()
    server = StdioServer([sys.executable, "-m", "mcpkit", "run", FEATURES], cwd=str(ROOT),
                         stderr="capture", tap=tap)
    client = Client(server, on_log=logs, options=ClientOptions(era=era))  # type: ignore[arg-type]
    clients.append(client)
    assert (await client.call_tool("count", {"steps": 2}))["content"][0]["text"] == "counted 2"
    assert await logs.wait_for(2) == [("info", "step 1", None), ("info", "step 2", None)]
    assert client.era == era
    assert asked_for_level(tap, era) == ["info"]


@pytest.fixture(scope="module")
def features() -> Iterator[ServerProcess]:
    server = ServerProcess.start(FEATURES)
    yield server
    server.stop()


@pytest.mark.parametrize("era", ERAS)
async def test_on_log_alone_receives_a_tools_logs_over_http(
    features: ServerProcess, era: str
) -> None:
    logs = Logs()
    transport = checked_transport(features.url, check_server=True)
    client = Client(transport, on_log=logs, options=ClientOptions(era=era))  # type: ignore[arg-type]
    try:
        assert (await client.call_tool("count", {"steps": 2}))["content"][0]["text"] == (
            "counted 2")
        assert await logs.wait_for(2) == [("info", "step 1", None), ("info", "step 2", None)]
        assert client.era == era
    finally:
        await client.close()
    assert transport.server_checks.checked > 0 or not spec_available()


@pytest.mark.parametrize("era", ERAS)
async def test_a_log_or_progress_handler_that_raises_does_not_fail_the_call_over_http(
    features: ServerProcess, era: str, caplog: pytest.LogCaptureFixture
) -> None:
    def on_log(level: str, data: Any, logger: str | None) -> None:
        raise RuntimeError("the log panel is gone")

    async def progress(done: float, total: float | None, message: str | None) -> None:
        raise RuntimeError("the progress bar is gone")

    transport = checked_transport(features.url, check_server=True)
    client = Client(transport, on_log=on_log, options=ClientOptions(era=era))  # type: ignore[arg-type]
    caplog.set_level(logging.ERROR, logger="mcpkit.client")
    try:
        result = await client.call_tool("count", {"steps": 2}, progress=progress)
    finally:
        await client.close()
    assert result["content"][0]["text"] == "counted 2"
    failures = [r.getMessage() for r in caplog.records if r.exc_info]
    assert any("notifications/message" in f for f in failures), failures
    assert any("notifications/progress" in f for f in failures), failures


def test_an_on_log_that_is_no_function_is_refused_when_the_client_is_made() -> None:
    with pytest.raises(TypeError, match=r"on_log must be a function \(level, data, logger\)"):
        Client(InMemory(make_server()), on_log="print")  # type: ignore[arg-type]


async def test_on_log_hears_what_a_server_logs_while_answering_a_list(
    raw_client: MakeClient,
) -> None:
    # Every request carries the level on_log implies, so a server may log while it answers
    # tools/list; those messages reach on_log though the list has no handler of its own.
    logs = Logs()
    client = raw_client("chatty", on_log=logs)
    await client.list_tools()
    assert await logs.wait_for(1) == [("info", "listing tools", "lists")]
