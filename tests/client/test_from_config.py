"""Clients started from the mcpServers file an MCP host reads: `Client.from_config`,
`SyncClient.from_config`, `Clients` over several entries, and `mcpkit tools --config`, against
real stdio subprocesses and a real HTTP server that wants a header."""

from __future__ import annotations

import asyncio
import json
import sys
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
from helpers import HELPERS
from helpers.client.client_server import make_server
from helpers.client.schema_tap import ROOT, SchemaTap
from helpers.transports.http_peer import ServerChecks, checked_httpx_options
from helpers.transports.listening import listening

from mcpkit import Client, Clients, SyncClient
from mcpkit.client import ServerEntry, read_entries, read_entry
from mcpkit.errors import AuthError, InvalidParamsError, ServerConfigError

HERE = Path(__file__).resolve().parent
KEY = "s3cret-key"


def gated(app: Any) -> Any:
    """`app` behind a check of the X-Api-Key header, as a gateway in front of a server."""

    async def asgi(scope: dict[str, Any], receive: Any, send: Any) -> None:
        if scope["type"] == "http" and dict(scope["headers"]).get(b"x-api-key") != KEY.encode():
            await send({"type": "http.response.start", "status": 401,
                        "headers": [(b"content-type", b"text/plain")]})
            await send({"type": "http.response.body", "body": b"missing or wrong X-Api-Key"})
            return
        await app(scope, receive, send)

    return asgi


@pytest.fixture
async def http_url() -> AsyncIterator[str]:
    async with listening(gated(make_server().asgi())) as served:
        yield served.url


def write_config(path: Path, servers: dict[str, Any], key: str = "mcpServers") -> Path:
    path.write_text(json.dumps({key: servers, "otherSetting": True}))
    return path


def stdio_entry(folder: Path) -> dict[str, Any]:
    """An entry that runs config_server.py in `folder/work`, named relative to the file."""
    (folder / "work").mkdir(exist_ok=True)
    return {"command": sys.executable,
            "args": ["-m", "mcpkit", "run", str(HELPERS / "client" / "config_server.py")],
            "env": {"GREETING": "${T28B_GREETING}", "FALLBACK": "${T28B_UNSET:-plain}"},
            "cwd": "work"}


class Checked:
    """Connector options that check every message against the schema, per kind of entry."""

    def __init__(self) -> None:
        self.taps: list[SchemaTap] = []
        self.http: list[ServerChecks] = []

    def __call__(self, entry: ServerEntry) -> dict[str, Any]:
        if entry.transport == "stdio":
            tap = SchemaTap()
            self.taps.append(tap)
            return {"tap": tap, "stderr": "capture"}
        options, checks = checked_httpx_options()
        self.http.append(checks)
        return {"httpx_options": options}

    def assert_clean(self) -> None:
        for tap in self.taps:
            tap.assert_clean()
        for checks in self.http:
            assert not checks.problems, checks.problems
        assert self.taps or self.http


async def test_a_stdio_entry_starts_its_command_with_its_env_and_cwd(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("T28B_GREETING", "hello from the environment")
    config = write_config(tmp_path / "mcp.json", {"configured": stdio_entry(tmp_path)})
    checked = Checked()
    async with Client.from_config(config, "configured", connector_options=checked) as client:
        greeting = await client.call_tool("setting", {"name": "GREETING"})
        fallback = await client.call_tool("setting", {"name": "FALLBACK"})
        folder = await client.call_tool("folder")
    assert greeting.text == "hello from the environment"
    assert fallback.text == "plain"
    assert Path(folder.text) == (tmp_path / "work").resolve(), "cwd is from the file's folder"
    checked.assert_clean()


async def test_an_http_entry_sends_its_headers(
    http_url: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("T28B_KEY", KEY)
    config = write_config(tmp_path / "mcp.json", {
        "remote": {"type": "http", "url": http_url, "headers": {"X-Api-Key": "${T28B_KEY}"}},
        "keyless": {"url": http_url},
    })
    checked = Checked()
    async with Client.from_config(config, "remote", connector_options=checked) as client:
        assert (await client.call_tool("add", {"a": 2, "b": 2})).structured == {"sum": 4}
    with pytest.raises(AuthError, match="401"):
        async with Client.from_config(config, "keyless", connector_options=checked):
            pass
    checked.assert_clean()


async def test_each_hosts_spelling_of_an_entry_is_read(tmp_path: Path) -> None:
    entries = {
        "cursor": {"url": "https://a.example/mcp"},
        "gemini": {"httpUrl": "https://b.example/mcp", "headers": {"A": "1"}},
        "windsurf": {"serverUrl": "https://c.example/mcp"},
        "claude": {"type": "http", "url": "https://d.example/mcp"},
        "local": {"type": "stdio", "command": "server", "args": ["--x"], "env": {"K": "v"}},
        "off": {"command": "server", "disabled": True},
    }
    read = read_entries(write_config(tmp_path / "mcp.json", entries), environ={})
    assert {n: e.url for n, e in read.items() if e.transport == "http"} == {
        "cursor": "https://a.example/mcp", "gemini": "https://b.example/mcp",
        "windsurf": "https://c.example/mcp", "claude": "https://d.example/mcp"}
    assert read["gemini"].headers == {"A": "1"}
    assert (read["local"].command, read["local"].args, read["local"].env) == (
        "server", ("--x",), {"K": "v"})
    assert read["off"].disabled
    vscode = read_entries(write_config(tmp_path / "vscode.json", {"v": {
        "type": "stdio", "command": "x"}}, key="servers"), environ={})
    assert vscode["v"].command == "x"


@pytest.mark.parametrize(("servers", "name", "message"), [
    ({"a": {"command": "x"}}, "b", r"no server named 'b' \(it names: a\)"),
    ({"a": {"type": "sse", "url": "https://x/sse"}}, "a", r"'a'.*HTTP\+SSE transport.*"
                                                          r"Streamable HTTP URL"),
    ({"a": {"args": ["x"]}}, "a", "neither a command .* nor a URL"),
    ({"a": {"command": "x", "args": "--flag"}}, "a", "'args' must be a list of strings"),
    ({"a": {"command": "x", "env": {"N": 1}}}, "a", "'env' must be an object of strings"),
    ({"a": {"url": "ftp://x"}}, "a", "is not an http\\(s\\) URL"),
    ({"a": {"command": "${T28B_NEVER_SET}"}}, "a", r"names \$\{T28B_NEVER_SET\}, which is "
                                                   r"not set.*:-value"),
])
def test_an_entry_that_cannot_be_used_is_refused_naming_file_entry_and_fix(
    tmp_path: Path, servers: dict[str, Any], name: str, message: str,
) -> None:
    config = write_config(tmp_path / "mcp.json", servers)
    with pytest.raises(ServerConfigError, match=message) as caught:
        read_entry(config, name, environ={})
    assert caught.value.path == str(config)
    assert str(config) in str(caught.value)


@pytest.mark.parametrize(("text", "message"), [
    ("{not json", "is not valid JSON"),
    ('["a list"]', 'names no servers: expected an object with "mcpServers"'),
])
def test_a_file_that_is_not_an_mcpservers_file_is_refused(
    tmp_path: Path, text: str, message: str,
) -> None:
    path = tmp_path / "mcp.json"
    path.write_text(text)
    with pytest.raises(ServerConfigError, match=message):
        read_entry(path, "a")
    with pytest.raises(ServerConfigError, match="no such file"):
        read_entry(tmp_path / "missing.json", "a")


async def test_clients_list_every_servers_tools_by_server_and_route_each_call(
    http_url: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("T28B_GREETING", "hi")
    config = write_config(tmp_path / "mcp.json", {
        "local": stdio_entry(tmp_path),
        "remote": {"type": "http", "url": http_url, "headers": {"X-Api-Key": KEY}},
        "broken": {"command": "no-such-program", "disabled": True},
    })
    checked = Checked()
    async with Clients.from_config(config, connector_options=checked) as clients:
        assert sorted(clients) == ["local", "remote"], "a disabled entry is left out"
        tools = await clients.list_tools()
        names = {t.name for t in tools}
        assert {"local__setting", "local__folder", "remote__add"} <= names
        add = next(t for t in tools if t.name == "remote__add")
        assert (add.server, add.tool.name, add.raw["name"]) == ("remote", "add",
                                                                "remote__add")
        assert add.input_schema == add.tool.input_schema
        assert (await clients.call_tool("local__setting", {"name": "GREETING"})).text == "hi"
        summed = await clients.call_tool("remote__add", {"a": 1, "b": 2}, result=dict)
        assert summed.data == {"sum": 3}
        with pytest.raises(InvalidParamsError, match=r"SERVER__TOOL.*local, remote"):
            await clients.call_tool("nowhere__add")
        assert clients["remote"].era == "modern"
    checked.assert_clean()


def test_a_server_name_holding_the_separator_is_refused() -> None:
    with pytest.raises(ValueError, match=r"not hold the separator '__'.*'my__server'"):
        Clients({"my__server": object()})  # type: ignore[dict-item]


async def test_clients_name_the_server_that_failed_to_connect(tmp_path: Path) -> None:
    config = write_config(tmp_path / "mcp.json", {
        "fine": {"command": sys.executable, "args": ["-m", "mcpkit", "run",
                                                     str(HELPERS / "client" / "config_server.py")]},
        "missing": {"command": "no-such-program-t28b"},
    })
    clients = Clients.from_config(config, connector_options={"stderr": "capture"})
    with pytest.raises(Exception) as caught:
        await clients.connect()
    assert "connecting to server 'missing' of this Clients" in caught.value.__notes__
    assert clients["fine"].transport is None, "the one that connected was closed again"


def test_a_sync_client_starts_from_a_config_too(tmp_path: Path) -> None:
    config = write_config(tmp_path / "mcp.json", {"configured": {
        "command": sys.executable,
        "args": ["-m", "mcpkit", "run", str(HELPERS / "client" / "config_server.py")],
        "env": {"GREETING": "sync"}}})
    checked = Checked()
    with SyncClient.from_config(config, "configured", connector_options=checked) as client:
        assert client.call_tool("setting", {"name": "GREETING"}).text == "sync"
    checked.assert_clean()


async def run_cli(*args: str) -> tuple[int, str, str]:
    proc = await asyncio.create_subprocess_exec(
        sys.executable, "-m", "mcpkit", *args, cwd=ROOT, stdin=asyncio.subprocess.DEVNULL,
        stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE)
    out, err = await asyncio.wait_for(proc.communicate(), 60)
    assert proc.returncode is not None
    return proc.returncode, out.decode(), err.decode()


async def test_the_cli_talks_to_an_entry_of_a_config_file(http_url: str, tmp_path: Path) -> None:
    config = write_config(tmp_path / "mcp.json", {
        "local": {"command": sys.executable,
                  "args": ["-m", "mcpkit", "run", str(HELPERS / "client" / "config_server.py")]},
        "remote": {"type": "http", "url": http_url, "headers": {"X-Api-Key": KEY}},
    })
    status, out, err = await run_cli("tools", "--config", str(config), "local")
    assert status == 0, err
    assert "setting(name: string)" in out and "folder()" in out
    status, out, err = await run_cli("call", "--config", str(config), "remote", "add",
                                     "a=2", "b=5")
    assert status == 0, err
    assert json.loads(out) == {"sum": 7}
    status, out, err = await run_cli("tools", "--config", str(config), "elsewhere")
    assert status == 2
    assert "no server named 'elsewhere' (it names: local, remote)" in err
