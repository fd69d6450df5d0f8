"""The servers an `mcpServers` file names, read the way the hosts read it.

MCP hosts keep their servers in one JSON shape with small differences: most under
`mcpServers` (Claude Desktop and Claude Code, Cursor, Windsurf, Gemini CLI), VS Code under
`servers`. A stdio entry has `command`, `args`, `env` (and `cwd`); an HTTP entry a URL, spelled
`url` (most hosts), `httpUrl` (Gemini CLI) or `serverUrl` (Windsurf), and `headers`; `type`
says which when present (`stdio`, `http` or `streamable-http`, `sse`). Strings may name
environment variables as Claude Code, Cursor and VS Code write them: `${VAR}`, `${VAR:-default}`
and `${env:VAR}` (a relative `cwd` is taken from the file's folder). An entry with
`"disabled": true` is listed but skipped by `Clients`.

What the client cannot use is refused here, naming the file, the entry and the fix: a file that
is not JSON or holds no servers, a name it does not hold, an entry with neither a command nor a
URL, a member of the wrong type, a variable that is not set, and `"type": "sse"` (the
2024-11-05 HTTP+SSE transport, which mcpkit does not speak; the server's Streamable HTTP URL,
often the same path without `/sse`, works).

Builds no connector: the transports sit above the client (`mcpkit.transports.entries` makes
one of a `ServerEntry`). May import `mcpkit.errors` and the standard library.
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Final, Literal

from mcpkit.errors import ServerConfigError

__all__ = [
    "ServerEntry",
    "read_entries",
    "read_entry",
]

_KEYS: Final = ("mcpServers", "servers")
_URL_KEYS: Final = ("url", "httpUrl", "serverUrl")
_HTTP_TYPES: Final = frozenset({"http", "streamable-http", "streamable_http", "streamableHttp"})
_VARIABLE = re.compile(r"\$\{(?:env:)?([A-Za-z_][A-Za-z0-9_]*)(?::-([^}]*))?\}")


@dataclass(frozen=True)
class ServerEntry:
    """One server of an `mcpServers` file: a command to start (stdio) or a URL to reach."""

    name: str
    transport: Literal["stdio", "http"]
    command: str | None = None
    args: tuple[str, ...] = ()
    env: Mapping[str, str] = field(default_factory=dict)
    cwd: str | None = None
    url: str | None = None
    headers: Mapping[str, str] = field(default_factory=dict)
    disabled: bool = False
    source: str = ""
    """The file the entry came from."""


def _expand(text: str, environ: Mapping[str, str], where: str, path: str) -> str:
    def value(match: re.Match[str]) -> str:
        name, default = match.group(1), match.group(2)
        found = environ.get(name)
        if found is not None and (found or default is None):
            return found
        if default is not None:
            return default
        raise ServerConfigError(
            f"{path}: {where} names ${{{name}}}, which is not set; set it in the environment, "
            f"or write a default as ${{{name}:-value}}", path)

    return _VARIABLE.sub(value, text)


class _Reader:
    """Reads one entry's members, each checked, with its variables expanded."""

    def __init__(self, name: str, raw: Mapping[str, Any], path: str,
                 environ: Mapping[str, str]) -> None:
        self.name, self.raw, self.path, self.environ = name, raw, path, environ

    def fail(self, problem: str) -> ServerConfigError:
        return ServerConfigError(f"{self.path}: server {self.name!r}: {problem}", self.path)

    def text(self, key: str) -> str | None:
        value = self.raw.get(key)
        if value is None:
            return None
        if not isinstance(value, str):
            raise self.fail(f"{key!r} must be a string, not {type(value).__name__}")
        return _expand(value, self.environ, f"server {self.name!r} {key}", self.path)

    def strings(self, key: str) -> tuple[str, ...]:
        value = self.raw.get(key) or []
        if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
            raise self.fail(f"{key!r} must be a list of strings")
        return tuple(_expand(v, self.environ, f"server {self.name!r} {key}", self.path)
                     for v in value)

    def table(self, key: str) -> dict[str, str]:
        value = self.raw.get(key) or {}
        if not isinstance(value, dict) or not all(
                isinstance(k, str) and isinstance(v, str) for k, v in value.items()):
            raise self.fail(f"{key!r} must be an object of strings")
        return {k: _expand(v, self.environ, f"server {self.name!r} {key}.{k}", self.path)
                for k, v in value.items()}

    def entry(self) -> ServerEntry:
        kind = self.raw.get("type")
        urls = [k for k in _URL_KEYS if self.raw.get(k) is not None]
        if kind == "sse":
            raise self.fail(
                '"type": "sse" is the 2024-11-05 HTTP+SSE transport, which mcpkit does not '
                "speak; give the server's Streamable HTTP URL with \"type\": \"http\"")
        if kind is not None and kind != "stdio" and kind not in _HTTP_TYPES:
            raise self.fail(f"unknown type {kind!r} (stdio, http or streamable-http)")
        disabled = self.raw.get("disabled") is True
        if kind in _HTTP_TYPES or (kind is None and urls and "command" not in self.raw):
            if not urls:
                raise self.fail(f"an HTTP server needs a URL ({', '.join(_URL_KEYS)})")
            url = self.text(urls[0])
            assert url is not None
            if not url.startswith(("http://", "https://")):
                raise self.fail(f"{urls[0]} {url!r} is not an http(s) URL")
            return ServerEntry(self.name, "http", url=url, headers=self.table("headers"),
                               disabled=disabled, source=self.path)
        command = self.text("command")
        if not command:
            raise self.fail("it has neither a command (stdio) nor a URL (HTTP)")
        cwd = self.text("cwd")
        if cwd is not None and not os.path.isabs(cwd):
            cwd = str(Path(self.path).resolve().parent / cwd)
        return ServerEntry(self.name, "stdio", command=command, args=self.strings("args"),
                           env=self.table("env"), cwd=cwd, disabled=disabled,
                           source=self.path)


def _servers(path: str) -> dict[str, Any]:
    try:
        text = Path(path).read_text(encoding="utf-8")
    except FileNotFoundError:
        raise ServerConfigError(f"{path}: no such file", path) from None
    except (OSError, UnicodeDecodeError) as exc:
        raise ServerConfigError(f"{path}: cannot read it ({exc})", path) from None
    try:
        document = json.loads(text)
    except ValueError as exc:
        raise ServerConfigError(f"{path} is not valid JSON ({exc})", path) from None
    if isinstance(document, dict):
        for key in _KEYS:
            servers = document.get(key)
            if isinstance(servers, dict):
                return servers
    raise ServerConfigError(
        f"{path} names no servers: expected an object with \"mcpServers\" (or VS Code's "
        '"servers") mapping each name to its entry', path)


def read_entries(path: str | os.PathLike[str],
                 environ: Mapping[str, str] | None = None) -> dict[str, ServerEntry]:
    """Every server the file names, by name (`environ` fills `${VAR}`; default: this
    process's environment)."""
    where = os.fspath(path)
    env = os.environ if environ is None else environ
    entries = {}
    for name, raw in _servers(where).items():
        if not isinstance(raw, dict):
            raise ServerConfigError(f"{where}: server {name!r} is not an object", where)
        entries[name] = _Reader(name, raw, where, env).entry()
    return entries


def read_entry(path: str | os.PathLike[str], name: str,
               environ: Mapping[str, str] | None = None) -> ServerEntry:
    """The server `name` of the file; refused, naming the ones it has, when it has none such.
    Only that entry is read, so another entry's unset variable does not stop it."""
    where = os.fspath(path)
    servers = _servers(where)
    raw = servers.get(name)
    if raw is None:
        known = ", ".join(sorted(servers)) or "none"
        raise ServerConfigError(f"{where}: no server named {name!r} (it names: {known})", where)
    if not isinstance(raw, dict):
        raise ServerConfigError(f"{where}: server {name!r} is not an object", where)
    return _Reader(name, raw, where, os.environ if environ is None else environ).entry()
