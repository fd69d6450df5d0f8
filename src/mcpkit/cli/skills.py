"""`mcpkit skills SERVER` lists a server's skills; `mcpkit skills SERVER get NAME --out DIR`
fetches one, verified, into `DIR/<name>/`.

Listing reads no skill file (the entries say everything a listing shows). Getting loads the
skill as a host does: its `SKILL.md` must match the entry's size, digest and front matter,
and so must every other file, before anything is written; the files go to a staging folder
that becomes `DIR/<name>` only once all of them passed, so a refusal leaves nothing behind.
SERVER is what the other client commands take (a URL, a server file, a quoted command line).

Exit status: 0 success; 1 the server said no, offers no skills, or served a skill that failed
verification (the message names the skill and the file); 2 a usage error (no such skill
name, an `--out` folder already holding that skill).
"""

from __future__ import annotations

import argparse
import asyncio
import sys
from pathlib import Path
from typing import Any

__all__ = [
    "register_skills",
    "run_skills",
]


def register_skills(sub: Any) -> None:
    """Add `mcpkit skills` to `mcpkit`'s subparsers."""
    from mcpkit.cli.commands import connection_options

    p = sub.add_parser(
        "skills", help="list a server's skills, or fetch one verified: SERVER [get NAME --out DIR]",
        description="List the skills a server offers (io.modelcontextprotocol/skills) without "
        "fetching any, or fetch one: every file checked against the digest, size and front "
        "matter its entry publishes, then written under DIR/<name>/.",
        epilog="examples: mcpkit skills http://127.0.0.1:8000/mcp | mcpkit skills server.py get "
        "pdf-processing --out ./skills",
    )
    p.set_defaults(skills_command=True)
    p.add_argument("server", metavar="SERVER",
                   help="http(s) URL, path/to/server.py[:name], or a quoted command line")
    p.add_argument("action", nargs="?", choices=("list", "get"), default="list",
                   help="list (the default) or get one skill")
    p.add_argument("name", nargs="?", metavar="NAME",
                   help="with get: the skill's name, or its SKILL.md URI when names collide")
    p.add_argument("--out", metavar="DIR", default=".",
                   help="with get: the folder to write DIR/<name>/ into (default: .)")
    connection_options(p)


def run_skills(args: argparse.Namespace) -> int:
    from mcpkit.cli.usage import UsageError

    if args.action == "get" and not args.name:
        print("mcpkit skills: get needs the skill's NAME (see `mcpkit skills SERVER`)",
              file=sys.stderr)
        return 2
    if args.action == "list" and args.name:
        print(f"mcpkit skills: {args.name!r} given without get; to fetch it: mcpkit skills "
              f"SERVER get {args.name} --out DIR", file=sys.stderr)
        return 2
    try:
        return asyncio.run(_run(args))
    except UsageError as exc:
        print(f"mcpkit skills: {_shown(str(exc))}", file=sys.stderr)
        return 2
    except OSError as exc:  # the --out folder cannot be written (permissions, a full disk)
        print(f"mcpkit skills: {_shown(str(exc))}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        return 130


async def _run(args: argparse.Namespace) -> int:
    from mcpkit._version import __version__
    from mcpkit.cli.servers import connector_for, era_cache_path, explain_failure, parse_headers
    from mcpkit.client import Client, ClientOptions
    from mcpkit.errors import MCPError, RPCError, SkillVerificationError, UsageError
    from mcpkit.ext.skills import SKILLS, SkillsClient

    connector = connector_for(args.server, headers=parse_headers(args.header),
                              stderr="inherit" if args.server_stderr else "capture",
                              config=args.config)
    options = ClientOptions(timeout=args.timeout, era_cache=era_cache_path(),
                            probe_timeout=min(10.0, args.timeout), extensions={SKILLS: {}})
    client = Client(connector, client_info={"name": "mcpkit-cli", "version": __version__},
                    options=options)
    try:
        async with client:
            skills = SkillsClient(client)
            if args.action == "list":
                return _show_list(await skills.list(), skills.rejected, args.json)
            return await _get(skills, args)
    except SkillVerificationError as exc:
        print(f"mcpkit skills: refused: {_shown(str(exc))}", file=sys.stderr)
    except RPCError as exc:
        print(f"mcpkit skills: the server answered error {exc.code}: {_shown(exc.message)}",
              file=sys.stderr)
    except UsageError:  # the caller's mistake: status 2, said by main
        raise
    except MCPError as exc:
        print(f"mcpkit skills: {explain_failure(args.server, str(exc))}", file=sys.stderr)
    return 1


async def _get(skills: Any, args: argparse.Namespace) -> int:
    from mcpkit.cli.usage import UsageError

    try:
        entry = await skills.find(args.name)
    except LookupError as exc:
        raise UsageError(_shown(str(exc.args[0]))) from None
    try:
        path = await skills.fetch(entry, Path(args.out))
    except FileExistsError as exc:
        raise UsageError(str(exc)) from None
    if args.json:
        from mcpkit.cli.showing import out

        out({"skill": entry.wire(), "path": str(path)})
    else:
        count = len(entry.files or ())
        print(f"fetched {_shown(entry.name)}: {count} file{'s' * (count != 1)}, "
              f"{entry.total_size} bytes, each matching its digest, into {path}")
    return 0


def _show_list(entries: list[Any], rejected: list[Any], as_json: bool) -> int:
    if as_json:
        from mcpkit.cli.showing import out

        out({"skills": [e.wire() for e in entries],
             "rejected": [{"uri": r.uri, "reason": r.reason} for r in rejected]})
        return 0
    if not entries:
        print("no skills")
    for entry in entries:
        count = len(entry.files) if entry.files is not None else None
        size = (f"{count} file{'s' * (count != 1)}, {entry.total_size} bytes"
                if count is not None else "dynamic (no digests)")
        print(f"{_shown(entry.name)}  {_shown(entry.uri)}  ({size})")
        print(f"  {_shown(entry.description)}")
    for item in rejected:
        print(f"mcpkit skills: set aside {_shown(item.uri or 'an entry')}: "
              f"{_shown(item.reason)}", file=sys.stderr)
    return 0


def _shown(text: str) -> str:
    from mcpkit.cli.terminal import shown

    return shown(text)
