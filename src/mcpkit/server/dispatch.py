"""Routing a modern request to the function that serves it, and the ONE exception boundary.

`serve` is where every exception becomes a JSON-RPC error: `RPCError`s as themselves (or as
the caller's `errors` mapping makes them: the legacy adapter's codes), anything unexpected as
-32603 with the traceback logged to stderr and never sent. It is handed the work to do (an
awaitable), so it knows nothing of who does it: `Server.handle` passes `call` on the modern
request, the legacy adapter its own exchange.

`call` checks the envelope (`_meta`), finds the method in the server's routes, builds the
`Context` and returns the method's result (through the server's middleware chain, when it has
one), adding `serverInfo` where the method did not. The
routes are built once per server by `routes`: every modern request a client sends, as
`mcpkit.types.methods.METHODS` lists them, with the function serving it behind its row's
capability and params checks (`guards.py`); the function lives beside what it serves
(`tools.py`, `resources.py`, `prompts.py`, `discover.py`, `completion.py`, `subscriptions.py`).

Imports `mcpkit.protocol`, `mcpkit.errors`, `mcpkit.types`, `mcpkit.tracing` (the span `serve`
runs a request in while a tracer provider is set) and the server's own modules; of the server
it reads only its view `Served` (`mcpkit.server.view`, where `Handler` is defined too).
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable, Mapping
from types import MappingProxyType
from typing import Any, Final

from mcpkit.errors import InternalError, MethodNotFoundError, RPCError
from mcpkit.protocol.codec import Request, RequestId, error_message, result_message
from mcpkit.protocol.envelope import read_meta
from mcpkit.server.completion import complete
from mcpkit.server.context import Context, Notify
from mcpkit.server.discover import discover
from mcpkit.server.guards import guarded
from mcpkit.server.prompts import get_prompt, list_prompts
from mcpkit.server.resources import list_resources, list_templates, read_resource
from mcpkit.server.subscriptions import listen
from mcpkit.server.tool_calls import call_tool
from mcpkit.server.tools import list_tools
from mcpkit.server.view import Handler, Served
from mcpkit.tracing.spans import active, server_span
from mcpkit.types.methods import METHODS, Method

__all__ = [
    "SERVED_BY",
    "Handler",
    "Work",
    "call",
    "handle",
    "routes",
    "serve",
]
"""`Handler` is `mcpkit.server.view`'s, named here too: the routes built here hold them."""

log = logging.getLogger("mcpkit.server")

Work = Awaitable[dict[str, Any]]
"""What `serve` awaits for one request: the result, or an exception to turn into an error."""

SERVED_BY: Final[Mapping[str, Handler]] = MappingProxyType({
    Method.DISCOVER: discover,
    Method.TOOLS_LIST: list_tools,
    Method.TOOLS_CALL: call_tool,
    Method.RESOURCES_LIST: list_resources,
    Method.RESOURCES_TEMPLATES_LIST: list_templates,
    Method.RESOURCES_READ: read_resource,
    Method.PROMPTS_LIST: list_prompts,
    Method.PROMPTS_GET: get_prompt,
    Method.COMPLETE: complete,
    Method.SUBSCRIPTIONS_LISTEN: listen,
})
"""The function serving each modern request a client may send."""


def routes() -> dict[str, Handler]:
    """Method name -> handler, for one server: the modern requests a client sends (those of
    an extension join when it adds them, `Server.add_method`), each behind the checks of its
    row (`mcpkit.server.guards`)."""
    return {
        name: guarded(info, SERVED_BY[name])
        for name, info in METHODS.items()
        if info.is_request and info.by_client and info.modern and info.extension is None
    }


def error_of(exc: RPCError) -> dict[str, Any]:
    return exc.to_error()


def _failed(request: Request, exc: Exception,
            errors: Callable[[RPCError], dict[str, Any]]) -> dict[str, Any]:
    """The error response for what serving `request` raised (`serve`'s and `handle`'s)."""
    if isinstance(exc, RPCError):
        return error_message(request.id, errors(exc))
    log.error("internal error while serving %s (id %r)", request.method, request.id,
              exc_info=exc)
    return error_message(
        request.id, InternalError(f"Internal error while serving {request.method}").to_error()
    )


async def serve(
    request: Request,
    work: Work,
    *,
    errors: Callable[[RPCError], dict[str, Any]] = error_of,
) -> dict[str, Any]:
    """Await `work` for `request` and return its response message; never raises (but for
    cancel). An awaitable rather than a function to call, so a request pays for no extra
    object on its way in (`Server.handle` is on every request's path)."""
    tracer = active()  # None unless a tracer provider is set (mcpkit.tracing)
    if tracer is not None:
        work = server_span(tracer, request).run(work, errors)
    try:
        result = await work
    except Exception as exc:
        return _failed(request, exc, errors)
    return result_message(request.id, result)


async def handle(server: Served, request: Request, notify: Notify | None,
                 principal: Any) -> dict[str, Any]:
    """`serve` of `call` for one modern request in one coroutine rather than two
    (`Server.handle`: every request's path); the same steps and the same errors."""
    if active() is not None:  # a tracer provider is set: the span around the call
        return await serve(request, call(server, request.method, request.params, request.id,
                                         notify, principal))
    try:
        result = await _opened(server, request.method, request.params, request.id, notify,
                               principal)
        if "_meta" not in result:
            result["_meta"] = server.result_meta
    except Exception as exc:
        return _failed(request, exc, error_of)
    return result_message(request.id, result)


async def call(
    server: Served,
    method: str,
    params: dict[str, Any] | None,
    request_id: RequestId | None,
    notify: Notify | None,
    principal: Any = None,
    *,
    in_request_only: bool = False,
) -> dict[str, Any]:
    """Check the envelope, route, and return the modern result; raises RPCError.
    `in_request_only`: the caller takes no deferred answer (`Context.in_request_only`)."""
    result = await _opened(server, method, params, request_id, notify, principal,
                           in_request_only)
    if "_meta" not in result:
        result["_meta"] = server.result_meta
    return result


def _opened(server: Served, method: str, params: dict[str, Any] | None,
            request_id: RequestId | None, notify: Notify | None, principal: Any,
            in_request_only: bool = False) -> Work:
    """`call`'s checks and routing: the method's work to await for its result (through the
    server's middleware chain, when it has one); raises RPCError."""
    meta = read_meta(method, params)
    handler = server.routes.get(method)
    if handler is None:
        raise MethodNotFoundError(f"Method not found: {method}", {"method": method})
    ctx = Context(server, method, request_id, meta, notify, principal)
    if in_request_only:  # set after, not passed: a keyword costs every request's Context
        ctx.in_request_only = True
    chain = server.chain
    if chain is None:
        return handler(params, ctx)  # type: ignore[arg-type]
    # the middleware (`mcpkit.server.middleware`), then the handler
    return chain.run(method, params, ctx, handler)  # type: ignore[arg-type]
