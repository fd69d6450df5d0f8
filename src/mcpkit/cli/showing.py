"""How the client commands show what a server sent: its identity, signatures, results, a
call's progress and the server's log messages.

Results go to stdout (they are the output), everything about the run to stderr: the era
line, progress, log messages. Every piece of server text passes through `mcpkit.cli.terminal`,
so none of it can drive the terminal. Imports the standard library and the CLI's own modules.
"""

from __future__ import annotations

import json
import sys
from typing import Any

from mcpkit.cli.arguments import kind_name
from mcpkit.cli.terminal import json_text, shown, shown_block, shown_text

__all__ = [
    "Progress",
    "identity",
    "note",
    "out",
    "print_log",
    "show_content",
    "show_contents",
    "show_result",
    "signature",
]


def identity(client: Any) -> str:
    """`name version · era protocolVersion`: which server, and how we are speaking to it."""
    info = client.server_info or {}
    name = info.get("title") or info.get("name") or "server"
    version = f" {info['version']}" if info.get("version") else ""
    return shown(f"{name}{version} · {client.era} {client.protocol_version}")


def out(value: Any) -> None:
    print(json_text(value, indent=2))


def note(client: Any, as_json: bool) -> None:
    """The era line, for commands whose stdout is the result itself (on stderr, and left out
    of a script's run with `--json` when nobody is watching)."""
    if not as_json or sys.stderr.isatty():
        print(f"# {identity(client)}", file=sys.stderr)


def signature(tool: dict[str, Any]) -> str:
    """`name(a: integer, where: Point, tags?: string[])`: a tool as it is called."""
    schema = tool.get("inputSchema") or {}
    required = set(schema.get("required") or [])
    defs = schema.get("$defs") or schema.get("definitions") or {}
    params = [f"{name}{'' if name in required else '?'}: {kind_name(prop, defs)}"
              for name, prop in (schema.get("properties") or {}).items()]
    return shown(f"{tool['name']}({', '.join(params)})")


def show_content(blocks: list[Any]) -> None:
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
            show_contents([block.get("resource") or {}])
        else:
            print(json_text(block))


def show_contents(contents: list[Any]) -> None:
    for item in contents:
        if "text" in item:
            print(shown_text(item["text"]))
        else:
            size = len(item.get("blob", "")) * 3 // 4
            print(shown(f"[{item.get('uri')}: {item.get('mimeType', 'binary')}, "
                        f"about {size} bytes]"))


def show_result(result: dict[str, Any], as_json: bool) -> None:
    """A tool's result: the whole object with `--json`; else its structured content once
    (when the text only repeats it), or the content blocks and then the structured value."""
    if as_json:
        out(result)
        return
    structured = result.get("structuredContent")
    content = result.get("content", [])
    if structured is not None and _same(content, structured):
        out(structured)
        return
    show_content(content)
    if structured is not None:
        out(structured)


def _same(content: list[Any], structured: Any) -> bool:
    if len(content) != 1 or content[0].get("type") != "text":
        return False
    try:
        return bool(json.loads(content[0].get("text", "")) == structured)
    except ValueError:
        return False


def print_log(level: str, data: Any, logger: str | None) -> None:
    """One `notifications/message` on stderr: `[level logger] text`, later lines behind a
    bar, so a log line cannot pass for the command's own output."""
    text = data if isinstance(data, str) else json_text(data)
    where = f" {logger}" if logger else ""
    print(f"[{shown(level)}{shown(where)}] {shown_block(text)}", file=sys.stderr, flush=True)


class Progress:
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
