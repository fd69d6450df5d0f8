"""Composition against clients nobody here wrote: the quickstart and the calendar examples
mounted in one server (`composed_server.py`), served by a real uvicorn on 127.0.0.1, listed
and called through the official Python SDK (mcp 2.3.0, at 2026-07-28 and in its 2025-11-25
mode) and TypeScript SDK (@modelcontextprotocol/client 2.4.0 at 2026-07-28,
@modelcontextprotocol/sdk 1.32.2 at 2025-11-25). Every message either side sends is checked
against the official schema of its revision as it crosses the server's edge."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
from helpers.auth.sdk_process import TS_SDKS, install_python, install_typescript, run_client
from helpers.transports.listening import listening
from helpers.wire import LEGACY, MODERN, check_client_message, check_server_message

pytestmark = pytest.mark.asyncio

HERE = Path(__file__).resolve().parent
SCRIPTS = HERE / "sdk_clients"
PYTHON_SDK = "2.3.0"
"""mcp 2.x speaks 2026-07-28, and 2025-11-25 in its legacy mode (1.x would be the
initialize era only: 2.x covers both)."""


async def seen_by(argv: list[str], cwd: Path | None = None) -> dict[str, Any]:
    """What a client script saw: the one JSON line it printed (no sign-in to walk here)."""
    said = await run_client(argv, None, cwd=cwd)
    assert len(said) == 1, said
    return said[0]


class Checked:
    """The app, with every client message and every server message checked on the way."""

    def __init__(self, app: Any) -> None:
        self.app = app
        self.problems: list[str] = []
        self.checked = 0

    async def __call__(self, scope: dict[str, Any], receive: Any, send: Any) -> None:
        if scope["type"] != "http" or scope["method"] != "POST":
            return await self.app(scope, receive, send)
        body = b""
        while True:
            event = await receive()
            body += event.get("body", b"")
            if not event.get("more_body"):
                break
        headers = {k.decode().lower(): v.decode() for k, v in scope["headers"]}
        message = json.loads(body)
        revision = LEGACY if (message.get("method") == "initialize" or "mcp-session-id"
                              in headers) else MODERN
        self._check(lambda: check_client_message(revision, message))
        method = message.get("method") if "id" in message else None
        replied = b""
        sent = False

        async def again() -> dict[str, Any]:
            nonlocal sent
            if not sent:
                sent = True
                return {"type": "http.request", "body": body, "more_body": False}
            return dict(await receive())

        async def tapped(event: dict[str, Any]) -> None:
            nonlocal replied
            if event["type"] == "http.response.body":
                replied += event.get("body", b"")
                if not event.get("more_body"):
                    self._replies(revision, method, replied)
            await send(event)

        await self.app(scope, again, tapped)

    def _replies(self, revision: str, method: str | None, data: bytes) -> None:
        text = data.decode()
        if text.startswith("{"):
            messages = [json.loads(text)]
        else:
            messages = [json.loads(line[5:]) for line in text.splitlines()
                        if line.startswith("data:") and line[5:].strip()]
        for reply in messages:
            self._check(lambda reply=reply: check_server_message(
                revision, reply, method if "method" not in reply else None))

    def _check(self, check: Any) -> None:
        try:
            check()
            self.checked += 1
        except AssertionError as exc:
            self.problems.append(str(exc)[:500])


@pytest.fixture
async def composed(tmp_path: Path, monkeypatch: pytest.MonkeyPatch
                   ) -> AsyncIterator[tuple[str, Checked]]:
    from mcpkit.cli.target import load_server

    monkeypatch.setenv("CALENDAR_DB", str(tmp_path / "calendar.db"))
    server = load_server(str(HERE / "composed_server.py"))
    gate = Checked(server.asgi(path="/mcp"))
    async with server.running(), listening(gate) as up:
        yield up.url, gate


EXPECTED_TOOLS = ["quick_echo", "quick_add", "cal_create_event"]
"""`week_events` is the calendar's view's own tool: hidden from a client without MCP Apps,
there as in the calendar itself."""


def assert_composed(seen: dict[str, Any]) -> None:
    assert seen["tools"] == EXPECTED_TOOLS
    assert seen["added"] == {"sum": 5}
    assert seen["echoed"] == "hi"
    assert seen["resources"] == ["ui://cal/calendar/week", "calendar://cal/week"]
    assert seen["templates"] == []
    assert seen["prompts"] == ["cal_prepare_week"]
    assert seen["read"] == {"uri": "calendar://cal/week", "mimeType": "application/json"}
    assert seen["prompt"] == "Read calendar://week and draft a plan. Focus: sleep."


@pytest.mark.parametrize("mode, era", [("auto", "2026-07-28"), ("legacy", "2025-11-25")])
async def test_the_python_sdk_lists_and_calls_two_mounted_examples(
        composed: tuple[str, Checked], mode: str, era: str) -> None:
    url, gate = composed
    python = install_python(PYTHON_SDK)
    seen = await seen_by([str(python), str(SCRIPTS / "compose_client.py"), url,
                          *(["legacy"] if mode == "legacy" else [])])
    assert seen["era"] == era
    assert_composed(seen)
    assert not gate.problems and gate.checked > 10


@pytest.mark.parametrize("package, era", [("@modelcontextprotocol/client", "2026-07-28"),
                                          ("@modelcontextprotocol/sdk", "2025-11-25")])
async def test_the_typescript_sdk_lists_and_calls_two_mounted_examples(
        composed: tuple[str, Checked], package: str, era: str) -> None:
    assert package in TS_SDKS
    url, gate = composed
    folder = install_typescript()
    script = folder / "compose_client.mjs"  # beside its node_modules, where imports resolve
    script.write_text((SCRIPTS / "compose_client.mjs").read_text())
    seen = await seen_by(["node", str(script), url, package], cwd=folder)
    assert seen["era"] == era
    assert_composed(seen)
    assert not gate.problems and gate.checked > 10
