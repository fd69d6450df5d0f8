"""`mcpkit`: run a server (`mcpkit run`), print the version.

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
    return parser


def main(argv: list[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    if args.command == "run":
        return _run(args)
    _parser().print_help(sys.stderr)
    return 2


def _run(args: argparse.Namespace) -> int:
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
