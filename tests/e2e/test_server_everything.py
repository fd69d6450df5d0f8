"""A real legacy-only server the project did not write: the MCP reference "everything" server.

It speaks 2025-11-25 only, so the client must probe with `server/discover`, get an error, and
fall back to `initialize` on the same process. npx installs the pinned package into
`.cache/npm` in the repository (git-ignored); the `node` marker names the requirement, and CI
has Node and npm, so it runs there.
"""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
from helpers.client.schema_tap import ROOT, SchemaTap
from helpers.everything_catalogue import COMMAND, check_catalogue, npm_env
from helpers.everything_catalogue import installed as installed  # the fixture, shared

from mcpkit.client import Client, InputRequest
from mcpkit.transports.stdio.client import StdioServer

pytestmark = pytest.mark.node



FORMATTED = {"email": "ada@example.com", "uri": "https://example.com/ada", "date": "1815-12-10"}


def elicit(request: InputRequest) -> dict[str, Any]:
    content: dict[str, Any] = {}
    for name, prop in request.schema.get("properties", {}).items():
        kind = prop.get("type")
        if "default" in prop:
            continue  # the client fills defaults in (ELIC-6)
        if kind == "string":
            # The client checks every answer against the form (formats included) before sending.
            content[name] = prop.get("enum", [FORMATTED.get(prop.get("format"), "Ada")])[0]
        elif kind in ("integer", "number"):
            content[name] = 7
        elif kind == "boolean":
            content[name] = True
    return {"action": "accept", "content": content}


def sample(request: InputRequest) -> dict[str, Any]:
    return {"role": "assistant", "content": {"type": "text", "text": "Paris"},
            "model": "test-model", "stopReason": "endTurn"}


@pytest.fixture
async def everything(installed: None) -> AsyncIterator[Client]:
    tap = SchemaTap(check_server=False)
    client = Client(StdioServer(COMMAND, env=npm_env(), stderr="capture", tap=tap),
                    elicit=elicit, sample=sample, roots=[{"uri": "file:///work", "name": "w"}])
    client.tap = tap  # type: ignore[attr-defined]
    async with client:
        yield client
    tap.assert_clean()


async def test_the_reference_server_is_reached_by_falling_back_to_initialize(
    everything: Client,
) -> None:
    client = everything
    info = await client.discover()
    assert (client.era, client.protocol_version) == ("legacy", "2025-11-25")
    assert client.server_info is not None
    assert client.server_info["name"] == "mcp-servers/everything"
    assert "tools" in info["capabilities"]
    sent = [m.get("method") for m in client.tap.sent]  # type: ignore[attr-defined]
    assert sent[:3] == ["server/discover", "initialize", "notifications/initialized"]


async def test_tools_resources_and_prompts_work_on_the_reference_server(
    everything: Client,
) -> None:
    tools = await check_catalogue(
        everything, {"echo", "get-sum", "trigger-elicitation-request"})
    assert tools["echo"]["inputSchema"]["$schema"].startswith("http://json-schema.org/draft-07")


async def test_the_reference_servers_own_requests_reach_the_same_handlers(
    everything: Client,
) -> None:
    client = everything
    elicited = await client.call_tool("trigger-elicitation-request", {})
    assert "User provided the requested information" in elicited["content"][0]["text"]
    sampled = await client.call_tool("trigger-sampling-request",
                                     {"prompt": "Capital of France?", "maxTokens": 20})
    assert "Paris" in sampled["content"][0]["text"]
    roots = await client.call_tool("get-roots-list", {})
    assert "file:///work" in roots["content"][0]["text"]


async def test_the_cli_lists_the_reference_servers_tools(installed: None, tmp_path: Path) -> None:
    done = subprocess.run(
        [sys.executable, "-m", "mcpkit", "tools", COMMAND], capture_output=True, text=True,
        env={**os.environ, **npm_env(), "XDG_CACHE_HOME": str(tmp_path)}, cwd=ROOT, timeout=120,
    )
    assert done.returncode == 0, done.stderr
    first = done.stdout.splitlines()[0]
    assert first.startswith("Everything Reference Server 2.0.0 · legacy 2025-11-25 · ")
    assert "  echo(message: string)" in done.stdout
