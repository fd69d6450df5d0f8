"""Requests served inside another: a handler's calls of its own server, and a mounted server's.

`call_own` is `ctx.call_tool`, `ctx.read_resource` and `ctx.get_prompt`: the request goes
through what a client's would (the `scopes=` of its target, checked here where the HTTP gate
cannot see it, the middleware chain, the method's checks) as a request of the same caller,
one level deeper (`Context.depth`, bounded by `ServerOptions.max_call_depth`, so a tool that
calls itself ends with an error instead of the stack). Its asks go to the caller's round: what
the called handler asks for is asked of the client in the caller's `input_required`. Its
progress is not reported (the caller's own reports must keep rising), its log messages are.

`call_in` serves a request of a mounted server's tool, resource or prompt (`Server.mount`):
the mounted server's own chain and method, with a `Context` of its own (its `server`, its
lifespan), for the same client and request.

Imports the server's own modules and `mcpkit.errors`; of a mounted server it reads its view
`Routed` (`mcpkit.server.view`).
"""

from __future__ import annotations

from typing import Any

from mcpkit.errors import InternalError, InvalidParamsError, MethodNotFoundError
from mcpkit.protocol.envelope import RequestMeta
from mcpkit.server.context import Context, called_by, caller_of
from mcpkit.server.mrtr import InputRequired
from mcpkit.server.scopes import operation_scopes
from mcpkit.server.view import Routed

__all__ = [
    "call_in",
    "call_own",
]


async def _serve(server: Routed, method: str, params: dict[str, Any], ctx: Context
                 ) -> dict[str, Any]:
    handler = server.routes.get(method)
    if handler is None:
        raise MethodNotFoundError(f"Method not found: {method}", {"method": method})
    chain = server.chain
    if chain is None:
        return await handler(params, ctx)
    return await chain.run(method, params, ctx, handler)


def _target(params: dict[str, Any]) -> str:
    return repr(params.get("name", params.get("uri")))


async def call_own(caller: Context, method: str, params: dict[str, Any]) -> dict[str, Any]:
    """`method(params)` on the caller's own server, for the same client, one level deeper."""
    server = caller.server
    depth = caller.depth + 1
    limit = server.options.max_call_depth
    if depth > limit:
        raise InternalError(
            f"ctx: {method} {_target(params)} would be nested {depth} deep in calls handlers "
            f"make of their own server (ServerOptions.max_call_depth is {limit}): a handler "
            "that calls itself, or two that call each other?")
    needed = operation_scopes(server, method, params)
    principal = caller.principal
    if needed and principal is not None and callable(getattr(principal, "grants", None)) \
            and not principal.grants(needed):
        raise InvalidParamsError(
            f"{method} {_target(params)} needs the scope(s) {' '.join(needed)}, which the "
            "caller's token does not grant", {"requiredScopes": list(needed)})
    meta = caller.meta
    quiet = RequestMeta(meta.protocol_version, meta.client_capabilities, meta.client_info,
                        meta.log_level, None, meta.raw)
    ctx = Context(server, method, caller.request_id, quiet, caller._notify, principal)
    called_by(ctx, caller)
    ctx.in_request_only = caller.in_request_only
    ctx._round = caller._round  # its asks are the caller's (`mrtr.begin_round` keeps it)
    result = await _serve(server, method, params, ctx)
    if result.get("resultType") == "input_required":
        if caller._round is not None:
            raise InputRequired(f"{method} {_target(params)}")
        raise InternalError(
            f"ctx: {method} {_target(params)} asked the client for input, which only a "
            "handler of tools/call, resources/read or prompts/get may do")
    return result


async def call_in(server: Routed, method: str, params: dict[str, Any], caller: Context
                  ) -> dict[str, Any]:
    """`method(params)` served by the mounted `server` for the caller's request."""
    ctx = Context(server, method, caller.request_id, caller.meta, caller._notify,
                  caller.principal)
    ctx.in_request_only = caller.in_request_only
    outer = caller_of(caller)
    if outer is not None:
        called_by(ctx, outer)
    return await _serve(server, method, params, ctx)
