"""The client commands: `mcpkit discover | tools | call | read | prompt | listen SERVER ...`.

Bare hands for poking a server, built on the public API only. SERVER is one argument: an
http(s) URL, a Python file holding a `Server` (run over stdio as `mcpkit run` runs it), or a
stdio command line in one quoted string. Output is for people on a terminal, or JSON with
`--json`; the era and version in use are always shown (on stderr when stdout is JSON or a
result). A call's progress is drawn on stderr; a server's questions (elicitation) are asked at
the terminal. Exit status: 0 success, 1 the server said no (an error, `isError`), 2 a usage
error. Everything a server wrote is printed through `mcpkit.cli.terminal`, so no escape
sequence, control or bidi character of a server reaches the terminal; `--json` output stays
exact JSON. This module imports nothing heavy until a command runs.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import shlex
import sys
from typing import Any

from mcpkit.cli.terminal import json_text, shown, shown_block, shown_text

__all__ = ["connector_for", "register", "run_command", "typed_arguments"]

COMMANDS = {
    "discover": "show what a server is and offers (era, version, capabilities)",
    "tools": "list a server's tools",
    "call": "call a tool: TOOL [JSON | key=value ...]",
    "read": "read a resource: URI",
    "prompt": "get a prompt: NAME [key=value ...]",
    "listen": "print change notifications until interrupted",
}


class UsageError(Exception):
    """A mistake on the command line; one line for the user, exit status 2."""


def register(sub: Any) -> None:
    """Add the client commands to `mcpkit`'s subparsers."""
    for name, help_text in COMMANDS.items():
        p = sub.add_parser(name, help=help_text, description=help_text)
        p.set_defaults(client_command=name)
        p.add_argument("server", metavar="SERVER",
                       help="http(s) URL, path/to/server.py[:name], or a quoted command line")
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
            p.add_argument("--count", type=int, metavar="N", help="stop after N notifications")
        p.add_argument("--json", action="store_true", help="print JSON for scripts")
        p.add_argument("--era", choices=("auto", "modern", "legacy"), default="auto",
                       help="probe (default) or pin the protocol era")
        p.add_argument("--timeout", type=float, default=60.0, metavar="SECONDS",
                       help="wait this long for each response (default 60)")
        p.add_argument("-H", "--header", action="append", default=[], metavar="NAME:VALUE",
                       help="extra HTTP header, e.g. 'Authorization: Bearer ...' (repeatable)")
        p.add_argument("--server-stderr", action="store_true",
                       help="show a stdio server's stderr as it runs (default: only on failure)")
        p.add_argument("--no-input", action="store_true",
                       help="never ask questions at the terminal (elicitation is not offered)")


def run_command(args: argparse.Namespace) -> int:
    try:
        return asyncio.run(_run(args))
    except UsageError as exc:
        print(f"mcpkit {args.client_command}: {shown(exc)}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        return 130


# -- SERVER ------------------------------------------------------------------------------


def connector_for(spec: str, *, headers: dict[str, str] | None = None,
                  stderr: str = "capture") -> Any:
    """The connector SERVER names: a URL, a Python file with a Server, or a command line."""
    spec = spec.strip()
    if not spec:
        raise UsageError("SERVER is empty; give a URL, a .py file or a command line")
    if spec.startswith(("http://", "https://")):
        from mcpkit.transports.http_client import HTTPConnector

        return HTTPConnector(spec, headers=headers or {})
    from mcpkit.transports.stdio_client import StdioServer, python_server

    path = spec.rsplit(":", 1)[0] if spec.count(":") == 1 and not os.path.exists(spec) else spec
    if path.endswith(".py") and " " not in spec:
        if not os.path.isfile(path):
            raise UsageError(f"file not found: {path}")
        return python_server(spec, stderr=stderr)
    try:
        argv = shlex.split(spec)
    except ValueError as exc:
        raise UsageError(f"cannot split the command {spec!r}: {exc}") from None
    return StdioServer(argv, stderr=stderr)  # type: ignore[arg-type]


def _headers(raw: list[str]) -> dict[str, str]:
    out = {}
    for item in raw:
        name, sep, value = item.partition(":")
        if not sep or not name.strip():
            raise UsageError(f"--header {item!r} must look like 'Name: value'")
        out[name.strip()] = value.strip()
    return out


def _era_cache() -> str:
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return os.path.join(base, "mcpkit", "eras.json")


# -- arguments typed from a schema ------------------------------------------------------


def _coerce(text: str, schema: Any, name: str) -> Any:
    kinds = schema.get("type") if isinstance(schema, dict) else None
    kinds = kinds if isinstance(kinds, list) else [kinds] if kinds else []
    if "string" in kinds and len(kinds) == 1:
        return text
    try:
        value = json.loads(text)
    except ValueError:
        if not kinds or "string" in kinds:
            return text
        raise UsageError(f"{name}={text!r}: expected {' or '.join(kinds)}") from None
    if "integer" in kinds and isinstance(value, float) and value.is_integer():
        value = int(value)
    if kinds and not any(_is(value, k) for k in kinds):
        if "string" in kinds:
            return text
        raise UsageError(f"{name}={text!r}: expected {' or '.join(kinds)}")
    return value


def _is(value: Any, kind: str) -> bool:
    return {
        "integer": isinstance(value, int) and not isinstance(value, bool),
        "number": isinstance(value, int | float) and not isinstance(value, bool),
        "boolean": isinstance(value, bool), "string": isinstance(value, str),
        "array": isinstance(value, list), "object": isinstance(value, dict),
        "null": value is None,
    }.get(kind, True)


def typed_arguments(raw: list[str], schema: dict[str, Any] | None) -> dict[str, Any] | None:
    """`["a=2", "b=x"]` -> `{"a": 2, "b": "x"}` by the schema's property types; one JSON
    object is taken as it is."""
    if not raw:
        return None
    if len(raw) == 1 and raw[0].lstrip().startswith("{"):
        try:
            value = json.loads(raw[0])
        except ValueError as exc:
            raise UsageError(f"the arguments are not valid JSON: {exc}") from None
        if not isinstance(value, dict):
            raise UsageError("the JSON arguments must be an object")
        return value
    properties = (schema or {}).get("properties") or {}
    out: dict[str, Any] = {}
    for item in raw:
        key, sep, text = item.partition("=")
        if not sep or not key:
            raise UsageError(f"argument {item!r} must be key=value (or pass one JSON object)")
        out[key] = _coerce(text, properties.get(key), key)
    return out


# -- interaction (the questions themselves: mcpkit.cli.answers) --------------------


class _Progress:
    """Draws a call's progress on stderr: a bar on a terminal, plain lines otherwise."""

    def __init__(self) -> None:
        self.tty = sys.stderr.isatty()
        self.drawn = False

    def __call__(self, progress: float, total: float | None, message: str | None) -> None:
        text = f" {shown(message)}" if message else ""
        if total:
            frac = max(0.0, min(1.0, progress / total))
            bar = "#" * int(frac * 30)
            line = f"[{bar:<30}] {progress:g}/{total:g}{text}"
        else:
            line = f"[{progress:g}]{text}"
        if self.tty:
            print(f"\r\x1b[2K{line}", end="", file=sys.stderr, flush=True)
            self.drawn = True
        else:
            print(f"progress {line}", file=sys.stderr, flush=True)

    def done(self) -> None:
        if self.drawn:
            print(file=sys.stderr)


# -- running a command --------------------------------------------------------------------


async def _run(args: argparse.Namespace) -> int:
    from mcpkit.cli.answers import elicit_form, elicit_url
    from mcpkit.client import Client, ClientOptions
    from mcpkit.errors import MCPError, RPCError

    connector = connector_for(args.server, headers=_headers(args.header),
                              stderr="inherit" if args.server_stderr else "capture")
    interactive = not args.no_input
    options = ClientOptions(era=args.era, timeout=args.timeout, era_cache=_era_cache(),
                            probe_timeout=min(10.0, args.timeout))
    from mcpkit._version import __version__

    client = Client(connector, client_info={"name": "mcpkit-cli", "version": __version__},
                    elicit=elicit_form if interactive else None,
                    elicit_url=elicit_url if interactive else None, options=options)
    command = args.client_command
    try:
        async with client:
            return await _COMMANDS[command](client, args)
    except RPCError as exc:
        print(f"mcpkit {command}: the server answered error {exc.code}: {shown(exc.message)}",
              file=sys.stderr)
    except MCPError as exc:
        print(f"mcpkit {command}: {shown(exc)}", file=sys.stderr)
    return 1


def _identity(client: Any) -> str:
    info = client.server_info or {}
    name = info.get("title") or info.get("name") or "server"
    version = f" {info['version']}" if info.get("version") else ""
    return shown(f"{name}{version} · {client.era} {client.protocol_version}")


def _out(value: Any) -> None:
    print(json_text(value, indent=2))


def _note(client: Any, args: argparse.Namespace) -> None:
    """The era line for commands whose stdout is the result itself."""
    if not args.json or sys.stderr.isatty():
        print(f"# {_identity(client)}", file=sys.stderr)


async def _discover(client: Any, args: argparse.Namespace) -> int:
    result = await client.discover()
    if args.json:
        _out({"era": client.era, "protocolVersion": client.protocol_version, "result": result})
        return 0
    print(_identity(client))
    print(shown(f"supported versions: {', '.join(map(str, result.get('supportedVersions', [])))}"))
    caps = result.get("capabilities", {})
    parts = [k + (f" ({', '.join(f for f, v in caps[k].items() if v)})"
                  if isinstance(caps[k], dict) and any(caps[k].values()) else "")
             for k in caps]
    print(shown(f"capabilities: {', '.join(parts) or 'none'}"))
    if client.instructions:
        print(f"instructions: {shown_block(client.instructions.strip())}")
    return 0


def _signature(tool: dict[str, Any]) -> str:
    schema = tool.get("inputSchema") or {}
    required = set(schema.get("required") or [])
    args = []
    for name, prop in (schema.get("properties") or {}).items():
        kind = prop.get("type", "any") if isinstance(prop, dict) else "any"
        kind = "|".join(kind) if isinstance(kind, list) else kind
        args.append(f"{name}{'' if name in required else '?'}: {kind}")
    return shown(f"{tool['name']}({', '.join(args)})")


async def _tools(client: Any, args: argparse.Namespace) -> int:
    tools = await client.list_tools()
    rejected = client.rejected_tools
    if args.json:
        _out({"tools": tools, "rejected": [{"name": r.name, "reason": r.reason}
                                           for r in rejected]})
        _note(client, args)
        return 0
    print(f"{_identity(client)} · {len(tools)} tool{'s' * (len(tools) != 1)}")
    for tool in tools:
        description = (tool.get("description") or "").strip().splitlines()
        print(f"  {_signature(tool)}"
              + (f"\n      {shown(description[0])}" if description else ""))
    for r in rejected:
        print(f"  ignored {shown(r.name)}: {shown(r.reason)}")
    return 0


def _show_content(blocks: list[Any]) -> None:
    for block in blocks:
        kind = block.get("type") if isinstance(block, dict) else None
        if kind == "text":
            print(shown_text(block.get("text", "")))
        elif kind in ("image", "audio"):
            size = len(block.get("data", "")) * 3 // 4
            print(shown(f"[{kind} {block.get('mimeType', '?')}, about {size} bytes]"))
        elif kind == "resource_link":
            print(shown(f"-> {block.get('uri')} ({block.get('name', '')})"))
        elif kind == "resource":
            _show_contents([block.get("resource") or {}])
        else:
            print(json_text(block))


def _show_contents(contents: list[Any]) -> None:
    for item in contents:
        if "text" in item:
            print(shown_text(item["text"]))
        else:
            size = len(item.get("blob", "")) * 3 // 4
            print(shown(f"[{item.get('uri')}: {item.get('mimeType', 'binary')}, "
                        f"about {size} bytes]"))


async def _call(client: Any, args: argparse.Namespace) -> int:
    schema = None
    if args.arguments and not args.arguments[0].lstrip().startswith("{"):
        tools = {t["name"]: t for t in await client.list_tools()}
        if args.name not in tools:
            known = ", ".join(sorted(tools)) or "none"
            raise UsageError(f"the server has no tool {args.name!r} (its tools: {known})")
        schema = tools[args.name].get("inputSchema")
    arguments = typed_arguments(args.arguments, schema)
    progress = _Progress()
    try:
        result = await client.call_tool(args.name, arguments, progress=progress)
    finally:
        progress.done()
    _note(client, args)
    if args.json:
        _out(result)
    else:
        structured = result.get("structuredContent")
        content = result.get("content", [])
        if structured is not None and _same(content, structured):
            _out(structured)
        else:
            _show_content(content)
            if structured is not None:
                _out(structured)
    return 1 if result.get("isError") else 0


def _same(content: list[Any], structured: Any) -> bool:
    if len(content) != 1 or content[0].get("type") != "text":
        return False
    try:
        return bool(json.loads(content[0].get("text", "")) == structured)
    except ValueError:
        return False


async def _read(client: Any, args: argparse.Namespace) -> int:
    result = await client.read_resource(args.uri)
    _note(client, args)
    if args.json:
        _out(result)
    else:
        _show_contents(result.get("contents", []))
    return 0


async def _prompt(client: Any, args: argparse.Namespace) -> int:
    arguments = typed_arguments(args.arguments, None)
    if arguments is not None:
        arguments = {k: v if isinstance(v, str) else json.dumps(v) for k, v in arguments.items()}
    result = await client.get_prompt(args.name, arguments)
    _note(client, args)
    if args.json:
        _out(result)
        return 0
    if result.get("description"):
        print(f"# {shown(result['description'])}")
    for message in result.get("messages", []):
        print(f"{shown(message.get('role'))}:")
        _show_content([message.get("content") or {}])
    return 0


async def _listen(client: Any, args: argparse.Namespace) -> int:
    every = not (args.tools or args.prompts or args.resources)
    seen = 0
    async with client.listen(tools=args.tools or every, prompts=args.prompts or every,
                             resources=args.resources or every, uris=args.uri) as sub:
        ack = sub.acknowledged or {}
        print(f"# {_identity(client)} · listening for "
              f"{shown(', '.join(sorted(ack))) or 'nothing this server sends'}", file=sys.stderr,
              flush=True)
        if args.count == 0:
            return 0
        async for note in sub:
            if args.json:
                print(json_text(note), flush=True)
            else:
                uri = (note.get("params") or {}).get("uri")
                print(shown(note["method"].removeprefix("notifications/")
                            + (f" {uri}" if uri else "")), flush=True)
            seen += 1
            if args.count is not None and seen >= args.count:
                break
    return 0


_COMMANDS = {"discover": _discover, "tools": _tools, "call": _call, "read": _read,
             "prompt": _prompt, "listen": _listen}
