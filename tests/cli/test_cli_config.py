"""`mcpkit config NAME TARGET`: the entry a host reads, printed for stdio and HTTP, and written
into a host's file with a backup and a diff; a malformed file is refused and left alone."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from cli_run import SERVER, mcpkit


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

