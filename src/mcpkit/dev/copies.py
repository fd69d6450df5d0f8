"""A wire message as a command to run again from a shell: a `mcpkit` command line, or the curl
command of the same HTTP request.

The `mcpkit` line is the command that sends the same request (`mcpkit call SERVER TOOL
'{...}'`, `mcpkit read SERVER URI`, ...), with SERVER the argument the CLI takes for this
target; a request of a method no command sends has none. The curl command is the POST as it
went: the URL, the body byte for byte, the headers the transport set (the mirrored `Mcp-*`
ones included). The credentials are never copied: an `Authorization` or `DPoP` header is
written as `$MCP_AUTHORIZATION` / `$MCP_DPOP`, for the user to fill in from their own shell.

Pure: no I/O.
"""

from __future__ import annotations

import shlex
from collections.abc import Mapping
from typing import Any, Final

import orjson

from mcpkit.ext.tasks.wire import TaskMethod
from mcpkit.types.methods import Method

__all__ = [
    "SECRET_HEADERS",
    "curl_line",
    "mcpkit_line",
]

SECRET_HEADERS: Final = {"authorization": "MCP_AUTHORIZATION", "dpop": "MCP_DPOP"}
"""Headers that carry credentials, and the shell variable written in their place."""
_LEFT_OUT: Final = frozenset({"host", "content-length", "user-agent", "accept-encoding",
                              "connection"})
"""Headers curl sets itself."""


def _json(value: Any) -> str:
    return shlex.quote(orjson.dumps(value).decode())


def mcpkit_line(server: str, message: Mapping[str, Any]) -> str | None:
    """The `mcpkit` command sending the request `message` to `server`, or None."""
    method = message.get("method")
    params = message.get("params")
    params = params if isinstance(params, Mapping) else {}
    target = shlex.quote(server)
    if method == Method.TOOLS_CALL and isinstance(params.get("name"), str):
        arguments = params.get("arguments")
        line = f"mcpkit call {target} {shlex.quote(params['name'])}"
        return f"{line} {_json(arguments)}" if arguments else line
    if method == Method.RESOURCES_READ and isinstance(params.get("uri"), str):
        return f"mcpkit read {target} {shlex.quote(params['uri'])}"
    if method == Method.PROMPTS_GET and isinstance(params.get("name"), str):
        arguments = params.get("arguments")
        line = f"mcpkit prompt {target} {shlex.quote(params['name'])}"
        return f"{line} {_json(arguments)}" if arguments else line
    if method in (Method.DISCOVER, Method.INITIALIZE):
        return f"mcpkit discover {target}"
    if method == Method.TOOLS_LIST:
        return f"mcpkit tools {target}"
    if method == Method.SUBSCRIPTIONS_LISTEN:
        wanted = params.get("notifications")
        uris = wanted.get("resourceSubscriptions") if isinstance(wanted, Mapping) else None
        extra = "".join(f" --uri {shlex.quote(u)}" for u in uris or () if isinstance(u, str))
        return f"mcpkit listen {target}{extra}"
    task = params.get("taskId")
    if isinstance(task, str):
        if method == TaskMethod.GET:
            return f"mcpkit task get {target} -- {shlex.quote(task)}"
        if method == TaskMethod.CANCEL:
            return f"mcpkit task cancel {target} -- {shlex.quote(task)}"
        if method == TaskMethod.UPDATE and isinstance(params.get("inputResponses"), Mapping):
            return (f"mcpkit task answer {target} -- {shlex.quote(task)} "
                    f"{_json(params['inputResponses'])}")
    return None


def curl_line(url: str, headers: Mapping[str, str], body: bytes, method: str = "POST") -> str:
    """The curl command of one HTTP request (`headers` with lower-case names)."""
    parts = ["curl", "-sN", "-X", method, shlex.quote(url)]
    for name, value in headers.items():
        if name in _LEFT_OUT:
            continue
        secret = SECRET_HEADERS.get(name)
        if secret is not None:
            parts += ["-H", f'"{name}: ${secret}"']
        else:
            parts += ["-H", shlex.quote(f"{name}: {value}")]
    if body:
        parts += ["--data-raw", shlex.quote(body.decode("utf-8", "replace"))]
    return " ".join(parts)
