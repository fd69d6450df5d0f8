"""Checks every message of one client connection against the official schema of its era.

A `SchemaTap` is handed to a transport as its `tap`: it sees each message the client sends and
each one it receives. What the client sends is always checked; what the server sends is
checked when the server is ours (`check_server=True`). Problems are collected rather than
raised inside the transport's reader, and `assert_clean()` reports them at the end of a test.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from helpers.wire import LEGACY, MODERN, check_client_message, check_server_message

RAW_SERVER = str(Path(__file__).resolve().parent / "raw_server.py")
ROOT = Path(__file__).resolve().parents[3]


class SchemaTap:
    def __init__(self, *, check_server: bool = True) -> None:
        self.check_server = check_server
        self.revision = MODERN
        self.methods: dict[Any, str] = {}
        self.messages: list[tuple[str, dict[str, Any]]] = []
        self.problems: list[str] = []

    def __call__(self, direction: str, message: dict[str, Any]) -> None:
        self.messages.append((direction, message))
        try:
            if direction == "send":
                # A connector may open several connections; each opens with its era's request.
                if message.get("method") == "initialize":
                    self.revision = LEGACY
                elif message.get("method") == "server/discover":
                    self.revision = MODERN
                check_client_message(self.revision, message)
                if "id" in message and "method" in message:
                    self.methods[message["id"]] = message["method"]
            elif self.check_server:
                method = self.methods.get(message.get("id")) if "method" not in message else None
                check_server_message(self.revision, message, method)
        except AssertionError as exc:
            self.problems.append(f"{direction}: {exc}")

    @property
    def sent(self) -> list[dict[str, Any]]:
        return [m for d, m in self.messages if d == "send"]

    def requests(self, method: str | None = None) -> list[dict[str, Any]]:
        return [m for m in self.sent if "id" in m and "method" in m
                and (method is None or m["method"] == method)]

    def assert_clean(self) -> None:
        assert not self.problems, "messages off the schema:\n" + "\n".join(self.problems)
        assert self.sent, "nothing was sent"


class TappedTransport:
    """Wraps any ClientTransport so a tap sees what crosses it (for transports without taps)."""

    def __init__(self, inner: Any, tap: SchemaTap) -> None:
        self.inner = inner
        self.tap = tap

    async def request(self, message: dict[str, Any], *, on_notification: Any = None
                      ) -> dict[str, Any]:
        self.tap("send", message)

        async def seen(note: dict[str, Any]) -> None:
            self.tap("receive", note)
            if on_notification is not None:
                await on_notification(note)

        response = await self.inner.request(message, on_notification=seen)
        self.tap("receive", response)
        return response  # type: ignore[no-any-return]

    async def notify(self, message: dict[str, Any]) -> None:
        self.tap("send", message)
        await self.inner.notify(message)

    def set_request_handler(self, handler: Any) -> None:
        if handler is None:
            self.inner.set_request_handler(None)
            return

        async def answer(method: str, params: Any) -> dict[str, Any]:
            result = await handler(method, params)
            self.tap("send", {"jsonrpc": "2.0", "id": "server-request", "result": result})
            return result  # type: ignore[no-any-return]

        self.inner.set_request_handler(answer)

    def set_notification_handler(self, handler: Any) -> None:
        async def seen(note: dict[str, Any]) -> None:
            self.tap("receive", note)
            await handler(note)

        self.inner.set_notification_handler(seen if handler is not None else None)

    async def close(self) -> None:
        await self.inner.close()

    @property
    def alive(self) -> bool:
        return getattr(self.inner, "alive", True)  # type: ignore[no-any-return]

    def __getattr__(self, name: str) -> Any:
        """What else the transport offers (`allowing` a larger answer), as it is."""
        return getattr(self.inner, name)


class TappedConnector:
    def __init__(self, inner: Any, tap: SchemaTap) -> None:
        self.inner = inner
        self.tap = tap
        self.key = inner.key
        self.kind = inner.kind

    async def connect(self) -> TappedTransport:
        return TappedTransport(await self.inner.connect(), self.tap)
