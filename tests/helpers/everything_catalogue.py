"""The MCP reference "everything" server as the tests run it: the pinned package, its npm cache,
the install fixture, and what the interop tests (stdio, Streamable HTTP) check of its catalogue.

The server is the same package on every transport and in the probe's tests, so one place pins
it and one list of calls says what interop means for tools, resources, prompts and completion;
each test adds what its transport shows.
"""

from __future__ import annotations

import os
import shutil
import subprocess
from typing import Any

import pytest

from helpers.client.schema_tap import ROOT
from mcpkit import Client

PACKAGE = "@modelcontextprotocol/server-everything@2026.8.31"
COMMAND = f"npx -y {PACKAGE} stdio"
CACHE = ROOT / ".cache" / "npm"


def npm_env() -> dict[str, str]:
    return {"npm_config_cache": str(CACHE), "npm_config_update_notifier": "false",
            "npm_config_fund": "false"}


@pytest.fixture(scope="module")
def installed() -> None:
    """Install (once) into .cache/npm and start the package with stdin closed, so later
    starts are quick."""
    if shutil.which("npx") is None:
        pytest.fail("this test needs Node.js and npm (npx on PATH); leave it out with "
                    "-m 'not node'")
    CACHE.mkdir(parents=True, exist_ok=True)
    done = subprocess.run(
        ["npx", "-y", PACKAGE, "stdio"], stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE, env={**os.environ, **npm_env()}, cwd=ROOT, timeout=600,
    )
    assert done.returncode == 0, done.stderr.decode(errors="replace")[-2000:]


async def check_catalogue(client: Client, tools_expected: set[str]) -> dict[str, Any]:
    """Call one of each kind against the reference server; returns its tools by name."""
    tools = {t["name"]: t for t in await client.list_tools()}
    assert tools_expected <= set(tools)
    assert client.rejected_tools == []
    echo = await client.call_tool("echo", {"message": "hello"})
    assert echo["content"][0]["text"] == "Echo: hello"
    total = await client.call_tool("get-sum", {"a": 2, "b": 3})
    assert "5" in total["content"][0]["text"]
    resources = await client.list_resources()
    read = await client.read_resource(resources[0]["uri"])
    assert read["contents"][0]["uri"] == resources[0]["uri"]
    prompt = await client.get_prompt("args-prompt", {"city": "Paris"})
    assert "Paris" in prompt["messages"][0]["content"]["text"]
    completion = await client.complete({"type": "ref/prompt", "name": "completable-prompt"},
                                       "department", "E")
    assert "Engineering" in completion["values"]
    return tools
