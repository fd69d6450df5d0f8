"""`mcpkit config NAME TARGET`: the entry an MCP host reads to start or reach a server, and
`--write HOST` to put it in that host's config file.

A stdio entry runs this same mcpkit by absolute path (`mcpkit run /abs/server.py`), so the host
finds it whatever its PATH and working folder are; an HTTP entry is the URL. Printed, the entry
is wrapped the way most hosts read it (`{"mcpServers": {NAME: ...}}`). Written, it is added to
or replaces NAME in the host's file: a file that is not a JSON object is refused and left as it
is, the old file is kept as `FILE.bak-<timestamp>`, the new one is written to a temporary file
and renamed over the old (so a crash leaves one or the other, never half), and the change is
shown as a diff. `HOSTS` is the one table of hosts: where each keeps its file and how it spells
an entry.
"""

from __future__ import annotations

import argparse
import contextlib
import difflib
import json
import os
import shutil
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from mcpkit.cli.usage import UsageError

__all__ = ["HOSTS", "Host", "entry_for", "register_config", "run_config", "write_entry"]


@dataclass(frozen=True)
class Host:
    """An MCP host: the key its servers live under, and how it writes an entry's kind."""

    title: str
    key: str
    """`mcpServers`, or `servers` (VS Code)."""
    typed: bool
    """Entries say `"type": "stdio" | "http"`."""
    http: bool
    """Its config file can name an HTTP server by URL."""

    def path(self, name: str) -> Path:
        """Where this host's config file is on this system."""
        home = Path.home()
        if name == "claude-desktop":
            if sys.platform == "darwin":
                return home / "Library/Application Support/Claude/claude_desktop_config.json"
            if os.name == "nt":
                appdata = os.environ.get("APPDATA") or str(home / "AppData/Roaming")
                return Path(appdata) / "Claude" / "claude_desktop_config.json"
            config = os.environ.get("XDG_CONFIG_HOME") or str(home / ".config")
            return Path(config) / "Claude" / "claude_desktop_config.json"
        if name == "cursor":
            return home / ".cursor" / "mcp.json"
        return Path.cwd() / ".vscode" / "mcp.json"  # vscode: the workspace's own file


HOSTS: dict[str, Host] = {
    "claude-desktop": Host("Claude Desktop", "mcpServers", typed=False, http=False),
    "cursor": Host("Cursor", "mcpServers", typed=False, http=True),
    "vscode": Host("VS Code (this folder's .vscode/mcp.json)", "servers", typed=True, http=True),
}


def register_config(sub: Any) -> None:
    """Add `mcpkit config` to `mcpkit`'s subparsers."""
    text = "print (or --write) the entry an MCP host reads to run or reach a server"
    p = sub.add_parser("config", help=text, description=text + ". Hosts: "
                       + ", ".join(f"{k} ({h.title})" for k, h in HOSTS.items()))
    p.set_defaults(config_command=True)
    p.add_argument("name", metavar="NAME", help="the server's name in the host's list")
    p.add_argument("target", metavar="TARGET",
                   help="path/to/server.py[:name], package.module[:name], or an http(s) URL")
    p.add_argument("-e", "--env", action="append", default=[], metavar="NAME=VALUE",
                   help="an environment variable for a stdio server (repeatable)")
    p.add_argument("--write", choices=sorted(HOSTS), metavar="HOST",
                   help=f"add the entry to this host's config file ({', '.join(sorted(HOSTS))})")
    p.add_argument("--config-file", metavar="PATH",
                   help="the config file to write instead of the host's usual one")


def _mcpkit_command() -> list[str]:
    """This mcpkit, by absolute path: its script beside this Python, else `python -m mcpkit`."""
    script = Path(sys.executable).with_name("mcpkit.exe" if os.name == "nt" else "mcpkit")
    if script.is_file() and os.access(script, os.X_OK):
        return [str(script.absolute())]
    found = shutil.which("mcpkit")
    if found and Path(found).resolve().parent == Path(sys.executable).resolve().parent:
        return [str(Path(found).absolute())]
    return [str(Path(sys.executable).absolute()), "-m", "mcpkit"]


def entry_for(target: str, host: Host | None = None, env: dict[str, str] | None = None
              ) -> dict[str, Any]:
    """The host's entry for `target`: `{"url": ...}` for a URL, else the command that runs it
    (`host` None: the plain `mcpServers` spelling)."""
    typed = host is not None and host.typed
    if target.startswith(("http://", "https://")):
        if host is not None and not host.http:
            raise UsageError(f"{host.title} reads only stdio servers from its config file; "
                             "give a .py file or a module, or add the URL in its settings")
        if env:
            raise UsageError("--env is for stdio servers; an HTTP server has its own environment")
        return {"type": "http", "url": target} if typed else {"url": target}
    where, sep, name = target.rpartition(":")
    path, suffix = (where, f":{name}") if sep and name.isidentifier() and where else (target, "")
    if path.endswith(".py") or os.sep in path or os.path.exists(path):
        if not os.path.isfile(path):
            raise UsageError(f"file not found: {path}")
        spec = str(Path(path).resolve()) + suffix
    elif all(part.isidentifier() for part in path.split(".")):
        spec = target  # a module: found on the host's Python path
    else:
        raise UsageError(f"TARGET {target!r} is neither a .py file, a module nor an http(s) URL")
    program, *args = _mcpkit_command()
    entry: dict[str, Any] = {"type": "stdio"} if typed else {}
    entry.update(command=program, args=[*args, "run", spec])
    if env:
        entry["env"] = env
    return entry


def _env(raw: list[str]) -> dict[str, str]:
    out = {}
    for item in raw:
        name, sep, value = item.partition("=")
        if not sep or not name:
            raise UsageError(f"--env {item!r} must be NAME=VALUE")
        out[name] = value
    return out


def _read(path: Path, key: str) -> tuple[str, dict[str, Any]]:
    """The file's text and document; refused, untouched, unless it is a JSON object whose
    `key` (when present) is an object."""
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        return "", {}
    except (OSError, UnicodeDecodeError) as exc:
        raise UsageError(f"cannot read {path}: {exc}") from None
    if not text.strip():
        return text, {}
    try:
        document = json.loads(text)
    except ValueError as exc:
        raise UsageError(f"{path} is not valid JSON ({exc}); fix it or move it away "
                         "(it was not changed)") from None
    if not isinstance(document, dict):
        raise UsageError(f"{path} holds a JSON {type(document).__name__}, not an object; "
                         "it was not changed")
    if not isinstance(document.get(key, {}), dict):
        raise UsageError(f"{path}: {key!r} is not an object; it was not changed")
    return text, document


def _backup(path: Path) -> Path:
    stamp = time.strftime("%Y%m%d-%H%M%S")
    backup = path.with_name(f"{path.name}.bak-{stamp}")
    n = 1
    while backup.exists():
        n += 1
        backup = path.with_name(f"{path.name}.bak-{stamp}-{n}")
    shutil.copy2(path, backup)
    return backup


def _replace(path: Path, text: str) -> None:
    """Write `text` to `path` through a temporary file in the same folder and a rename."""
    path.parent.mkdir(parents=True, exist_ok=True)
    mode = path.stat().st_mode & 0o777 if path.exists() else 0o600
    handle, name = tempfile.mkstemp(prefix=f".{path.name}.", dir=path.parent)
    try:
        with os.fdopen(handle, "w", encoding="utf-8") as out:
            out.write(text)
            out.flush()
            os.fsync(out.fileno())
        os.chmod(name, mode)
        os.replace(name, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(name)
        raise


def write_entry(path: Path, host: Host, name: str, entry: dict[str, Any]) -> tuple[str, Path | None]:
    """Put `entry` under `host.key`/`name` in the file; returns the diff and the backup."""
    old_text, document = _read(path, host.key)
    servers = dict(document.get(host.key) or {})
    servers[name] = entry
    document = {**document, host.key: servers}
    new_text = json.dumps(document, indent=2, ensure_ascii=False) + "\n"
    if new_text == old_text:
        return "", None
    backup = _backup(path) if path.exists() else None
    _replace(path, new_text)
    diff = difflib.unified_diff(old_text.splitlines(keepends=True),
                                new_text.splitlines(keepends=True),
                                f"{path} (before)", str(path))
    return "".join(diff), backup


def run_config(args: argparse.Namespace) -> int:
    """`mcpkit config`: print the entry, or write it into a host's file."""
    try:
        env = _env(args.env)
        if not args.write:
            if args.config_file:
                raise UsageError("--config-file names the file --write HOST changes; add --write")
            print(json.dumps({"mcpServers": {args.name: entry_for(args.target, None, env)}},
                             indent=2, ensure_ascii=False))
            return 0
        host = HOSTS[args.write]
        entry = entry_for(args.target, host, env)
        path = Path(args.config_file).expanduser() if args.config_file else host.path(args.write)
        diff, backup = write_entry(path, host, args.name, entry)
    except UsageError as exc:
        print(f"mcpkit config: {exc}", file=sys.stderr)
        return 2
    except OSError as exc:
        print(f"mcpkit config: cannot write {exc.filename or ''}: {exc.strerror or exc}",
              file=sys.stderr)
        return 1
    if not diff:
        print(f"{path}: {args.name!r} is already this entry; nothing changed", file=sys.stderr)
        return 0
    sys.stdout.write(diff)
    kept = f" (the old file is kept as {backup})" if backup else ""
    print(f"wrote {args.name!r} to {path}{kept}; restart {host.title} to load it",
          file=sys.stderr)
    return 0
