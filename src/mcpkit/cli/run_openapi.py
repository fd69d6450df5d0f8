"""`mcpkit run --openapi SPEC --base-url URL`: a REST API as an MCP server without a line of
code (`mcpkit.openapi`).

`--openapi` takes the document's path or its http(s) URL (JSON or YAML); alone it is the
whole server, named after the document's `info`, and beside a server FILE its operations are
added to that server's tools. `--base-url` is where the requests go (by default the document's
first server). `--api-header 'Name: value'` (repeatable) is sent with every request: the API's
key or token, given as configuration and never by the MCP client. A value written `$VAR` or
`${VAR}` is read from the environment variable VAR, so a secret stays off the command line
(which `ps` shows).

The three are entries of `mcpkit run`'s settings table (`mcpkit.cli.settings`: their flags,
and `MCPKIT_OPENAPI`, `MCPKIT_BASE_URL`, `MCPKIT_API_HEADER` with one header per line), read
back here by `openapi_settings` into `OpenAPISettings`, plain data like the other run options.

Imports: the standard library and `mcpkit.cli.usage`; `mcpkit.openapi` when a document is
served.
"""

from __future__ import annotations

import argparse
import os
import re
import sys
from dataclasses import dataclass
from typing import Any, Final

from mcpkit.cli.usage import UsageError

__all__ = [
    "OpenAPISettings",
    "header_lines",
    "openapi_settings",
    "serve_openapi",
]

_FROM_ENV: Final = re.compile(r"^\$(?:\{([A-Za-z_][A-Za-z0-9_]*)\}|([A-Za-z_][A-Za-z0-9_]*))$")
_TOKEN: Final = re.compile(r"^[!#$%&'*+.^_`|~0-9A-Za-z-]+$")


@dataclass(frozen=True)
class OpenAPISettings:
    """What `mcpkit run` was told about the API it serves."""

    spec: str
    base_url: str | None = None
    headers: tuple[tuple[str, str], ...] = ()
    """(name, value as written): a `$VAR` value is read when the server is built."""


def header_lines(text: str) -> tuple[str, ...]:
    """`--api-header` values (one per line in `MCPKIT_API_HEADER`), each checked to be
    `NAME: VALUE`; a `ValueError` says what was expected."""
    lines = tuple(line.strip() for line in text.splitlines() if line.strip())
    for line in lines:
        name, colon, _ = line.partition(":")
        if not colon or not _TOKEN.match(name.strip()):
            raise ValueError(f"expected 'NAME: VALUE', e.g. 'Authorization: Bearer $API_TOKEN', "
                             f"not {line!r}")
    return lines


def openapi_settings(args: argparse.Namespace) -> OpenAPISettings | None:
    """The API `args` ask to serve, or None; a `UsageError` naming the option when they do
    not fit together."""
    spec = getattr(args, "openapi", None)
    base_url = getattr(args, "base_url", None)
    headers = list(getattr(args, "api_header", None) or [])
    if spec is None:
        if base_url is not None or headers:
            named = "--base-url" if base_url is not None else "--api-header"
            raise UsageError(f"{named} belongs to the API of --openapi SPEC; add it")
        return None
    if base_url is not None and not base_url.startswith(("http://", "https://")):
        raise UsageError(f"--base-url {base_url!r} is not an http(s) URL, e.g. "
                         "https://api.example.com/v1")
    if getattr(args, "workers", None) is not None or getattr(args, "reload", False):
        raise UsageError("--openapi is served by one process: without --workers and --reload "
                         "(a server file built with Server.from_openapi takes both)")
    parsed = []
    for header in headers:
        try:
            (line,) = header_lines(header)
        except ValueError as exc:
            raise UsageError(f"--api-header: {exc}") from None
        name, _, value = line.partition(":")
        parsed.append((name.strip(), value.strip()))
    return OpenAPISettings(spec, base_url, tuple(parsed))


def _header_values(settings: OpenAPISettings) -> dict[str, str]:
    values: dict[str, str] = {}
    for name, written in settings.headers:
        found = _FROM_ENV.match(written)
        if found is None:
            values[name] = written
            continue
        variable = found.group(1) or found.group(2)
        value = os.environ.get(variable)
        if not value:
            raise UsageError(f"--api-header {name}: the environment variable {variable} is not "
                             "set")
        values[name] = value
    return values


def serve_openapi(settings: OpenAPISettings, server: Any = None) -> Any:
    """`server` (or a new one named after the document) serving the API's operations; what
    was made of them is said on stderr, one line, and one more for each operation left out."""
    from mcpkit.errors import MissingExtraError
    from mcpkit.openapi import OpenAPIError, OpenAPIOptions, add_openapi, load_document

    try:
        options = OpenAPIOptions(headers=_header_values(settings))
        document = load_document(settings.spec, options)
        if server is None:
            from mcpkit.app import Server

            server = Server(document.title, document.info_version)
        bridged = add_openapi(server, document, base_url=settings.base_url, options=options)
    except (OpenAPIError, MissingExtraError) as exc:
        raise UsageError(f"--openapi {exc}" if isinstance(exc, OpenAPIError) else str(exc)
                         ) from None
    print(f"mcpkit: {bridged.summary()}", file=sys.stderr, flush=True)
    for label, reason in bridged.skipped:
        print(f"mcpkit: left out {label}: {reason}", file=sys.stderr, flush=True)
    return server
