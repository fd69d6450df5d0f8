"""Helpers for testing servers and clients: a client on a server in one line, and the wire.

    async with connect(server) as client:
        assert (await client.call_tool("add", {"a": 1, "b": 2}))["structuredContent"] == ...

`connect(server, json=True)` pushes every message through a real JSON encode and decode, as a
byte stream would. `WireRecorder` keeps every message in both directions, for assertions and
for schema checks of what each side sent.

Built on the public API only.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from mcpkit.client import Client, ClientOptions
from mcpkit.transports.memory import InMemory

__all__ = ["WireRecorder", "connect"]


class WireRecorder:
    """Every message of a connection, in order, as `(direction, message)`.

    `direction` is `"send"` (client to server) or `"receive"` (server to client).
    """

    def __init__(self) -> None:
        self.messages: list[tuple[str, dict[str, Any]]] = []

    def __call__(self, direction: str, message: dict[str, Any]) -> None:
        self.messages.append((direction, message))

    @property
    def sent(self) -> list[dict[str, Any]]:
        return [m for d, m in self.messages if d == "send"]

    @property
    def received(self) -> list[dict[str, Any]]:
        return [m for d, m in self.messages if d == "receive"]

    def requests(self, method: str | None = None) -> list[dict[str, Any]]:
        """Requests the client sent (of `method`, when given)."""
        return [
            m for m in self.sent
            if "id" in m and "method" in m and (method is None or m["method"] == method)
        ]

    def clear(self) -> None:
        self.messages.clear()


def connect(
    server: Any,
    *,
    json: bool = False,
    recorder: WireRecorder | None = None,
    options: ClientOptions | None = None,
    principal: Any = None,
    **client_options: Any,
) -> Client:
    """A `Client` for `server` in this process; use it with `async with`.

    Keyword arguments other than these go to `Client` (handlers, `client_info`, `on_log`).
    """
    connector = InMemory(server, json=json, tap=recorder, principal=principal)
    extra: Mapping[str, Any] = client_options
    return Client(connector, options=options, **extra)
