"""The SERVER argument of the client commands, and what to tell the user when reaching it
failed.

SERVER is one argument: an http(s) URL, a Python file holding a `Server` (run over stdio as
`mcpkit run` runs it), or a stdio command line in one quoted string. What looks like an address
without its scheme (`127.0.0.1:8000/mcp`) is refused with the URL it probably meant, rather than
being run as a program of that name. A failure is explained in the user's terms: a port where
nothing listens, a port that does not speak HTTP, an internal error with the tail of what a
stdio server wrote on stderr (or how to see it).
"""

from __future__ import annotations

import asyncio
import os
import re
import shlex
from typing import Any, Final

from mcpkit.cli.terminal import shown, shown_block
from mcpkit.cli.usage import UsageError

__all__ = [
    "connector_for",
    "era_cache_path",
    "error_id_in",
    "explain_failure",
    "explain_internal_error",
    "parse_headers",
]

_ADDRESS: Final = re.compile(r"^(localhost|\d{1,3}(\.\d{1,3}){3}|\[[0-9A-Fa-f:.]+\]|[\w-]+(\.[\w-]+)+)"
                             r":\d{1,5}(/\S*)?$")
"""`host:port[/path]`: an HTTP address written without `http://`."""

_NOT_HTTP: Final = ("ReadError", "WriteError", "RemoteProtocolError",
                    "disconnected without sending a response", "illegal status line",
                    "invalid status line", "peer closed connection")
"""How the HTTP client reports a peer that took the connection but did not answer HTTP."""

STDERR_LINES: Final = 30
"""Lines of a stdio server's stderr shown after an unexpected failure (a traceback's worth)."""
_STDERR_WAITS: Final = 50
"""Looks, 20 ms apart, for the failure's log line to arrive on stderr before showing it."""
_HIDDEN: Final = "an unexpected error in the server"
"""How a server that keeps an exception to its log words the failure (mcpkit's, without
`--dev`): only then is `--dev` worth suggesting."""
_ERROR_ID: Final = re.compile(r"failed \(error id ([0-9a-f]{8,32})\)")


def connector_for(spec: str, *, headers: dict[str, str] | None = None,
                  stderr: str = "capture", config: str | None = None, tap: Any = None,
                  http_options: dict[str, Any] | None = None) -> Any:
    """The connector SERVER names: a URL, a Python file with a Server, or a command line;
    with `config`, the name of an entry of that `mcpServers` file. `tap` sees every message
    of its connections (`mcpkit dev`'s wire pane), `http_options` go to httpx for an HTTP
    server (its event hooks)."""
    spec = spec.strip()
    if config is not None:
        return _configured(config, spec, headers or {}, stderr)
    if not spec:
        raise UsageError("SERVER is empty; give a URL, a .py file or a command line")
    if spec.startswith(("http://", "https://")):
        return _http(spec, headers or {}, tap=tap, httpx_options=http_options)
    from mcpkit.transports.stdio.client import StdioServer, python_server

    path = spec.rsplit(":", 1)[0] if spec.count(":") == 1 and not os.path.exists(spec) else spec
    if path.endswith(".py") and " " not in spec:
        if not os.path.isfile(path):
            raise UsageError(f"file not found: {path}")
        return python_server(spec, stderr=stderr, tap=tap)
    if _ADDRESS.match(spec) and not os.path.exists(spec):
        raise UsageError(f"{spec!r} has no scheme; did you mean http://{spec} ? "
                         "(SERVER is a URL, a .py file, or a command line to run)")
    try:
        argv = shlex.split(spec)
    except ValueError as exc:
        raise UsageError(f"cannot split the command {spec!r}: {exc}") from None
    return StdioServer(argv, stderr=stderr, tap=tap)  # type: ignore[arg-type]


def parse_headers(raw: list[str]) -> dict[str, str]:
    """`-H 'Name: value'` options as a header dict."""
    out = {}
    for item in raw:
        name, sep, value = item.partition(":")
        if not sep or not name.strip():
            raise UsageError(f"--header {item!r} must look like 'Name: value'")
        out[name.strip()] = value.strip()
    return out


def _http(url: str, headers: dict[str, str], **options: Any) -> Any:
    from mcpkit.transports.http_client.transport import HTTPConnector

    if any(name.lower() == "authorization" for name in headers):
        return HTTPConnector(url, headers=headers, **options)  # the user's own credentials
    from mcpkit.cli.signins import auth_for

    # The tokens `mcpkit login` kept, refreshed as they expire (nothing for a server that asks
    # for nothing).
    return HTTPConnector(url, headers=headers, auth=auth_for(url), **options)


def _configured(path: str, name: str, headers: dict[str, str], stderr: str) -> Any:
    """The connector of entry `name` of the `mcpServers` file at `path` (`--config`): its
    command, args, env and cwd, or its URL with its headers (then `-H`'s)."""
    from mcpkit.client.server_entries import read_entry
    from mcpkit.errors import ServerConfigError
    from mcpkit.transports.entries import connector_for as entry_connector

    try:
        entry = read_entry(os.path.expanduser(path), name)
    except ServerConfigError as exc:
        raise UsageError(f"--config {exc}") from None
    if entry.transport == "http":
        assert entry.url is not None
        return _http(entry.url, {**entry.headers, **headers})
    return entry_connector(entry, stderr=stderr)


def era_cache_path() -> str:
    """Where the client remembers each server's era between runs (the user's cache folder)."""
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return os.path.join(base, "mcpkit", "eras.json")


def explain_failure(spec: str, message: str) -> str:
    """A transport failure as the user can act on it: for an HTTP target, whether anything
    listens there and whether it speaks HTTP; otherwise the message itself, its line breaks
    kept (a server's stderr tail follows it)."""
    if spec.strip().startswith(("http://", "https://")):
        from urllib.parse import urlsplit

        where = urlsplit(spec.strip()).netloc or spec
        if "cannot connect" in message:
            return (f"nothing is listening at {shown(where)} ({shown(message)}); start the "
                    "server first, e.g. `mcpkit run server.py --http PORT`")
        if any(sign in message for sign in _NOT_HTTP):
            return (f"{shown(where)} took the connection but did not answer HTTP ({shown(message)});"
                    " is this the port of an MCP server? (`mcpkit run server.py --http PORT` "
                    "serves one)")
    return shown_block(message)


def error_id_in(text: Any) -> str | None:
    """The error id a server's failure text carries (`tool 'x' failed (error id ...)`)."""
    found = _ERROR_ID.search(text) if isinstance(text, str) else None
    return found.group(1) if found else None


async def explain_internal_error(client: Any, spec: str, stderr: str,
                                 error_id: str | None = None, text: str = "") -> str:
    """What to add to an unexpected failure (an `isError` with an error id, a -32603): the
    traceback is in the server's log, not in the answer, so show a stdio server's stderr from
    the line naming the error id (or its tail), or say where to look. `text`, the failure as
    the server worded it: when it already carries the exception (a server run with `--dev`),
    serving with `--dev` is not suggested again."""
    transport: Any = getattr(client, "transport", None)
    if isinstance(getattr(transport, "stderr_text", None), str):
        # The server logged before it answered; its stderr may still be on the way in.
        for _ in range(_STDERR_WAITS):
            if error_id is None or error_id in transport.stderr_text:
                break
            await asyncio.sleep(0.02)
        lines = transport.stderr_text.rstrip().splitlines()
        start = next((i for i, line in enumerate(lines) if error_id and error_id in line), None)
        tail = lines[start:start + STDERR_LINES] if start is not None else lines[-STDERR_LINES:]
        if tail:
            return "the server's stderr ended with:\n  | " + "\n  | ".join(shown(t) for t in tail)
    if stderr == "inherit":
        return "the server's stderr is above"
    hint = "" if text and _HIDDEN not in text else (
        "; serve it with `mcpkit run --dev` to get the error's type and message in the answer")
    if spec.strip().startswith(("http://", "https://")):
        where = f" under error id {error_id}" if error_id else ""
        return f"the details are in the server's log (its stderr){where}{hint}"
    return f"the server wrote nothing on stderr{hint}"
