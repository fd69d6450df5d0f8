"""`mcpkit run --openapi`: what it refuses, each in one line with status 2, and its operations
added to a server file's own tools."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from helpers.client.schema_tap import SchemaTap
from petstore_calls import PETSTORE

from mcpkit.client import Client
from mcpkit.transports.stdio.client import StdioServer

ROOT = Path(__file__).resolve().parents[2]


def run(*args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "mcpkit", "run", *args], capture_output=True,
                          text=True, timeout=60, cwd=ROOT, stdin=subprocess.DEVNULL,
                          env={**os.environ, **(env or {})})


@pytest.mark.parametrize(("args", "line"), [
    (["--base-url", "http://127.0.0.1:1"],
     "--base-url belongs to the API of --openapi SPEC; add it"),
    (["--api-header", "X-Key: 1"], "--api-header belongs to the API of --openapi SPEC; add it"),
    (["--openapi", str(PETSTORE), "--base-url", "ftp://x"],
     "--base-url 'ftp://x' is not an http(s) URL, e.g. https://api.example.com/v1"),
    (["--openapi", str(PETSTORE), "--api-header", "no colon"],
     "--api-header: expected 'NAME: VALUE', e.g. 'Authorization: Bearer $API_TOKEN', not "
     "'no colon'"),
    (["--openapi", str(PETSTORE), "--base-url", "http://127.0.0.1:1", "--api-header",
      "X-Api-Key: $NOT_SET_ANYWHERE_7"],
     "--api-header X-Api-Key: the environment variable NOT_SET_ANYWHERE_7 is not set"),
    (["--openapi", str(PETSTORE), "--http", "127.0.0.1:0", "--workers", "2"],
     "--openapi is served by one process: without --workers and --reload (a server file built "
     "with Server.from_openapi takes both)"),
    (["--openapi", "no-such-file.yaml"],
     "--openapi no-such-file.yaml: cannot be read (No such file or directory)"),
    (["--openapi", str(PETSTORE)],
     f"--openapi {PETSTORE}: no base URL for GET /pets (listPets): it names no servers; pass "
     "base_url= (mcpkit run --base-url URL) or a client with a base_url"),
])
def test_what_mcpkit_run_openapi_refuses_is_one_line_and_status_2(
        args: list[str], line: str) -> None:
    done = run(*args)
    assert done.returncode == 2, done.stderr
    assert done.stderr == f"mcpkit run: {line}\n"
    assert done.stdout == ""


def test_the_options_are_settings_with_environment_variables_and_the_headers_hidden() -> None:
    env = {"MCPKIT_OPENAPI": str(PETSTORE), "MCPKIT_BASE_URL": "http://127.0.0.1:1",
           "MCPKIT_API_HEADER": "X-Api-Key: secret-1\nX-Other: 2"}
    shown = run("--show-config", env=env)
    assert shown.returncode == 0, shown.stderr
    lines = {line.split()[0]: line for line in shown.stdout.splitlines() if line.strip()}
    assert "secret-1" not in shown.stdout
    assert any("MCPKIT_API_HEADER" in line for line in lines.values()), shown.stdout
    refused = run(env={**env, "MCPKIT_API_HEADER": "X-Api-Key: $NOT_SET_ANYWHERE_7"})
    assert refused.stderr == ("mcpkit run: --api-header X-Api-Key: the environment variable "
                              "NOT_SET_ANYWHERE_7 is not set\n")


async def test_beside_a_server_file_the_apis_operations_join_its_own_tools(
        tmp_path: Path) -> None:
    file = tmp_path / "mine.py"
    file.write_text("from mcpkit import Server\nserver = Server('mine')\n\n"
                    "@server.tool()\ndef hello() -> str:\n    return 'hi'\n")
    tap = SchemaTap()
    connector = StdioServer([sys.executable, "-m", "mcpkit", "run", str(file), "--openapi",
                             str(PETSTORE), "--base-url", "http://127.0.0.1:1"],
                            cwd=str(ROOT), stderr="capture", tap=tap)
    async with Client(connector) as client:
        names = {t["name"] for t in [item.raw for item in await client.list_tools()]}
        assert client.server_info is not None and client.server_info["name"] == "mine"
        assert {"hello", "getPet", "listPets"} <= names
        assert ((await client.call_tool("hello", {})).raw)["content"][0]["text"] == "hi"
        unreachable = (await client.call_tool("getPet", {"petId": 1})).raw
        assert "failed: ConnectError" in unreachable["content"][0]["text"]
    tap.assert_clean()
