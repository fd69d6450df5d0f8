"""`mcpkit.testing`: a client on a server in one line, and the wire it recorded."""

from __future__ import annotations

from helpers.client.client_server import make_server
from helpers.client.schema_tap import SchemaTap

import mcpkit
from mcpkit.client import ClientOptions
from mcpkit.testing import WireRecorder, connect


async def test_connect_is_one_line_and_json_mode_round_trips_every_message() -> None:
    recorder = WireRecorder()
    async with connect(make_server(), json=True, recorder=recorder) as client:
        assert (await client.call_tool("add", {"a": 1, "b": 2}))["structuredContent"] == {"sum": 3}
    tap = SchemaTap()
    for direction, message in recorder.messages:
        tap(direction, message)
    tap.assert_clean()
    assert [m["method"] for m in recorder.requests()] == ["server/discover", "tools/call"]
    assert recorder.received[-1]["result"]["structuredContent"] == {"sum": 3}


async def test_connect_passes_handlers_and_options_to_the_client() -> None:
    recorder = WireRecorder()
    async with connect(make_server(), recorder=recorder, client_info={"name": "t", "version": "1"},
                       elicit=lambda r: {"action": "decline"},
                       options=ClientOptions(era="legacy")) as client:
        seen = (await client.call_tool("whoami"))["structuredContent"]
    assert client.era == "legacy"
    assert seen["info"] == {"name": "t", "version": "1"}
    assert seen["caps"] == {"elicitation": {"form": {}}}
    assert recorder.requests("initialize")[0]["params"]["clientInfo"] == {"name": "t",
                                                                           "version": "1"}


def test_the_client_api_is_exported_from_the_package() -> None:
    # mcpkit.Client is the core client plus from_config (which needs the transports).
    assert issubclass(mcpkit.Client, __import__("mcpkit.client").client.Client)
    for name in ("ClientOptions", "InputRequest", "StdioServer", "InMemory", "HTTPConnector",
                 "ElicitationHandler", "SamplingHandler", "RootsHandler", "ProgressHandler",
                 "LogHandler"):
        assert name in mcpkit.__all__ and getattr(mcpkit, name) is not None
