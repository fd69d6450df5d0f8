"""`mcpkit`: run a server (`mcpkit run`), talk to one (`mcpkit discover|tools|call|read|prompt|
listen`, in `mcpkit.cli.commands`), inspect one in the browser (`mcpkit dev`, in
`mcpkit.dev.command`), sign in to a protected one (`mcpkit login|logout|auth
status`, in `mcpkit.cli.auth`), write a host's entry for one (`mcpkit config`, in
`mcpkit.cli.config`), print the version.

Errors a user can fix (a missing file, a name that is not a Server, a bad `--store`) are one
line on stderr and exit status 2; a port that is taken is one line and status 1.
"""

from __future__ import annotations

import argparse
import socket
import sys
from typing import Any

from mcpkit._version import __version__

__all__ = [
    "main",
    "port_taken",
]


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="mcpkit", description="Run and inspect Model Context Protocol servers."
    )
    parser.add_argument("--version", action="version", version=f"mcpkit {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    run = sub.add_parser(
        "run", help="serve a Server from a Python file or module",
        description="Serve the Server object a Python file or module defines: over stdio (the "
        "default; an MCP host starts this command and speaks on its stdin and stdout), or over "
        "Streamable HTTP on 127.0.0.1 with --http, for both protocol eras. With --dev and "
        "--reload it is a development server: errors are shown in full and it restarts when a "
        "source file changes.",
        epilog="examples: mcpkit run server.py | mcpkit run server.py --http 8000 --dev --reload"
        " | mcpkit run mypkg.app:server --http 127.0.0.1:9000/mcp --store sqlite:state.db",
    )
    run.add_argument("target", nargs="?", help="path/to/file.py[:name] or package.module[:name] "
                     "(name defaults to 'server'); may be left out with --skills or --openapi")
    from mcpkit.cli.settings import add_flags

    add_flags(run)  # every option, with its MCPKIT_* variable (docs/settings.md)
    run.add_argument("--env-file", metavar="FILE",
                     help="read settings (MCPKIT_...) and the server's environment from this "
                     "file; the command line and the environment come first")
    run.add_argument("--show-config", action="store_true",
                     help="print every setting, its value and where it came from, and exit")
    from mcpkit.cli.commands import register

    register(sub)
    from mcpkit.cli.config import register_config

    register_config(sub)
    from mcpkit.cli.keys import register as register_keys

    register_keys(sub)
    from mcpkit.cli.auth import register as register_auth

    register_auth(sub)
    from mcpkit.cli.probe import register as register_probe

    register_probe(sub)
    from mcpkit.cli.skills import register_skills

    register_skills(sub)
    from mcpkit.dev.command import register as register_dev

    register_dev(sub)
    from mcpkit.cli.proxy import register_proxy

    register_proxy(sub)
    return parser


def main(argv: list[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    if args.command == "run":
        return _run(args)
    if args.command == "proxy":
        from mcpkit.cli.proxy import run_proxy

        return run_proxy(args)
    from mcpkit.cli.terminal import log_to_terminal

    log_to_terminal()  # the other commands talk to servers, whose words a warning may quote
    if args.command == "keys":
        from mcpkit.cli.keys import run_keys

        return run_keys(args)
    if getattr(args, "auth_command", None):
        from mcpkit.cli.auth import run_auth

        return run_auth(args)
    if getattr(args, "skills_command", False):
        from mcpkit.cli.skills import run_skills

        return run_skills(args)
    if getattr(args, "dev_command", False):
        from mcpkit.dev.command import run_dev

        return run_dev(args)
    if getattr(args, "probe_command", None):
        from mcpkit.cli.probe import run_probe

        return run_probe(args)
    if getattr(args, "config_command", False):
        from mcpkit.cli.config import run_config

        return run_config(args)
    if getattr(args, "client_command", None):
        from mcpkit.cli.commands import run_command

        return run_command(args)
    _parser().print_help(sys.stderr)
    return 2


def _run(args: argparse.Namespace) -> int:
    from mcpkit.cli.run_auth import auth_settings
    from mcpkit.cli.run_openapi import openapi_settings
    from mcpkit.cli.usage import UsageError

    try:
        found = _settings(args)
        args.auth = auth_settings(args)
        args.api = openapi_settings(args)
    except UsageError as exc:
        print(f"mcpkit run: {exc}", file=sys.stderr)
        return 2
    if args.show_config:
        return _show_config(args, found)
    store = args.store
    if args.target is None and args.api is None and (
            args.skills is None or args.reload or args.workers):
        print("mcpkit run: name the server FILE (or module), serve a skills directory alone "
              "with --skills DIR (not with --reload or --workers), or an API with --openapi "
              "SPEC", file=sys.stderr)
        return 2
    if args.skills and args.workers is not None:
        print("mcpkit run: --skills is not handed to --workers processes; serve the skills "
              "from the server file instead (mcpkit.ext.skills.serve_skills)", file=sys.stderr)
        return 2
    if args.reload and args.http is None:
        print("mcpkit run: --reload restarts an HTTP server; add --http [HOST:]PORT (a stdio "
              "server is restarted by the host that starts it)", file=sys.stderr)
        return 2
    if args.workers is not None and args.http is None:
        print("mcpkit run: --workers runs HTTP worker processes; add --http [HOST:]PORT (over "
              "stdio, each client starts a server process of its own)", file=sys.stderr)
        return 2
    if args.session_idle is not None and args.http is None:
        print("mcpkit run: --session-idle applies to the 2025-11-25 sessions of an HTTP server; "
              "add --http [HOST:]PORT (a stdio connection is its own session)", file=sys.stderr)
        return 2
    if args.http is not None:
        return _run_http(args, store)
    from mcpkit.transports.stdio.server import claim_stdout, run_stdio

    # stdout is the protocol's from here on, before the user's module can print at import.
    claim_stdout()
    server = _load(args, store)
    if server is None:
        return 2
    run_stdio(server)
    return 0


def _settings(args: argparse.Namespace) -> dict[str, Any]:
    """Each setting from its flag, the environment or `--env-file` (`mcpkit.cli.settings`),
    put on `args` for the run options; what came from a flag or the file is exported for the
    processes this one starts."""
    import os

    from mcpkit.cli.settings import SETTINGS
    from mcpkit.cli.settings_sources import export, read_env_file, resolve, stray_names
    from mcpkit.cli.usage import UsageError

    file_values = read_env_file(args.env_file) if args.env_file else {}
    refused, warned = stray_names(os.environ, file_values, args.env_file)
    if refused:
        raise UsageError(refused[0])
    for line in warned:
        print(f"mcpkit run: warning: {line}", file=sys.stderr)
    found = resolve(args, os.environ, file_values, args.env_file)
    for s in SETTINGS:
        if not s.server_option:
            r = found.get(s.name)
            setattr(args, s.dest, r.value if r is not None else s.default)
    args.server_options = {name: r.value for name, r in found.items() if r.setting.server_option}
    export(found, file_values, os.environ)
    return found


def _show_config(args: argparse.Namespace, found: dict[str, Any]) -> int:
    """`--show-config`: the values with their sources, the server file's options included
    when TARGET is given (the file is imported, nothing is served)."""
    from mcpkit.cli.settings_sources import show_config

    server = None
    if args.target is not None:
        server = _load(args, args.store)
        if server is None:
            return 2
    print(show_config(found, server))
    return 0


def _load(args: argparse.Namespace, store: object | None) -> Any:
    """The target's Server with this run's options, or None once the reason is printed."""
    from mcpkit.cli.run_options import apply_run_options
    from mcpkit.cli.target import TargetError, load_server
    from mcpkit.cli.usage import UsageError
    from mcpkit.store.state_keys import KeyFileError

    try:
        api = getattr(args, "api", None)
        server: Any = (load_server(args.target) if args.target
                       else None if api is not None else _skills_server(args.skills))
        if api is not None:  # `mcpkit run --openapi SPEC`, alone or beside FILE
            from mcpkit.cli.run_openapi import serve_openapi

            server = serve_openapi(api, server)
        if args.skills and (args.target or api is not None):
            _skills_server(args.skills, server)
        apply_run_options(server, dev=args.dev, store=store,
                          options=getattr(args, "server_options", None))
        server.sealer.check_keys()
    except (TargetError, UsageError, KeyFileError) as exc:
        print(f"mcpkit run: {exc}", file=sys.stderr)
        return None
    return server


def _passed_on(args: argparse.Namespace) -> list[str]:
    """The options a reloading parent hands to each `mcpkit run` it starts."""
    out = [f"--allow-host={h}" for h in args.allow_host]
    out += [f"--allow-origin={o}" for o in args.allow_origin]
    out += ["--dev"] * args.dev + ([f"--store={args.store}"] if args.store else [])
    out += [f"--session-idle={args.session_idle}"] * (args.session_idle is not None)
    from mcpkit.cli.run_auth import passed_on

    out += passed_on(args.auth)
    return out + ([f"--skills={args.skills}"] if args.skills else [])


def _skills_server(directory: str, server: Any = None) -> Any:
    """`server` (or a new one named after the folder) serving the skills in `directory`."""
    from pathlib import Path

    from mcpkit.cli.usage import UsageError
    from mcpkit.ext.skills import serve_skills
    from mcpkit.server.server import Server

    server = server if server is not None else Server(Path(directory).resolve().name or "skills")
    try:
        serve_skills(server, directory)
    except ValueError as exc:  # SkillSourceError, a name off the rules: one line, the file named
        raise UsageError(f"--skills {directory}: {exc}") from None
    return server


def port_taken(host: str, port: int) -> str | None:
    """Why `host:port` cannot be bound, found before the server is built, so a taken port is
    one line instead of the HTTP server's log; None when it is free (or 0)."""
    if port == 0:
        return None
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    with socket.socket(family, socket.SOCK_STREAM) as probe:
        probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)  # as the server binds
        try:
            probe.bind((host, port))
        except OSError as exc:
            return exc.strerror or str(exc)
    return None


def _run_http(args: argparse.Namespace, store: object | None) -> int:
    from mcpkit.transports.http_server.running import parse_address

    try:
        host, port, _ = parse_address(args.http)
    except ValueError as exc:
        print(f"mcpkit run: {exc}", file=sys.stderr)
        return 2
    taken = port_taken(host, port)
    if taken is not None:
        print(f"mcpkit run: cannot serve on {host}:{port}: {taken} (is another server running "
              f"there? choose another port with --http {host}:PORT)", file=sys.stderr)
        return 1
    if args.workers is not None:
        from mcpkit.cli.workers import run_from_args

        return run_from_args(args)
    if args.reload:
        from mcpkit.cli.reload import run_reloading

        return run_reloading(args.target, args.http, _passed_on(args))
    from mcpkit.transports.http_server.running import run_http

    server = _load(args, store)
    if server is None:
        return 2
    auth = None
    if args.auth is not None:
        from mcpkit.cli.run_auth import protected_resource
        from mcpkit.cli.usage import UsageError

        try:
            auth = protected_resource(args.auth)
        except UsageError as exc:
            print(f"mcpkit run: {exc}", file=sys.stderr)
            return 2
    try:
        run_http(server, args.http, allowed_hosts=args.allow_host,
                 allowed_origins=args.allow_origin, session_idle_s=args.session_idle, auth=auth)
    except OSError as exc:
        print(f"mcpkit run: cannot serve on {args.http}: {exc.strerror or exc}", file=sys.stderr)
        return 1
    except ValueError as exc:  # a configuration refused before anything is bound
        print(f"mcpkit run: {exc}", file=sys.stderr)
        return 2
    except SystemExit as exc:  # the HTTP server stops this way when it could not start
        if exc.code in (None, 0):
            return 0
        print(f"mcpkit run: the HTTP server on {args.http} did not start (see above)",
              file=sys.stderr)
        return 1
    return 0
