"""`mcpkit`: run a server (`mcpkit run`), talk to one (`mcpkit discover|tools|call|read|prompt|
listen`, in `mcpkit.cli.commands`), sign in to a protected one (`mcpkit login|logout|auth
status`, in `mcpkit.cli.auth`), write a host's entry for one (`mcpkit config`, in
`mcpkit.cli.config`), print the version.

Errors a user can fix (a missing file, a name that is not a Server, a bad `--store`) are one
line on stderr and exit status 2; a port that is taken is one line and status 1.
"""

from __future__ import annotations

import argparse
import math
import socket
import sys
from typing import Any

from mcpkit._version import __version__

__all__ = ["main"]


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
    run.add_argument("target", nargs="?", help="path/to/file.py[:name] or package.module[:name] (name defaults to 'server'); may be left out with --skills")
    run.add_argument("--skills", metavar="DIR", help="also serve the skills in DIR (folders "
                     "holding a SKILL.md) through the Skills extension; alone, a server of "
                     "just those skills")
    mode = run.add_mutually_exclusive_group()
    mode.add_argument("--stdio", action="store_true", help="serve on stdin/stdout (the default)")
    mode.add_argument(
        "--http", nargs="?", const="127.0.0.1:8000/mcp", metavar="[HOST:]PORT[/PATH]",
        help="serve Streamable HTTP (both eras) with uvicorn; default 127.0.0.1:8000/mcp",
    )
    run.add_argument(
        "--allow-host", action="append", default=[], metavar="HOST",
        help="also accept this Host header (repeatable; name[:port], *.domain or *), e.g. the "
        "public name behind a reverse proxy",
    )
    run.add_argument(
        "--allow-origin", action="append", default=[], metavar="ORIGIN",
        help="also accept this browser Origin (repeatable; https://app.example.com or *)",
    )
    run.add_argument(
        "--dev", action="store_true",
        help="development: an uncaught exception's type and message reach the client, and "
        "debug logging goes to stderr (the address is unchanged: 127.0.0.1 unless given)",
    )
    run.add_argument(
        "--store", metavar="URL",
        help="where state is kept (default: MCPKIT_STORE, else memory): sqlite:///PATH shares "
        "single-use retries on this host; postgresql://... or redis://... shares every seam "
        "(retries, legacy sessions, state keys, tasks) between replicas",
    )
    run.add_argument(
        "--session-idle", type=_seconds, metavar="SECONDS",
        help="with --http: end a 2025-11-25 session after this long without a request "
        "(default 3600)",
    )
    run.add_argument(
        "--workers", type=int, metavar="N",
        help="with --http: serve with N uvicorn worker processes sharing the store, which "
        "must be PostgreSQL or Redis (--store or MCPKIT_STORE)",
    )
    run.add_argument(
        "--reload", action="store_true",
        help="with --http: restart when a .py file beside the target changes (development)",
    )
    from mcpkit.cli.run_auth import add_auth_options

    add_auth_options(run)
    from mcpkit.cli.run_openapi import add_openapi_options

    add_openapi_options(run)
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
    return parser


def main(argv: list[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    if args.command == "run":
        return _run(args)
    if args.command == "keys":
        from mcpkit.cli.keys import run_keys

        return run_keys(args)
    if getattr(args, "auth_command", None):
        from mcpkit.cli.auth import run_auth

        return run_auth(args)
    if getattr(args, "skills_command", False):
        from mcpkit.cli.skills import run_skills

        return run_skills(args)
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
        store = _store(args)
        args.auth = auth_settings(args)
        args.api = openapi_settings(args)
    except UsageError as exc:
        print(f"mcpkit run: {exc}", file=sys.stderr)
        return 2
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
    from mcpkit.transports.stdio import claim_stdout, run_stdio

    # stdout is the protocol's from here on, before the user's module can print at import.
    claim_stdout()
    server = _load(args, store)
    if server is None:
        return 2
    run_stdio(server)
    return 0


def _seconds(text: str) -> float:
    """A `--session-idle` value: seconds above zero (argparse prints the refusal in one line)."""
    try:
        value = float(text)
    except ValueError:
        value = math.nan
    if not value > 0 or math.isinf(value):
        raise argparse.ArgumentTypeError(f"expected seconds above zero, e.g. 600, not {text!r}")
    return value


def _store(args: argparse.Namespace) -> Any:
    if args.store is None:
        return None
    from mcpkit.cli.run_options import parse_store

    return parse_store(args.store)


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
        apply_run_options(server, dev=args.dev, store=store)
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


def _port_taken(host: str, port: int) -> str | None:
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
    from mcpkit.transports.http_server import parse_address

    try:
        host, port, _ = parse_address(args.http)
    except ValueError as exc:
        print(f"mcpkit run: {exc}", file=sys.stderr)
        return 2
    taken = _port_taken(host, port)
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
    from mcpkit.transports.http_server import run_http

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
    except SystemExit as exc:  # the HTTP server stops this way when it could not start
        if exc.code in (None, 0):
            return 0
        print(f"mcpkit run: the HTTP server on {args.http} did not start (see above)",
              file=sys.stderr)
        return 1
    return 0
