"""A proxy in front of the hostile server (`hostile_server.py`, a real process on stdio), and a
client of the proxy whose every message both ways is checked against the official schema.

`Hostile.arm(plan)` tells the upstream what to answer next (through the proxy, with its own
`arm` tool); `go()` calls its `go` tool, which answers with what it was armed with. The log
watch (`Bugs`) collects any ERROR record of mcpkit's that carries a traceback: an exception the
proxy did not expect, which a hostile upstream must never cause.
"""

from __future__ import annotations

import asyncio
import json
import logging
import sys
from pathlib import Path
from typing import Any

from helpers.client.schema_tap import SchemaTap
from mcpkit import Client, ClientOptions, InMemory, ProxyOptions, Server
from mcpkit.proxy import ProxyServer
from mcpkit.transports.stdio.client import StdioServer

HOSTILE = str(Path(__file__).resolve().parent / "hostile_server.py")


class Bugs(logging.Handler):
    """ERROR records of mcpkit's loggers that carry a traceback."""

    def __init__(self) -> None:
        super().__init__(logging.ERROR)
        self.records: list[logging.LogRecord] = []

    def emit(self, record: logging.LogRecord) -> None:
        if record.exc_info and record.name.startswith("mcpkit"):
            self.records.append(record)

    def __enter__(self) -> Bugs:
        logging.getLogger("mcpkit").addHandler(self)
        return self

    def __exit__(self, *exc: object) -> None:
        logging.getLogger("mcpkit").removeHandler(self)

    def assert_none(self) -> None:
        assert not self.records, [self.format(r) for r in self.records]


def elicit_any(request: Any) -> dict[str, Any]:
    return {"action": "decline"}


def sample_any(request: Any) -> dict[str, Any]:
    return {"role": "assistant", "content": {"type": "text", "text": "ok"}, "model": "m"}


class Hostile:
    """The proxy in front of a hostile upstream of `mode` ("legacy" or "modern")."""

    def __init__(self, mode: str, **options: Any) -> None:
        self.mode = mode
        connector = StdioServer([sys.executable, HOSTILE, mode], stderr="capture")
        self.proxy: ProxyServer = Server.proxy(
            connector, options=ProxyOptions(client=ClientOptions(era=mode),  # type: ignore[arg-type]
                                            **options))
        self.tap = SchemaTap()

    def client(self, era: str = "modern") -> Client:
        return Client(InMemory(self.proxy, tap=self.tap), elicit=elicit_any,
                      elicit_url=elicit_any, sample=sample_any,
                      roots=[{"uri": "file:///w"}],
                      options=ClientOptions(era=era))  # type: ignore[arg-type]

    async def arm(self, client: Client, **plan: Any) -> None:
        # The proxy reads the upstream's lists once more when it starts following its changes:
        # an armed list answer sent before that read would be spent by it.
        async with asyncio.timeout(10):
            await self.proxy.catalogue.following.wait()
        done = await client.call_tool("arm", {"plan": json.dumps(plan)})
        assert done.text == "armed"

    async def go(self, client: Client, **options: Any) -> Any:
        return await client.call_tool("go", **options)
