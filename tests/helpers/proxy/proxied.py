"""What the proxy's tests stand up: the upstream server of `upstream_server.py` in this process,
behind a proxy whose client to it is pinned to either era, and clients of the proxy in either
era, every message on both sides checked against the official schema of its revision."""

from __future__ import annotations

import asyncio
from typing import Any

from helpers.client.schema_tap import SchemaTap
from helpers.proxy.upstream_server import Upstream, make_server
from mcpkit import Client, ClientOptions, InMemory, InputRequest, ProxyOptions, Server
from mcpkit.proxy import ProxyServer

ERAS = ["modern", "legacy"]


def answer_form(request: InputRequest) -> dict[str, Any]:
    """A user who fills every form: a name of Ada, yes to every question."""
    fields = request.schema.get("properties", {})
    content: dict[str, Any] = {}
    for name, spec in fields.items():
        content[name] = True if spec.get("type") == "boolean" else "Ada"
    return {"action": "accept", "content": content}


def answer_sample(request: InputRequest) -> dict[str, Any]:
    return {"role": "assistant", "content": {"type": "text", "text": "Paris"},
            "model": "test-model"}


class WatchingTap(SchemaTap):
    """A `SchemaTap` that also says when a message of a method first crosses it."""

    def __init__(self) -> None:
        super().__init__()
        self._seen: dict[str, asyncio.Event] = {}

    def seen(self, method: str) -> asyncio.Event:
        """Set once a message of `method` crossed (either way)."""
        event = self._seen.setdefault(method, asyncio.Event())
        if any(m.get("method") == method for _, m in self.messages):
            event.set()
        return event

    def __call__(self, direction: str, message: dict[str, Any]) -> None:
        super().__call__(direction, message)
        event = self._seen.get(message.get("method"))  # type: ignore[arg-type]
        if event is not None:
            event.set()


class Proxied:
    """A proxy in front of a fresh upstream, and the taps that check both of its sides."""

    def __init__(self, upstream_era: str, **options: Any) -> None:
        self.upstream: Upstream = make_server()
        self.upstream_era = upstream_era
        self.upstream_tap = WatchingTap()
        self.client_taps: list[SchemaTap] = []
        self.proxy: ProxyServer = Server.proxy(
            InMemory(self.upstream, tap=self.upstream_tap),
            options=ProxyOptions(client=ClientOptions(era=upstream_era),  # type: ignore[arg-type]
                                 **options))

    def client(self, era: str, **handlers: Any) -> Client:
        """A client of the proxy in `era`, its messages both ways checked."""
        tap = SchemaTap()
        self.client_taps.append(tap)
        options = handlers.pop("options", None) or ClientOptions(era=era)  # type: ignore[arg-type]
        return Client(InMemory(self.proxy, tap=tap), options=options, **handlers)

    def assert_clean(self) -> None:
        self.upstream_tap.assert_clean()
        for tap in self.client_taps:
            assert not tap.problems, tap.problems


