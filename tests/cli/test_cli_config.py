"""`mcpkit config NAME TARGET`: the entry a host reads, printed for stdio and HTTP, and written
into a host's file with a backup and a diff; a malformed file is refused and left alone."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from cli_run import SERVER, environ, mcpkit

URL = "https://mcp.example.com/mcp"


def test_the_stdio_entry_runs_this_mcpkit_on_the_absolute_file(tmp_path: Path) -> None:
    done = mcpkit(tmp_path, "config", "hour", "tests/cli/first_hour_server.py",
                  "--env", "CALENDAR_DB=/tmp/x.db")
    assert done.returncode == 0, done.stderr
    entry = json.loads(done.stdout)["mcpServers"]["hour"]
    assert entry["args"][-2:] == ["run", SERVER]
    assert Path(entry["command"]).is_absolute()
    assert entry["env"] == {"CALENDAR_DB": "/tmp/x.db"}
    # The entry works as a host would run it: it lists the server's tools.
    listed = mcpkit(tmp_path, "tools", " ".join([entry["command"], *entry["args"]]))
    assert listed.returncode == 0 and "chatty(text: string)" in listed.stdout


def test_the_http_entry_is_the_url(tmp_path: Path) -> None:
    done = mcpkit(tmp_path, "config", "remote", "http://127.0.0.1:8000/mcp")
    assert json.loads(done.stdout) == {"mcpServers": {"remote": {"url": "http://127.0.0.1:8000/mcp"}}}


def test_write_adds_the_entry_keeps_the_others_a_backup_and_shows_the_diff(
    tmp_path: Path
) -> None:
    config = tmp_path / "claude_desktop_config.json"
    before = {"mcpServers": {"other": {"command": "other-server"}}, "theme": "dark"}
    config.write_text(json.dumps(before, indent=2))
    done = mcpkit(tmp_path, "config", "hour", SERVER, "--write", "claude-desktop",
                  "--config-file", str(config))
    assert done.returncode == 0, done.stderr
    after = json.loads(config.read_text())
    assert after["theme"] == "dark" and after["mcpServers"]["other"] == {"command": "other-server"}
    assert after["mcpServers"]["hour"]["args"][-2:] == ["run", SERVER]
    backups = list(tmp_path.glob("claude_desktop_config.json.bak-*"))
    assert len(backups) == 1 and json.loads(backups[0].read_text()) == before
    assert '+    "hour": {' in done.stdout and done.stdout.startswith("---")
    assert f"the old file is kept as {backups[0]}" in done.stderr
    again = mcpkit(tmp_path, "config", "hour", SERVER, "--write", "claude-desktop",
                   "--config-file", str(config))
    assert again.returncode == 0 and "nothing changed" in again.stderr
    assert len(list(tmp_path.glob("*.bak-*"))) == 1


def test_vscode_entries_live_under_servers_with_their_type(tmp_path: Path) -> None:
    config = tmp_path / ".vscode" / "mcp.json"
    done = mcpkit(tmp_path, "config", "remote", "http://127.0.0.1:8000/mcp", "--write",
                  "vscode", "--config-file", str(config))
    assert done.returncode == 0, done.stderr
    assert json.loads(config.read_text()) == {
        "servers": {"remote": {"type": "http", "url": "http://127.0.0.1:8000/mcp"}}}
    assert list(tmp_path.rglob("*.bak-*")) == []  # there was nothing to keep


@pytest.mark.parametrize("text", ["{not json", "[1, 2]", '{"mcpServers": []}'])
def test_a_malformed_config_file_is_refused_and_left_as_it_was(tmp_path: Path, text: str) -> None:
    config = tmp_path / "mcp.json"
    config.write_text(text)
    done = mcpkit(tmp_path, "config", "hour", SERVER, "--write", "cursor",
                  "--config-file", str(config))
    assert done.returncode == 2
    assert "it was not changed" in done.stderr and "Traceback" not in done.stderr
    assert config.read_text() == text
    assert list(tmp_path.glob("*.bak-*")) == []


def test_claude_desktop_is_not_given_a_url(tmp_path: Path) -> None:
    done = mcpkit(tmp_path, "config", "remote", "https://example.com/mcp", "--write",
                  "claude-desktop", "--config-file", str(tmp_path / "c.json"))
    assert done.returncode == 2 and "reads only stdio servers" in done.stderr
    assert not (tmp_path / "c.json").exists()



def config_in(folder: Path, *args: str) -> subprocess.CompletedProcess[str]:
    """`mcpkit config ARGS` run in `folder`, its home and config folders inside it."""
    env = {**environ(folder), "XDG_CONFIG_HOME": str(folder / "xdg"),
           "APPDATA": str(folder / "appdata")}
    return subprocess.run([sys.executable, "-m", "mcpkit", "config", *args], cwd=folder,
                          capture_output=True, text=True, env=env, timeout=60)


HOME_FILES = {
    "claude-code": ".mcp.json",
    "cursor": "home/.cursor/mcp.json",
    "vscode": ".vscode/mcp.json",
    "gemini": "home/.gemini/settings.json",
    "windsurf": "home/.codeium/windsurf/mcp_config.json",
    "goose": "xdg/goose/config.yaml",
    "claude-desktop": "xdg/Claude/claude_desktop_config.json",
}
"""Where each host keeps its file, under the folder a test runs in (Linux paths)."""


def load(path: Path) -> Any:
    if path.suffix == ".yaml":
        from ruamel.yaml import YAML

        return YAML(typ="safe").load(path.read_text())
    return json.loads(path.read_text())


STDIO_SHAPES = {
    "claude-code": ("mcpServers", {"type": "stdio", "command": ..., "args": ...,
                                   "env": {"K": "v"}}),
    "cursor": ("mcpServers", {"command": ..., "args": ..., "env": {"K": "v"}}),
    "vscode": ("servers", {"type": "stdio", "command": ..., "args": ..., "env": {"K": "v"}}),
    "gemini": ("mcpServers", {"command": ..., "args": ..., "env": {"K": "v"}}),
    "windsurf": ("mcpServers", {"command": ..., "args": ..., "env": {"K": "v"}}),
    "claude-desktop": ("mcpServers", {"command": ..., "args": ..., "env": {"K": "v"}}),
    "goose": ("extensions", {"name": "hour", "enabled": True, "type": "stdio", "cmd": ...,
                             "args": ..., "envs": {"K": "v"}, "env_keys": [], "timeout": 300,
                             "description": "hour (written by mcpkit config)"}),
}


@pytest.mark.parametrize("host", sorted(STDIO_SHAPES))
def test_each_host_gets_a_stdio_entry_in_its_own_file_and_spelling(
    tmp_path: Path, host: str,
) -> None:
    done = config_in(tmp_path, "hour", SERVER, "--env", "K=v", "--write", host)
    assert done.returncode == 0, done.stderr
    path = tmp_path / HOME_FILES[host]
    key, shape = STDIO_SHAPES[host]
    entry = load(path)[key]["hour"]
    command = entry.get("command", entry.get("cmd"))
    assert Path(command).is_absolute() and entry["args"][-2:] == ["run", SERVER]
    assert {k: v for k, v in entry.items() if shape.get(k) is not ...} == {
        k: v for k, v in shape.items() if v is not ...}
    assert set(entry) == set(shape)
    assert done.stdout.startswith("---") and "restart " in done.stderr
    listed = mcpkit(tmp_path, "tools", " ".join([command, *entry["args"]]))
    assert listed.returncode == 0 and "chatty(text: string)" in listed.stdout


HTTP_SHAPES = {
    "claude-code": ("mcpServers", {"type": "http", "url": URL, "headers": {"X-Key": "k"}}),
    "cursor": ("mcpServers", {"url": URL, "headers": {"X-Key": "k"}}),
    "vscode": ("servers", {"type": "http", "url": URL, "headers": {"X-Key": "k"}}),
    "gemini": ("mcpServers", {"httpUrl": URL, "headers": {"X-Key": "k"}}),
    "windsurf": ("mcpServers", {"serverUrl": URL, "headers": {"X-Key": "k"}}),
    "goose": ("extensions", {"name": "remote", "enabled": True, "type": "streamable_http",
                             "uri": URL, "headers": {"X-Key": "k"}, "envs": {},
                             "env_keys": [], "timeout": 300,
                             "description": "remote (written by mcpkit config)"}),
}


@pytest.mark.parametrize("host", sorted(HTTP_SHAPES))
def test_each_host_gets_an_http_entry_in_its_own_spelling(tmp_path: Path, host: str) -> None:
    done = config_in(tmp_path, "remote", URL, "--header", "X-Key: k", "--write", host)
    assert done.returncode == 0, done.stderr
    key, shape = HTTP_SHAPES[host]
    assert load(tmp_path / HOME_FILES[host])[key] == {"remote": shape}


def test_goose_keeps_its_yaml_comments_and_other_settings(tmp_path: Path) -> None:
    config = tmp_path / "config.yaml"
    before = ("# goose settings, kept by hand\nGOOSE_PROVIDER: anthropic  # the provider\n"
              "extensions:\n  developer:\n    enabled: true\n    type: builtin\n"
              "    name: developer\n")
    config.write_text(before)
    done = config_in(tmp_path, "hour", SERVER, "--write", "goose", "--config-file", str(config))
    assert done.returncode == 0, done.stderr
    after = config.read_text()
    assert after.startswith(before), "the file only grows by the new entry"
    hour = load(config)["extensions"]["hour"]
    assert hour["type"] == "stdio" and hour["args"][-2:] == ["run", SERVER]
    assert load(config)["GOOSE_PROVIDER"] == "anthropic"
    [backup] = tmp_path.glob("config.yaml.bak-*")
    assert backup.read_text() == before
    assert "+  hour:" in done.stdout
    config.write_text("extensions: [1, 2]\n")
    refused = config_in(tmp_path, "hour", SERVER, "--write", "goose", "--config-file",
                        str(config))
    assert refused.returncode == 2 and "it was not changed" in refused.stderr
    config.write_text("extensions: {a: [\n")
    refused = config_in(tmp_path, "hour", SERVER, "--write", "goose", "--config-file",
                        str(config))
    assert refused.returncode == 2 and "not valid YAML" in refused.stderr
    assert config.read_text() == "extensions: {a: [\n"


def test_a_uvx_entry_lets_uvx_install_mcpkit_and_the_servers_packages(tmp_path: Path) -> None:
    from mcpkit import __version__

    done = config_in(tmp_path, "hour", SERVER, "--uvx", "--with", "pendulum", "--with", "rich")
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["mcpServers"]["hour"] == {
        "command": "uvx",
        "args": ["--from", f"mcpkit=={__version__}", "--with", "pendulum", "--with", "rich",
                 "mcpkit", "run", SERVER]}
    pinned = config_in(tmp_path, "hour", "mypkg.app:server", "--uvx", "mcpkit[pydantic]",
                       "--with", "mypkg", "--write", "cursor")
    assert pinned.returncode == 0, pinned.stderr
    assert load(tmp_path / HOME_FILES["cursor"])["mcpServers"]["hour"]["args"] == [
        "--from", "mcpkit[pydantic]", "--with", "mypkg", "mcpkit", "run", "mypkg.app:server"]


@pytest.mark.parametrize(("args", "message"), [
    (["--with", "x"], "--with names packages for uvx to install; add --uvx"),
    (["--header", "A: b"], "--header is for HTTP servers"),
    (["--header", "nocolon"], "--header 'nocolon' must look like 'Name: value'"),
])
def test_options_that_do_not_fit_the_entry_are_refused(
    tmp_path: Path, args: list[str], message: str,
) -> None:
    target = URL if "nocolon" in args else SERVER
    done = config_in(tmp_path, "hour", target, *args)
    assert done.returncode == 2 and message in done.stderr
    http = config_in(tmp_path, "remote", URL, "--uvx")
    assert http.returncode == 2 and "--uvx starts a stdio server" in http.stderr
