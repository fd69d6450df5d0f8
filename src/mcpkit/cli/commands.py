"""The client commands: `mcpkit discover | tools | call | read | prompt | listen SERVER ...`,
and those extensions add (`EXTENSION_COMMANDS`: `mcpkit task VERB SERVER TASK_ID` from
`mcpkit.ext.tasks.cli`, which also follows a call that the server runs as a task).

Bare hands for poking a server, built on the public API only. SERVER is one argument
(`mcpkit.cli.servers`): an http(s) URL, a Python file holding a `Server`, or a stdio command
line in one quoted string. Output is for people on a terminal, or JSON with `--json`
(`mcpkit.cli.showing`); the era and version in use are always shown (on stderr when stdout is
JSON or a result). A call's progress is drawn on stderr, and with `--log-level` the server's
log messages too. Arguments are typed and checked against what the server declared
(`mcpkit.cli.arguments`). A server's questions are asked at the terminal, or answered from
`--answer`; with nothing to ask on (`--no-input`, a stdin that is no terminal) a question
`--answer` does not cover ends the command, naming it (`mcpkit.cli.given_answers`).

Exit status: 0 success, 1 the server said no (an error, `isError`, a failed connection), 2 a
usage error or a question nobody could answer. Everything a server wrote is printed through
`mcpkit.cli.terminal`, so no escape sequence, control or bidi character of a server reaches
the terminal; `--json` output stays exact JSON. This module imports nothing heavy until a
command runs.
"""

from __future__ import annotations

import argparse
import asyncio
import sys
from collections.abc import Awaitable, Callable
from importlib import import_module
from typing import Any, Final

from mcpkit.cli.arguments import prompt_arguments, typed_arguments
from mcpkit.cli.servers import (
    connector_for,
    era_cache_path,
    error_id_in,
    explain_failure,
    explain_internal_error,
    parse_headers,
)
from mcpkit.cli.showing import (
    Progress,
    identity,
    note,
    out,
    print_log,
    show_content,
    show_contents,
    show_result,
    signature,
)
from mcpkit.cli.terminal import json_text, shown, shown_block, shown_text
from mcpkit.cli.usage import UsageError
from mcpkit.types.constants import CHANGES_KEY

Command = Callable[[Any, argparse.Namespace], Awaitable[int]]
"""A client command: the connected client and the parsed arguments -> the exit status."""

__all__ = [
    "ASKING",
    "COMMANDS",
    "connection_options",
    "connector_for",
    "register",
    "run_command",
    "typed_arguments",
]

COMMANDS: Final = {
    "discover": "show what a server is and offers (era, version, capabilities)",
    "tools": "list a server's tools",
    "call": "call a tool: TOOL [JSON | key=value ...]",
    "read": "read a resource: URI",
    "prompt": "get a prompt: NAME [key=value ...]",
    "listen": "print change notifications until interrupted",
}
_LEVELS: Final = ("debug", "info", "notice", "warning", "error", "critical", "alert",
                  "emergency")
_INTERNAL_ERROR: Final = -32603


def register(sub: Any) -> None:
    """Add the client commands to `mcpkit`'s subparsers."""
    for name, help_text in COMMANDS.items():
        p = sub.add_parser(name, help=help_text, description=help_text)
        p.set_defaults(client_command=name)
        p.add_argument("server", metavar="SERVER",
                       help="http(s) URL, path/to/server.py[:name], a quoted command line, or "
                       "with --config the name of an entry of that file")
        if name in ("call", "prompt"):
            p.add_argument("name", metavar="TOOL" if name == "call" else "NAME")
            p.add_argument("arguments", nargs="*", metavar="ARG",
                           help="one JSON object, or key=value pairs (typed from the schema)")
        elif name == "read":
            p.add_argument("uri", metavar="URI")
        elif name == "listen":
            for flag in ("tools", "prompts", "resources"):
                p.add_argument(f"--{flag}", action="store_true",
                               help=f"{flag} list changes (default: all three lists)")
            p.add_argument("--uri", action="append", default=[], metavar="URI",
                           help="also watch this resource (repeatable)")
            p.add_argument("--count", type=int, metavar="N",
                           help="stop after N changes (a notification that stands for several "
                           "coalesced changes counts as that many)")
        if name == "call":
            p.add_argument("--detach", action="store_true",
                           help="when the server runs the call as a task, print its id and exit "
                           "(follow it later with mcpkit task wait SERVER TASK_ID)")
        _common(p, asks=name in ASKING)
    for module in EXTENSION_COMMANDS:
        _COMMANDS.update(import_module(module).register(sub, _common))


def connection_options(p: Any) -> None:
    """The options of reaching a server and printing what it says, which every command
    that talks to one takes (`mcpkit skills` too)."""
    p.add_argument("--json", action="store_true", help="print JSON for scripts")
    p.add_argument("--config", metavar="FILE",
                   help="SERVER is the name of an entry of this mcpServers file (the JSON an MCP "
                   "host reads: command, args, env, or url and headers)")
    p.add_argument("--timeout", type=float, default=60.0, metavar="SECONDS",
                   help="wait this long for each response (default 60)")
    p.add_argument("-H", "--header", action="append", default=[], metavar="NAME:VALUE",
                   help="extra HTTP header, e.g. 'Authorization: Bearer ...' (repeatable)")
    p.add_argument("--server-stderr", action="store_true",
                   help="show a stdio server's stderr as it runs (default: only on failure)")


ASKING: Final = frozenset({"call", "read", "prompt"})
"""The commands whose request a server may answer with a question (`input_required`, or a
legacy server's request): they take the answering options."""


def _common(p: Any, *, asks: bool = True) -> None:
    """The options of the client commands: `connection_options`, the era, logs, and, for a
    command a server may ask a question in (`asks`), where answers come from."""
    connection_options(p)
    p.add_argument("--era", choices=("auto", "modern", "legacy"), default="auto",
                   help="probe (default) or pin the protocol era")
    p.add_argument("--log-level", choices=_LEVELS, metavar="LEVEL",
                   help="show the server's log messages at LEVEL and above on stderr "
                   f"({', '.join(_LEVELS)})")
    if not asks:
        p.set_defaults(no_input=False, answers_from_stdin=False, answer=[])
        return
    p.add_argument("--no-input", action="store_true",
                   help="never ask at the terminal (nor when stdin is no terminal): a "
                   "question --answer does not answer ends the command")
    p.add_argument("--answers-from-stdin", action="store_true",
                   help="when stdin is a pipe or a file, read the answers to the server's "
                   "questions from it: one line per field, then sent (no menu, no send step)")
    p.add_argument("--answer", action="append", default=[], metavar="FIELD=VALUE",
                   help="answer a field of the server's question without asking "
                   "(repeatable), e.g. --answer startsAt=2031-03-04T09:30:00Z")


def run_command(args: argparse.Namespace) -> int:
    from mcpkit.cli.signins import SignInFileError
    from mcpkit.store.tokens import TokenFileError

    try:
        return asyncio.run(_run(args))
    except UsageError as exc:
        print(f"mcpkit {args.client_command}: {shown_block(exc)}", file=sys.stderr)
        return 2
    except (SignInFileError, TokenFileError) as exc:  # the kept sign-ins cannot be read
        print(f"mcpkit {args.client_command}: {shown_block(exc)}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        return 130


async def _run(args: argparse.Namespace) -> int:
    from mcpkit._version import __version__
    from mcpkit.cli.given_answers import Answering, input_source, parse_given
    from mcpkit.client import ClientOptions
    from mcpkit.clients import Client
    from mcpkit.errors import MCPError, RPCError, SignInNeeded, StepUpNeeded, UsageError

    stderr = args.stderr_mode = "inherit" if args.server_stderr else "capture"
    connector = connector_for(args.server, headers=parse_headers(args.header), stderr=stderr,
                              config=args.config)
    source = input_source(args.no_input, args.answers_from_stdin)
    answering = Answering(parse_given(args.answer), source, args.no_input)
    options = ClientOptions(era=args.era, timeout=args.timeout, era_cache=era_cache_path(),
                            probe_timeout=min(10.0, args.timeout), log_level=args.log_level)
    client = Client(connector, client_info={"name": "mcpkit-cli", "version": __version__},
                    elicit=answering, elicit_url=answering.open_page if source != "none" else None,
                    on_log=print_log if args.log_level else None, options=options)
    command = args.client_command
    answering.watch()
    args.answering = answering
    try:
        async with client:
            try:
                return await _COMMANDS[command](client, args)
            except RPCError as exc:  # while connected: a stdio server's stderr is still here
                _say_rpc_error(command, exc)
                if exc.code == _INTERNAL_ERROR:
                    why = await explain_internal_error(client, args.server, stderr,
                                                       error_id_in(exc.message), exc.message)
                    print(f"  {why}", file=sys.stderr)
    except asyncio.CancelledError:
        if answering.problem is None:
            raise
        print(f"mcpkit {command}: {shown_text(answering.problem)}", file=sys.stderr)
        return 2
    except RPCError as exc:
        _say_rpc_error(command, exc)
    except StepUpNeeded as exc:  # the server needs scopes the kept sign-in lacks
        from mcpkit.cli.step_up import offer_step_up

        return await offer_step_up(args, exc, lambda: _run(args))
    except SignInNeeded as exc:  # no sign-in kept, or it ended: only `mcpkit login` gives one
        print(f"mcpkit {command}: {shown(exc.server_url)} needs a sign-in at {shown(exc.issuer)} "
              "(none is kept for it, or the kept one has expired or was revoked); run `mcpkit "
              f"login {shown(exc.server_url)}`", file=sys.stderr)
    except UsageError:  # the caller's mistake: status 2, said by main
        raise
    except MCPError as exc:
        print(f"mcpkit {command}: {explain_failure(args.server, str(exc))}", file=sys.stderr)
    return 1


def _say_rpc_error(command: str, exc: Any) -> None:
    print(f"mcpkit {command}: the server answered error {exc.code}: {shown_block(exc.message)}",
          file=sys.stderr)


async def _discover(client: Any, args: argparse.Namespace) -> int:
    result = await client.discover()
    if args.json:
        out({"era": client.era, "protocolVersion": client.protocol_version, "result": result})
        return 0
    print(identity(client))
    print(shown(f"supported versions: {', '.join(map(str, result.get('supportedVersions', [])))}"))
    caps = result.get("capabilities", {})
    parts = [k + (f" ({', '.join(f for f, v in caps[k].items() if v)})"
                  if isinstance(caps[k], dict) and any(caps[k].values()) else "")
             for k in caps]
    print(shown(f"capabilities: {', '.join(parts) or 'none'}"))
    if client.instructions:
        print(f"instructions: {shown_block(client.instructions.strip())}")
    return 0


async def _tools(client: Any, args: argparse.Namespace) -> int:
    tools = [tool.raw for tool in await client.list_tools()]
    rejected = client.rejected_tools
    if args.json:
        out({"tools": tools, "rejected": [{"name": r.name, "reason": r.reason}
                                          for r in rejected]})
        note(client, args.json)
        return 0
    print(f"{identity(client)} · {len(tools)} tool{'s' * (len(tools) != 1)}")
    for tool in tools:
        description = (tool.get("description") or "").strip().split("\n")  # \r is shown
        print(f"  {signature(tool)}"
              + (f"\n      {shown(description[0])}" if description[0] else ""))
    for r in rejected:
        print(f"  ignored {shown(r.name)}: {shown(r.reason)}")
    return 0


async def _call(client: Any, args: argparse.Namespace) -> int:
    arguments = None
    if args.arguments:
        tools = {t.name: t.raw for t in await client.list_tools()}
        if args.name not in tools:
            known = ", ".join(sorted(tools)) or "none"
            raise UsageError(f"the server has no tool {args.name!r} (its tools: {known})")
        tool = tools[args.name]
        arguments = typed_arguments(args.arguments, tool.get("inputSchema"),
                                    f"the tool {args.name!r}", signature(tool))
    progress = Progress()
    try:
        handle = await client.start_tool(args.name, arguments, progress=progress)
    finally:
        progress.done()
    if handle.task_id is None:
        result = (await handle.wait()).raw
    else:
        from mcpkit.ext.tasks.cli import follow

        result = await follow(client, handle, args, args.answering)
        if result is None:
            return 0 if args.detach else 130
    note(client, args.json)
    show_result(result, args.json)
    if not result.get("isError"):
        return 0
    texts = [b.get("text") for b in result.get("content") or [] if isinstance(b, dict)]
    error_id = next((found for t in texts if (found := error_id_in(t))), None)
    if error_id is not None:  # it raised unexpectedly: the why is in the server's log
        why = await explain_internal_error(client, args.server, args.stderr_mode, error_id,
                                           " ".join(t for t in texts if isinstance(t, str)))
        print(f"mcpkit call: {why}", file=sys.stderr)
    return 1


async def _read(client: Any, args: argparse.Namespace) -> int:
    result = (await client.read_resource(args.uri)).raw
    note(client, args.json)
    if args.json:
        out(result)
    else:
        show_contents(result.get("contents", []))
    return 0


async def _prompt(client: Any, args: argparse.Namespace) -> int:
    declared = None
    if args.arguments:
        prompts = {p.name: p.raw for p in await client.list_prompts()}
        if args.name not in prompts:
            known = ", ".join(sorted(str(n) for n in prompts)) or "none"
            raise UsageError(f"the server has no prompt {args.name!r} (its prompts: {known})")
        declared = prompts[args.name].get("arguments") or []
    arguments = prompt_arguments(args.arguments, declared, f"the prompt {args.name!r}")
    result = (await client.get_prompt(args.name, arguments)).raw
    note(client, args.json)
    if args.json:
        out(result)
        return 0
    if result.get("description"):
        print(f"# {shown(result['description'])}")
    for message in result.get("messages", []):
        print(f"{shown(message.get('role'))}:")
        show_content([message.get("content") or {}])
    return 0


async def _listen(client: Any, args: argparse.Namespace) -> int:
    every = not (args.tools or args.prompts or args.resources)
    seen = 0
    async with client.listen(tools=args.tools or every, prompts=args.prompts or every,
                             resources=args.resources or every, uris=args.uri) as sub:
        ack = sub.acknowledged or {}
        print(f"# {identity(client)} · listening for "
              f"{shown(', '.join(sorted(ack))) or 'nothing this server sends'}", file=sys.stderr,
              flush=True)
        if args.count == 0:
            return 0
        async for message in sub:
            params = message.get("params") or {}
            meta = params.get("_meta")
            count = meta.get(CHANGES_KEY) if isinstance(meta, dict) else None
            count = count if type(count) is int and count > 1 else 1  # coalesced by the server
            if args.json:
                print(json_text(message), flush=True)
            else:
                uri = params.get("uri")
                print(shown(message["method"].removeprefix("notifications/")
                            + (f" {uri}" if uri else "")
                            + (f" ({count} changes)" if count > 1 else "")), flush=True)
            seen += count
            if args.count is not None and seen >= args.count:
                break
    return 0


_COMMANDS: dict[str, Command] = {
    "discover": _discover, "tools": _tools, "call": _call, "read": _read, "prompt": _prompt,
    "listen": _listen}
"""The client commands by name; the extensions' own join it as they register
(`EXTENSION_COMMANDS`)."""

EXTENSION_COMMANDS: Final = ("mcpkit.ext.tasks.cli",)
"""The modules whose commands `mcpkit` offers beside its own: each has
`register(subparsers, common) -> {name: Command}`, adding its subcommands (with `common`, the
client commands' shared options) and returning the coroutine that runs each against a
connected client."""
