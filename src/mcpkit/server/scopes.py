"""The OAuth scopes a server's operations need, and who may see which in a list.

A tool, resource, resource template or prompt may be registered with `scopes=[...]`: a call to
it needs a token granting all of them. The server itself never reads tokens; the HTTP app's
authorization check (`mcpkit.transports.http_server.auth`) asks `operation_scopes` what the request
in hand needs before routing it, and answers 403 `insufficient_scope` with every one of them.
With `ServerOptions.scoped_lists`, the lists leave out what the caller's principal is not
granted (AUTH-12): a principal says what it grants through `grants(scopes)` (what
`mcpkit.auth.server_config.Principal` does, counting the scope hierarchy); a caller without
one (stdio, an unprotected server) sees everything. Imports `mcpkit.types` and `mcpkit.protocol`.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from mcpkit.protocol.scopes import check_scopes
from mcpkit.server.context import Context
from mcpkit.types.methods import Method

__all__ = [
    "operation_scopes",
    "scopes_of",
    "viewer",
    "visible",
]

scopes_of = check_scopes
"""`scopes=` as given at registration, checked (`mcpkit.protocol.scopes.check_scopes`)."""


def operation_scopes(server: Any, method: str, params: Any) -> tuple[str, ...]:
    """The scopes the request `method(params)` needs: those of the tool, prompt, resource or
    template it names; none for anything else, or for a name the server does not know (the
    method refuses that itself)."""
    if type(params) is not dict:
        return ()
    if method == Method.TOOLS_CALL:
        entry = server.tools.get(params.get("name")) if type(params.get("name")) is str else None
    elif method == Method.PROMPTS_GET:
        entry = (server.prompts.get(params.get("name")) if type(params.get("name")) is str
                 else None)
    elif method == Method.RESOURCES_READ:
        uri = params.get("uri")
        if type(uri) is not str:
            return ()
        entry = server.resources.get(uri)
        if entry is None:
            entry = next((t for t in server.templates if t.template.match(uri) is not None),
                         None)
    else:
        return ()
    return () if entry is None else entry.scopes


def viewer(ctx: Context) -> frozenset[str] | None:
    """What a list shown to this caller depends on: None when lists are not filtered for it
    (the option is off, or its principal says nothing of scopes), else its granted scopes,
    which key the list's cache."""
    if not ctx.server.options.scoped_lists:
        return None
    principal = ctx.principal
    if principal is None or not callable(getattr(principal, "grants", None)):
        return None
    return frozenset(getattr(principal, "scopes", ()))


def visible(entries: Iterable[Any], ctx: Context, seen_by: frozenset[str] | None) -> list[Any]:
    """The definitions of `entries` this caller may see (`seen_by` from `viewer`)."""
    if seen_by is None:
        return [e.definition for e in entries]
    grants = ctx.principal.grants
    return [e.definition for e in entries if not e.scopes or grants(e.scopes)]
