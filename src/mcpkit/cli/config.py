"""`mcpkit config NAME TARGET`: the entry an MCP host reads to start or reach a server, and
`--write HOST` to put it in that host's config file.

A stdio entry runs this same mcpkit by absolute path (`mcpkit run /abs/server.py`), so the host
finds it whatever its PATH and working folder are, or with `--uvx` the `uvx` line that fetches
mcpkit (and `--with` packages) itself; an HTTP entry is the URL, with `--header`s. Printed, the
entry is wrapped the way most hosts read it (`{"mcpServers": {NAME: ...}}`). Written, it is
added to or replaces NAME in the host's file (`mcpkit.cli.hosts.HOSTS`: where each host keeps
it and how it spells an entry, JSON or Goose's YAML): a file that is not an object of the
host's format is refused and left as it is, the old file is kept as `FILE.bak-<timestamp>`,
the new one is written to a temporary file and renamed over the old (so a crash leaves one or
the other, never half), and the change is shown as a diff. A YAML file keeps its comments and
order (ruamel.yaml round trip, the `yaml` extra).
"""

from __future__ import annotations

import argparse
import contextlib
import difflib
import io
import json
import os
import shutil
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from mcpkit._version import __version__
from mcpkit.cli.hosts import HOSTS, Host, Launch, plain_entry
from mcpkit.cli.servers import parse_headers
from mcpkit.cli.usage import UsageError

__all__ = [
    "HOSTS",
    "Host",
    "entry_for",
    "launch_for",
    "register_config",
    "run_config",
    "write_entry",
]


def register_config(sub: Any) -> None:
    """Add `mcpkit config` to `mcpkit`'s subparsers."""
    text = "print (or --write) the entry an MCP host reads to run or reach a server"
    p = sub.add_parser("config", help=text, description=text + ". Hosts: "
                       + ", ".join(f"{k} ({h.title}, {h.place})" for k, h in HOSTS.items()))
    p.set_defaults(config_command=True)
    p.add_argument("name", metavar="NAME", help="the server's name in the host's list")
    p.add_argument("target", metavar="TARGET",
                   help="path/to/server.py[:name], package.module[:name], or an http(s) URL")
    p.add_argument("-e", "--env", action="append", default=[], metavar="NAME=VALUE",
                   help="an environment variable for a stdio server (repeatable)")
    p.add_argument("-H", "--header", action="append", default=[], metavar="NAME:VALUE",
                   help="a header the host sends to an HTTP server (repeatable)")
    p.add_argument("--uvx", nargs="?", const=f"mcpkit=={__version__}", metavar="FROM",
                   help="start the server with uvx, which installs mcpkit itself (FROM: the "
                   f"package to run it from, default mcpkit=={__version__}, e.g. "
                   "'mcpkit[pydantic]')")
    p.add_argument("--with", dest="with_", action="append", default=[], metavar="PACKAGE",
                   help="with --uvx: a package the server needs besides mcpkit (repeatable)")
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


def launch_for(target: str, *, env: dict[str, str] | None = None,
               headers: dict[str, str] | None = None, uvx: str | None = None,
               with_: list[str] | None = None) -> Launch:
    """How a host reaches `target`: its URL, or the command that runs it (this mcpkit by
    absolute path, or `uvx --from FROM [--with PKG ...] mcpkit run ...` with `uvx`)."""
    if with_ and uvx is None:
        raise UsageError("--with names packages for uvx to install; add --uvx")
    if target.startswith(("http://", "https://")):
        if env:
            raise UsageError("--env is for stdio servers; an HTTP server has its own environment")
        if uvx is not None:
            raise UsageError("--uvx starts a stdio server; an HTTP server is reached by its URL")
        return Launch(url=target, headers=dict(headers or {}))
    if headers:
        raise UsageError("--header is for HTTP servers; give a stdio server --env instead")
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
    if uvx is not None:
        extra = [arg for package in with_ or [] for arg in ("--with", package)]
        return Launch("uvx", ("--from", uvx, *extra, "mcpkit", "run", spec), dict(env or {}))
    program, *args = _mcpkit_command()
    return Launch(program, (*args, "run", spec), dict(env or {}))


def entry_for(target: str, host: Host | None = None, env: dict[str, str] | None = None,
              name: str = "server", **launch: Any) -> dict[str, Any]:
    """The host's entry for `target` (`host` None: the plain `mcpServers` spelling)."""
    how = launch_for(target, env=env, **launch)
    if host is None:
        return plain_entry(how)
    if how.url is not None and not host.http:
        raise UsageError(f"{host.title} reads only stdio servers from its config file; "
                         "give a .py file or a module, or add the URL in its settings")
    return host.spell(name, how)


def _env(raw: list[str]) -> dict[str, str]:
    out = {}
    for item in raw:
        name, sep, value = item.partition("=")
        if not sep or not name:
            raise UsageError(f"--env {item!r} must be NAME=VALUE")
        out[name] = value
    return out


def _yaml() -> Any:
    from mcpkit.protocol.extras import require

    loader = require("ruamel.yaml", "mcpkit config --write goose (a YAML file)").YAML()
    loader.indent(mapping=2, sequence=4, offset=2)
    loader.preserve_quotes = True
    return loader


def _parse(path: Path, text: str, host: Host) -> Any:
    if host.format == "yaml":
        try:
            return _yaml().load(text)
        except Exception as exc:  # ruamel's errors share no base class worth naming
            if type(exc).__module__.startswith("ruamel"):
                raise UsageError(f"{path} is not valid YAML ({str(exc).splitlines()[0]}); fix "
                                 "it or move it away (it was not changed)") from None
            raise
    try:
        return json.loads(text)
    except ValueError as exc:
        raise UsageError(f"{path} is not valid JSON ({exc}); fix it or move it away "
                         "(it was not changed)") from None


def _read(path: Path, host: Host) -> tuple[str, Any]:
    """The file's text and document; refused, untouched, unless it is an object (a mapping)
    whose `host.key` (when present) is an object."""
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        return "", {}
    except (OSError, UnicodeDecodeError) as exc:
        raise UsageError(f"cannot read {path}: {exc}") from None
    if not text.strip():
        return text, {}
    document = _parse(path, text, host)
    if not isinstance(document, dict):
        raise UsageError(f"{path} holds a {type(document).__name__}, not an object; "
                         "it was not changed")
    servers = document.get(host.key)
    if servers is not None and not isinstance(servers, dict):
        raise UsageError(f"{path}: {host.key!r} is not an object; it was not changed")
    return text, document


def _dumped(document: Any, host: Host) -> str:
    if host.format == "yaml":
        out = io.StringIO()
        _yaml().dump(document, out)
        return out.getvalue()
    return json.dumps(document, indent=2, ensure_ascii=False) + "\n"


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


def write_entry(path: Path, host: Host, name: str, entry: dict[str, Any]
                ) -> tuple[str, Path | None]:
    """Put `entry` under `host.key`/`name` in the file; returns the diff and the backup."""
    old_text, document = _read(path, host)
    servers = document.get(host.key)
    if servers is None:
        document[host.key] = servers = {}
    servers[name] = entry  # in place: a YAML document keeps its comments and order
    new_text = _dumped(document, host)
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
    from mcpkit.errors import MissingExtraError

    try:
        launch = {"env": _env(args.env), "headers": parse_headers(args.header), "uvx": args.uvx,
                  "with_": args.with_}
        if not args.write:
            if args.config_file:
                raise UsageError("--config-file names the file --write HOST changes; add --write")
            entry = entry_for(args.target, None, name=args.name, **launch)
            print(json.dumps({"mcpServers": {args.name: entry}}, indent=2, ensure_ascii=False))
            return 0
        host = HOSTS[args.write]
        entry = entry_for(args.target, host, name=args.name, **launch)
        path = Path(args.config_file).expanduser() if args.config_file else host.path()
        diff, backup = write_entry(path, host, args.name, entry)
    except (UsageError, MissingExtraError) as exc:
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
