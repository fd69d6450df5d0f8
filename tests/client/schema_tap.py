"""Checks every message of one client connection against the official schema of its era.

A `SchemaTap` is handed to a transport as its `tap`: it sees each message the client sends and
each one it receives. What the client sends is always checked; what the server sends is
checked when the server is ours (`check_server=True`). Problems are collected rather than
raised inside the transport's reader, and `assert_clean()` reports them at the end of a test.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from wire import LEGACY, MODERN, check_client_message, check_server_message

RAW_SERVER = str(Path(__file__).resolve().parent / "raw_server.py")
ROOT = Path(__file__).resolve().parents[2]


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
