"""`mcpkit probe`, `mcpkit snapshot` and `mcpkit diff`: the commands over `mcpkit.probe`.

TARGET is what the client commands take (an http(s) URL, a Python file with a Server, or a
quoted command line), resolved by `mcpkit.cli.servers.connector_for`. Exit statuses:

- `probe`: 0 when no wire rule failed, 1 when one did (lint findings are reported, not
  failed on, unless `--strict`), 2 for a usage error or a server that cannot be reached;
- `snapshot`: 0, or 2;
- `diff`: 0 when the surfaces are the same, 1 when anything changed, 2 for an error.

Every error is one line on stderr naming the fix; nothing is left running. What reaches the
terminal passes through `mcpkit.cli.terminal`: the human view escapes every value of the
server's, and JSON on stdout is `json_text` (the same JSON, every control, escape and bidi
character written as `\\uXXXX`).
"""

from __future__ import annotations

import argparse
import asyncio
import sys
from typing import Any

import orjson

__all__ = [
    "register",
    "run_probe",
]

_TARGET_HELP = "http(s) URL, path/to/server.py[:name], or a quoted command line"


def _common(p: argparse.ArgumentParser) -> None:
    p.add_argument("--timeout", type=float, default=10.0, metavar="SECONDS",
                   help="wait this long for each answer (default 10)")
    p.add_argument("-H", "--header", action="append", default=[], metavar="NAME:VALUE",
                   help="extra HTTP header, e.g. 'Authorization: Bearer ...' (repeatable)")
    p.add_argument("--encoding", choices=("o200k_base", "cl100k_base"), default="o200k_base",
                   help="the tokenizer's encoding (default o200k_base)")


def register(sub: Any) -> None:
    """Add `probe`, `snapshot` and `diff` to `mcpkit`'s subparsers."""
    p = sub.add_parser(
        "probe", help="inspect a server: era, wire rules, token budget, lint",
        description="Inspect an MCP server you did not write: which era and versions it "
        "speaks (with the evidence of each step), a quick check of the wire rules, what its "
        "catalogue costs in a model's context per client capability set, and a lint of its "
        "definitions. Read-only: no tool is called unless --call names one.",
        epilog="examples: mcpkit probe 'npx -y @modelcontextprotocol/server-everything stdio' "
        "--caps none,elicitation,all | mcpkit probe http://127.0.0.1:8000/mcp --html report.html")
    p.set_defaults(probe_command="probe")
    p.add_argument("target", metavar="TARGET", help=_TARGET_HELP)
    p.add_argument("--caps", default="none,all", metavar="SETS",
                   help="client capability sets to list under, comma-separated from none, "
                   "roots, sampling, elicitation, all, or one JSON object (default none,all)")
    p.add_argument("--json", action="store_true", help="print the report as JSON "
                   "(format mcpkit-probe/1, docs/probe.md)")
    p.add_argument("--html", metavar="FILE", help="also write the report as one HTML page")
    p.add_argument("--call", metavar="TOOL[=JSON]",
                   help="also call this tool, with these arguments (a JSON object)")
    p.add_argument("--strict", action="store_true", help="exit 1 on lint findings too")
    _common(p)
    s = sub.add_parser(
        "snapshot", help="print a server's tool, prompt and resource surface as JSON",
        description="Print the surface of a server (every tool, prompt, resource and "
        "template as listed, each with a fingerprint and its tokens) as JSON, to pin it: "
        "`mcpkit diff` compares it with a later snapshot or with the live server.",
        epilog="example: mcpkit snapshot server.py > surface.json")
    s.set_defaults(probe_command="snapshot")
    s.add_argument("target", metavar="TARGET", help=_TARGET_HELP)
    s.add_argument("--caps", default="all", metavar="SET",
                   help="the one client capability set to list under (default all)")
    s.add_argument("-o", "--output", metavar="FILE", help="write to FILE instead of stdout")
    _common(s)
    d = sub.add_parser(
        "diff", help="what changed between two surfaces (exit 1 when anything did)",
        description="Compare two surfaces: OLD is a snapshot file, NEW a snapshot file or a "
        "live TARGET (listed under the capabilities OLD was). Added, removed and changed "
        "entries, field by field, with the token delta; exits 1 when anything changed.",
        epilog="example: mcpkit diff surface.json 'python server.py'")
    d.set_defaults(probe_command="diff")
    d.add_argument("old", metavar="OLD", help="a snapshot file")
    d.add_argument("new", metavar="NEW", help="a snapshot file, or a TARGET to snapshot now")
    d.add_argument("--json", action="store_true", help="print the diff as JSON "
                   "(format mcpkit-diff/1)")
    _common(d)


def _target(spec: str, headers: list[str]) -> Any:
    from mcpkit.cli.servers import connector_for, parse_headers
    from mcpkit.probe.channels import Target

    connector = connector_for(spec, headers=parse_headers(headers))
    if connector.kind == "http":
        return Target("http", url=connector.url, headers=connector.options.get("headers"))
    return Target("stdio", argv=tuple(connector.argv), env=connector.env)


def _call(text: str | None) -> tuple[str, dict[str, Any]] | None:
    from mcpkit.cli.usage import UsageError

    if text is None:
        return None
    name, _, raw = text.partition("=")
    if not name:
        raise UsageError("--call: name the tool, e.g. --call echo='{\"message\": \"hi\"}'")
    try:
        arguments = orjson.loads(raw) if raw else {}
    except orjson.JSONDecodeError as exc:
        raise UsageError(f"--call {name}: the arguments are not JSON ({exc})") from None
    if type(arguments) is not dict:
        raise UsageError(f"--call {name}: the arguments must be a JSON object")
    return name, arguments


def run_probe(args: argparse.Namespace) -> int:
    """Run the chosen command; every failure a user can fix is one line and status 2."""
    from mcpkit.cli.usage import UsageError
    from mcpkit.errors import MissingExtraError, TransportError

    command = args.probe_command
    try:
        if args.timeout is None or not args.timeout > 0:
            raise UsageError("--timeout must be above zero")
        return asyncio.run(_COMMANDS[command](args))
    except (UsageError, ValueError, TransportError, MissingExtraError, OSError) as exc:
        from mcpkit.cli.terminal import shown_block

        print(f"mcpkit {command}: {shown_block(exc)}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        return 130


async def _probe(args: argparse.Namespace) -> int:
    from mcpkit.probe.catalogue import parse_caps
    from mcpkit.probe.report import probe
    from mcpkit.probe.terminal import colour_for, render_report

    capsets = parse_caps(args.caps)
    call = _call(args.call)
    target = _target(args.target, args.header)
    report = await probe(target, capsets, encoding=args.encoding, timeout=args.timeout,
                         call=call)
    doc = report.to_json()
    if args.html:
        from mcpkit.probe.page import render_page

        with open(args.html, "w", encoding="utf-8") as out:
            out.write(render_page(doc))
    if args.json:
        _print_json(doc)
    else:
        sys.stdout.write(render_report(doc, colour_for(sys.stdout)))
        if args.html:
            sys.stdout.write(f"\nwrote {args.html}\n")
    failed = bool(report.failed) or (args.strict and bool(report.findings))
    return 1 if failed else 0


async def _take(spec: str, caps: str, args: argparse.Namespace) -> dict[str, Any]:
    from mcpkit.probe.budget import Counter
    from mcpkit.probe.catalogue import list_catalogue, parse_caps
    from mcpkit.probe.surface import snapshot_of
    from mcpkit.probe.walk import walk

    capsets = parse_caps(caps)
    if len(capsets) != 1:
        raise ValueError("--caps: a snapshot is listed under one capability set, not "
                         f"{len(capsets)}")
    name, capabilities = capsets[0]
    counter = Counter(args.encoding)
    target = _target(spec, args.header)
    session, identity = await walk(target, capabilities, args.timeout)
    try:
        catalogue = await list_catalogue(session, name, capabilities, identity.capabilities)
    finally:
        await session.close()
    if catalogue.problems:
        raise ValueError("the surface is incomplete: " + "; ".join(catalogue.problems))
    return snapshot_of(catalogue, identity, target.shown, counter)


def _print_json(doc: Any) -> None:
    from mcpkit.cli.terminal import json_text

    sys.stdout.write(json_text(doc, indent=2) + "\n")


async def _snapshot(args: argparse.Namespace) -> int:
    doc = await _take(args.target, args.caps, args)
    if args.output:
        with open(args.output, "w", encoding="utf-8") as out:
            out.write(orjson.dumps(doc, option=orjson.OPT_INDENT_2).decode() + "\n")
    else:
        _print_json(doc)
    return 0


async def _diff(args: argparse.Namespace) -> int:
    import os

    from mcpkit.probe.budget import Counter
    from mcpkit.probe.surface import diff, load_snapshot
    from mcpkit.probe.terminal import colour_for, render_diff

    old = load_snapshot(args.old)
    if os.path.isfile(args.new) and args.new.endswith(".json"):
        new = load_snapshot(args.new)
    else:
        capabilities = old.get("clientCapabilities")
        caps = orjson.dumps(capabilities).decode() if type(capabilities) is dict else "all"
        new = await _take(args.new, caps, args)
    changes = diff(old, new, Counter(str(old.get("encoding") or args.encoding)))
    doc = changes.to_json()
    if args.json:
        _print_json(doc)
    else:
        sys.stdout.write(render_diff(doc, colour_for(sys.stdout)))
    return 1 if changes.changes else 0


_COMMANDS = {"probe": _probe, "snapshot": _snapshot, "diff": _diff}
