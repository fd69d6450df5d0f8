"""`mcpkit`: run a server (`mcpkit run`), talk to one (`mcpkit discover|tools|call|read|prompt|
listen`, in `mcpkit.cli.commands`), print the version.

Errors a user can fix (a missing file, a name that is not a Server) are one line on stderr
and exit status 2.
"""

from __future__ import annotations

import argparse
import sys

from mcpkit._version import __version__

__all__ = ["main"]


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="mcpkit", description="Run and inspect Model Context Protocol servers."
    )
    parser.add_argument("--version", action="version", version=f"mcpkit {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    run = sub.add_parser("run", help="serve a Server from a Python file or module")
    run.add_argument("target", help="path/to/file.py[:name] or package.module[:name] (name defaults to 'server')")
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
    from mcpkit.cli.commands import register

    register(sub)
    from mcpkit.cli.keys import register as register_keys

    register_keys(sub)
    return parser


def main(argv: list[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    if args.command == "run":
        return _run(args)
    if args.command == "keys":
        from mcpkit.cli.keys import run_keys

        return run_keys(args)
    if getattr(args, "client_command", None):
        from mcpkit.cli.commands import run_command

        return run_command(args)
    _parser().print_help(sys.stderr)
    return 2


def _run(args: argparse.Namespace) -> int:
    if args.http is not None:
        return _run_http(args)
    from mcpkit.transports.stdio import claim_stdout, run_stdio

    # stdout is the protocol's from here on, before the user's module can print at import.
    claim_stdout()
    from mcpkit.cli.target import TargetError, load_server

    try:
        server = load_server(args.target)
    except TargetError as exc:
        print(f"mcpkit run: {exc}", file=sys.stderr)
        return 2
    run_stdio(server)
    return 0


def _run_http(args: argparse.Namespace) -> int:
    from mcpkit.cli.target import TargetError, load_server
    from mcpkit.transports.http_server import parse_address, run_http

    try:
        parse_address(args.http)
    except ValueError as exc:
        print(f"mcpkit run: {exc}", file=sys.stderr)
        return 2
    try:
        server = load_server(args.target)
    except TargetError as exc:
        print(f"mcpkit run: {exc}", file=sys.stderr)
        return 2
    try:
        run_http(server, args.http, allowed_hosts=args.allow_host,
                 allowed_origins=args.allow_origin)
    except OSError as exc:
        print(f"mcpkit run: cannot serve on {args.http}: {exc}", file=sys.stderr)
        return 1
    return 0
