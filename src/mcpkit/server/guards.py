"""What a request passes before its method's handler runs: the checks its row in the method
table names.

`guarded` wraps a handler in the two checks of its row (`mcpkit.types.methods.MethodInfo`):
the client capabilities the request must declare (its `capability` column, -32021 naming what
is missing) and the shape of its params (its `params` column, compiled once by
`mcpkit.schema.params`, -32602 naming the method and each wrong place; a server that does not
offer the method at all, by its `offered_as` column, says -32601 first, as its handler would). Both run in one plain
function that hands back the handler's coroutine, so a checked request pays for no extra frame,
and a row with neither check keeps its handler as it is. The core routes (`dispatch.routes`)
and the methods an extension adds (`Server.add_method`) are wrapped the same way, so a
malformed param is refused from this one place.

Imports `mcpkit.errors`, `mcpkit.protocol`, `mcpkit.schema`, `mcpkit.types`; the `Context`
only for its type.
"""

from __future__ import annotations

from collections.abc import Awaitable, Mapping
from typing import TYPE_CHECKING, Any

from mcpkit.errors import (
    InvalidParamsError,
    MethodNotFoundError,
    MissingRequiredClientCapabilityError,
)
from mcpkit.schema.params import params_check
from mcpkit.types.constants import CLIENT_CAPABILITIES_KEY
from mcpkit.types.methods import MethodInfo

if TYPE_CHECKING:
    from mcpkit.server.context import Context
    from mcpkit.server.extensions import MethodHandler as Handler

__all__ = [
    "guarded",
    "undeclared",
]


def undeclared(declared: Mapping[str, Any], required: Mapping[str, Any]) -> dict[str, Any]:
    """The part of `required` (a `requiredCapabilities` object) the request's capabilities do
    not declare. A capability is declared by an object at its place, one level down (an
    extension by its settings object: `{"extensions": {ident: {}}}`)."""
    missing: dict[str, Any] = {}
    for name, sub in required.items():
        have = declared.get(name)
        if type(have) is not dict:
            missing[name] = {k: dict(v) for k, v in sub.items()}
            continue
        lacking = {k: dict(v) for k, v in sub.items() if type(have.get(k)) is not dict}
        if lacking:
            missing[name] = lacking
    return missing


def _refusal(info: MethodInfo, missing: dict[str, Any]) -> str:
    if info.extension is not None and missing == {"extensions": {info.extension: {}}}:
        return (f"{info.name} belongs to the extension {info.extension}, which this request "
                "did not declare in _meta clientCapabilities.extensions")
    return (f"{info.name} needs the client capabilities {missing}, which this request did not "
            f"declare in _meta {CLIENT_CAPABILITIES_KEY}")


def _offered(info: MethodInfo, ctx: Context) -> None:
    """-32601 when the server does not offer the method at all, which its handler would have
    said first (a malformed `tools/call` to a server without tools); the params' fault is
    second. Only on the way to a refusal, so a request that passes pays nothing for it."""
    kind = info.offered_as
    if kind is not None and kind not in ctx.server.capabilities():
        raise MethodNotFoundError(
            f"Method not found: {info.name} (this server offers no {kind})", {"method": info.name})


def guarded(info: MethodInfo, handler: Handler) -> Handler:
    """`handler` behind its row's capability and params checks (itself when it has neither)."""
    check = params_check(info)
    needs = info.capability
    if check is None and needs is None:
        return handler

    def guard(params: dict[str, Any], ctx: Context) -> Awaitable[dict[str, Any]]:
        if needs is not None:
            missing = undeclared(ctx.meta.client_capabilities, needs)
            if missing:
                raise MissingRequiredClientCapabilityError(missing, _refusal(info, missing))
        if check is not None and params is not None:
            try:
                check(params)
            except InvalidParamsError:
                _offered(info, ctx)
                raise
        return handler(params, ctx)

    return guard
