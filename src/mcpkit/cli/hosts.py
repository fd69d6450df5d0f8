"""The MCP hosts `mcpkit config --write` knows: where each keeps its file, under which key,
and how it spells a server's entry.

Every host reads the same two facts about a server, a command to start (with its arguments
and environment) or a URL to reach (with its headers), and spells them its own way:

| host | file | key | stdio | HTTP |
| --- | --- | --- | --- | --- |
| Claude Desktop | its app-data folder | `mcpServers` | command, args, env | (not in the file) |
| Claude Code | `.mcp.json` of the project | `mcpServers` | `type: stdio` | `type: http`, url |
| Cursor | `~/.cursor/mcp.json` | `mcpServers` | command, args, env | url |
| VS Code | `.vscode/mcp.json` of the folder | `servers` | `type: stdio` | `type: http`, url |
| Gemini CLI | `~/.gemini/settings.json` | `mcpServers` | command, args, env | httpUrl |
| Windsurf | `~/.codeium/windsurf/mcp_config.json` | `mcpServers` | command, args, env | serverUrl |
| Goose | `~/.config/goose/config.yaml` (YAML) | `extensions` | `type: stdio`, cmd, envs | `type: streamable_http`, uri |

`Launch` holds the two facts; a `Host`'s `spell` turns them into that host's entry. Imports
the standard library only.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Final, Literal

__all__ = [
    "HOSTS",
    "Host",
    "Launch",
    "plain_entry",
]


@dataclass(frozen=True)
class Launch:
    """How a host reaches a server: a command to run, or a URL."""

    command: str | None = None
    args: tuple[str, ...] = ()
    env: dict[str, str] = field(default_factory=dict)
    url: str | None = None
    headers: dict[str, str] = field(default_factory=dict)


def _plain(launch: Launch, url_key: str = "url", typed: bool = False) -> dict[str, Any]:
    """The `mcpServers` spelling most hosts share; `typed` adds `"type"`."""
    entry: dict[str, Any] = {}
    if launch.url is not None:
        if typed:
            entry["type"] = "http"
        entry[url_key] = launch.url
        if launch.headers:
            entry["headers"] = dict(launch.headers)
        return entry
    if typed:
        entry["type"] = "stdio"
    entry.update(command=launch.command, args=list(launch.args))
    if launch.env:
        entry["env"] = dict(launch.env)
    return entry


def _goose(name: str, launch: Launch) -> dict[str, Any]:
    """A Goose extension: its own field names, enabled, with Goose's usual timeout."""
    entry: dict[str, Any] = {"name": name, "enabled": True}
    if launch.url is not None:
        entry.update(type="streamable_http", uri=launch.url, headers=dict(launch.headers))
        entry.update(envs={}, env_keys=[])
    else:
        entry.update(type="stdio", cmd=launch.command, args=list(launch.args),
                     envs=dict(launch.env), env_keys=[])
    entry.update(timeout=300, description=f"{name} (written by mcpkit config)")
    return entry


def _home() -> Path:
    return Path.home()


def _config_home() -> Path:
    return Path(os.environ.get("XDG_CONFIG_HOME") or _home() / ".config")


def _appdata() -> Path:
    return Path(os.environ.get("APPDATA") or _home() / "AppData" / "Roaming")


def _claude_desktop() -> Path:
    if sys.platform == "darwin":
        return _home() / "Library/Application Support/Claude/claude_desktop_config.json"
    if os.name == "nt":
        return _appdata() / "Claude" / "claude_desktop_config.json"
    return _config_home() / "Claude" / "claude_desktop_config.json"


def _goose_file() -> Path:
    if os.name == "nt":
        return _appdata() / "Block" / "goose" / "config" / "config.yaml"
    return _config_home() / "goose" / "config.yaml"


@dataclass(frozen=True)
class Host:
    """An MCP host: its file, the key its servers live under, how it spells an entry."""

    title: str
    key: str
    where: Callable[[], Path]
    """Where its file is on this system (`mcpkit config --config-file` names another)."""
    spell: Callable[[str, Launch], dict[str, Any]]
    """`(name, launch)` -> the entry as this host writes it."""
    http: bool = True
    """Its file can name an HTTP server by URL."""
    format: Literal["json", "yaml"] = "json"
    place: str = ""
    """How docs and `--help` say where the file is."""

    def path(self) -> Path:
        return self.where()


HOSTS: Final[dict[str, Host]] = {
    "claude-desktop": Host("Claude Desktop", "mcpServers", _claude_desktop,
                           lambda n, launch: _plain(launch), http=False,
                           place="its folder in the user's app data"),
    "claude-code": Host("Claude Code", "mcpServers", lambda: Path.cwd() / ".mcp.json",
                        lambda n, launch: _plain(launch, typed=True),
                        place=".mcp.json in this folder (the project's)"),
    "cursor": Host("Cursor", "mcpServers", lambda: _home() / ".cursor" / "mcp.json",
                   lambda n, launch: _plain(launch), place="~/.cursor/mcp.json"),
    "vscode": Host("VS Code", "servers", lambda: Path.cwd() / ".vscode" / "mcp.json",
                   lambda n, launch: _plain(launch, typed=True),
                   place=".vscode/mcp.json in this folder"),
    "gemini": Host("Gemini CLI", "mcpServers", lambda: _home() / ".gemini" / "settings.json",
                   lambda n, launch: _plain(launch, url_key="httpUrl"),
                   place="~/.gemini/settings.json"),
    "windsurf": Host("Windsurf", "mcpServers",
                     lambda: _home() / ".codeium" / "windsurf" / "mcp_config.json",
                     lambda n, launch: _plain(launch, url_key="serverUrl"),
                     place="~/.codeium/windsurf/mcp_config.json"),
    "goose": Host("Goose", "extensions", _goose_file, _goose, format="yaml",
                  place="~/.config/goose/config.yaml"),
}
"""Every host `--write` knows, by the name it takes."""


def plain_entry(launch: Launch) -> dict[str, Any]:
    """The entry printed without `--write`: the `mcpServers` spelling most hosts read."""
    return _plain(launch)
