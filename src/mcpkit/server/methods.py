"""The modern methods, the table that routes to them, and the ONE exception boundary.

`serve` is where every exception becomes a JSON-RPC error: `RPCError`s as themselves, anything
unexpected as -32603 with the traceback logged to stderr and never sent. Each method receives
the request's params and its `Context`, and returns a result dict; `serve` adds `resultType`
bookkeeping (`_meta` serverInfo) and the JSON-RPC envelope.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Any

from mcpkit.errors import (
    InternalError,
    InvalidParamsError,
    MethodNotFoundError,
    ResourceNotFoundError,
    RPCError,
    ToolError,
)
from mcpkit.protocol.codec import Request, RequestId, error_message, result_message
from mcpkit.protocol.cursor import decode_cursor, encode_cursor
from mcpkit.protocol.envelope import read_meta
from mcpkit.server.context import Context, Notify
from mcpkit.server.handles import HandleError
from mcpkit.server.mrtr import InputRequired, begin_round
from mcpkit.server.prompts import check_arguments, prompt_messages
from mcpkit.server.resources import CacheHint, read_contents
from mcpkit.server.subscriptions import ListenFilter
from mcpkit.server.threads import run_in_worker
from mcpkit.server.tools import arguments_of, call_result, error_result, lookup
from mcpkit.types.constants import SERVER_INFO_KEY, SUBSCRIPTION_ID_KEY, SUPPORTED_VERSIONS, Method

if TYPE_CHECKING:
    from mcpkit.server.server import Server

__all__ = ["call", "method_table", "serve"]

log = logging.getLogger("mcpkit.server")

Handler = Callable[[dict[str, Any], Context], Awaitable[dict[str, Any]]]


Call = Callable[..., Awaitable[dict[str, Any]]]


def error_of(exc: RPCError) -> dict[str, Any]:
    return exc.to_error()


async def serve(
    server: Server,
    request: Request,
    notify: Notify | None,
    principal: Any,
    *,
    calls: Call | None = None,
    errors: Callable[[RPCError], dict[str, Any]] = error_of,
) -> dict[str, Any]:
    """Serve one request and return its response message; never raises (but for cancel).

    The legacy adapter passes its own `calls` (which reshapes params and results) and
    `errors` (legacy codes), so this stays the one place exceptions become errors.
    """
    try:
        result = await (calls or call)(
            server, request.method, request.params, request.id, notify, principal
        )
    except RPCError as exc:
        return error_message(request.id, errors(exc))
    except Exception:
        log.exception("internal error while serving %s (id %r)", request.method, request.id)
        return error_message(
            request.id, InternalError(f"Internal error while serving {request.method}").to_error()
        )
    return result_message(request.id, result)


async def call(
    server: Server,
    method: str,
    params: dict[str, Any] | None,
    request_id: RequestId | None,
    notify: Notify | None,
    principal: Any = None,
) -> dict[str, Any]:
    """Check the envelope, route, and return the modern result; raises RPCError."""
    meta = read_meta(method, params)
    handler = server._methods.get(method)
    if handler is None:
        raise MethodNotFoundError(f"Method not found: {method}", {"method": method})
    ctx = Context(server, method, request_id, meta, notify, principal)
    result = await handler(params, ctx)  # type: ignore[arg-type]
    if "_meta" not in result:
        result["_meta"] = server.result_meta
    return result


async def invoke(fn: Callable[..., Any], is_async: bool, kwargs: dict[str, Any]) -> Any:
    """Call a handler: async ones on the loop, plain ones in a worker thread."""
    if is_async:
        return await fn(**kwargs)
    return await run_in_worker(fn, kwargs)


def _inject(injected: dict[str, type], kwargs: dict[str, Any], ctx: Context) -> None:
    for name in injected:
        kwargs[name] = ctx


def method_table(server: Server) -> dict[str, Handler]:
    """Method name -> handler, for the methods of the 2026-07-28 core."""

    def require(kind: str, method: str) -> None:
        if not getattr(server, kind):
            raise MethodNotFoundError(
                f"Method not found: {method} (this server offers no {kind})", {"method": method}
            )

    def page(kind: str, key: str, params: dict[str, Any], items: Callable[[], list[Any]]
             ) -> dict[str, Any]:
        method = f"{kind}/list" if kind != "templates" else Method.RESOURCES_TEMPLATES_LIST
        cursor = params.get("cursor")
        gen = server.generation
        offset = 0 if cursor is None else decode_cursor(method, cursor, gen)
        cache_key = (kind, offset)
        cached = server._cache.get(cache_key)
        if cached is not None:
            return cached
        all_items = items()
        size = server.options.page_size
        chunk = all_items[offset : offset + size]
        result: dict[str, Any] = {"resultType": "complete", key: chunk}
        if offset + size < len(all_items):
            result["nextCursor"] = encode_cursor(offset + size, gen)
        server.options.list_cache.apply(result)
        result["_meta"] = server.result_meta
        server._cache[cache_key] = result
        return result

    async def discover(params: dict[str, Any], ctx: Context) -> dict[str, Any]:
        cached = server._cache.get("discover")
        if cached is None:
            cached = {
                "resultType": "complete",
                "supportedVersions": list(SUPPORTED_VERSIONS),
                "capabilities": server.capabilities(),
            }
            if server.instructions:
                cached["instructions"] = server.instructions
            server.options.list_cache.apply(cached)
            cached["_meta"] = server.result_meta
            server._cache["discover"] = cached
        return cached

    async def tools_list(params: dict[str, Any], ctx: Context) -> dict[str, Any]:
        require("tools", Method.TOOLS_LIST)
        return page("tools", "tools", params, lambda: [t.definition for t in server.tools.values()])

    async def tools_call(params: dict[str, Any], ctx: Context) -> dict[str, Any]:
        require("tools", Method.TOOLS_CALL)
        tool = lookup(server.tools, params)
        injected = tool.signature.injected
        # Only a tool that takes the Context can ask, so only then is there a round to keep.
        rnd = begin_round(ctx, tool.name, params.get("arguments"), params) if injected else None
        try:
            kwargs = arguments_of(tool, params)
            if injected:
                _inject(injected, kwargs, ctx)
            value = await invoke(tool.fn, tool.is_async, kwargs)
        except (ToolError, HandleError) as exc:
            return error_result(str(exc) or f"tool {tool.name!r} failed")
        except InputRequired:
            assert rnd is not None
            return rnd.input_required()
        result = call_result(tool, value)
        meta = result.get("_meta")
        if meta is not None and SERVER_INFO_KEY not in meta:
            result["_meta"] = {**meta, **server.result_meta}
        return result

    async def resources_list(params: dict[str, Any], ctx: Context) -> dict[str, Any]:
        require_resources(Method.RESOURCES_LIST)
        return page("resources", "resources", params,
                    lambda: [r.definition for r in server.resources.values()])

    async def templates_list(params: dict[str, Any], ctx: Context) -> dict[str, Any]:
        require_resources(Method.RESOURCES_TEMPLATES_LIST)
        return page("templates", "resourceTemplates", params,
                    lambda: [t.definition for t in server.templates])

    def require_resources(method: str) -> None:
        if not server.resources and not server.templates:
            raise MethodNotFoundError(
                f"Method not found: {method} (this server offers no resources)", {"method": method}
            )

    async def resources_read(params: dict[str, Any], ctx: Context) -> dict[str, Any]:
        require_resources(Method.RESOURCES_READ)
        uri = params.get("uri")
        if type(uri) is not str:
            raise InvalidParamsError("resources/read: params.uri must be a string")
        kwargs: dict[str, Any]
        entry: Any = server.resources.get(uri)
        if entry is not None:
            kwargs = {}
        else:
            for template in server.templates:
                found = template.template.match(uri)
                if found is not None:
                    entry, kwargs = template, found
                    break
            else:
                raise ResourceNotFoundError(uri)
        if entry.signature.injected:
            _inject(entry.signature.injected, kwargs, ctx)
        rnd = begin_round(ctx, uri, None, params)
        try:
            value = await invoke(entry.fn, entry.is_async, kwargs)
        except InputRequired:
            return rnd.input_required()  # never cached (MRTR-20)
        if value is None:
            raise ResourceNotFoundError(uri)
        result = {"resultType": "complete", "contents": read_contents(uri, entry.mime_type, value)}
        cache: CacheHint = entry.cache or server.options.read_cache
        return cache.apply(result)

    async def prompts_list(params: dict[str, Any], ctx: Context) -> dict[str, Any]:
        require("prompts", Method.PROMPTS_LIST)
        return page("prompts", "prompts", params,
                    lambda: [p.definition for p in server.prompts.values()])

    async def prompts_get(params: dict[str, Any], ctx: Context) -> dict[str, Any]:
        require("prompts", Method.PROMPTS_GET)
        name = params.get("name")
        if type(name) is not str:
            raise InvalidParamsError("prompts/get: params.name must be the prompt's name")
        prompt = server.prompts.get(name)
        if prompt is None:
            raise InvalidParamsError(f"Unknown prompt: {name!r}", {"name": name})
        kwargs = check_arguments(prompt, params.get("arguments"))
        if prompt.signature.injected:
            _inject(prompt.signature.injected, kwargs, ctx)
        rnd = begin_round(ctx, name, params.get("arguments"), params)
        try:
            value = await invoke(prompt.fn, prompt.is_async, kwargs)
        except InputRequired:
            return rnd.input_required()
        result: dict[str, Any] = {"resultType": "complete", "messages": prompt_messages(value)}
        if prompt.definition.get("description"):
            result["description"] = prompt.definition["description"]
        return result

    async def complete(params: dict[str, Any], ctx: Context) -> dict[str, Any]:
        handler = server.completion
        if handler is None:
            raise MethodNotFoundError(
                "Method not found: completion/complete (this server offers no completions)",
                {"method": Method.COMPLETE},
            )
        ref, argument = params.get("ref"), params.get("argument")
        if type(ref) is not dict or ref.get("type") not in ("ref/prompt", "ref/resource"):
            raise InvalidParamsError(
                'completion/complete: params.ref must be {"type": "ref/prompt", "name": ...} '
                'or {"type": "ref/resource", "uri": ...}'
            )
        if ref["type"] == "ref/prompt" and ref.get("name") not in server.prompts:
            raise InvalidParamsError(f"completion/complete: unknown prompt {ref.get('name')!r}")
        if (
            type(argument) is not dict
            or type(argument.get("name")) is not str
            or type(argument.get("value")) is not str
        ):
            raise InvalidParamsError(
                'completion/complete: params.argument must be {"name": str, "value": str}'
            )
        context = params.get("context") or {}
        outcome = handler(ref, argument, context)
        if asyncio.iscoroutine(outcome):
            outcome = await outcome
        return {"resultType": "complete", "completion": completion_of(outcome)}

    async def listen(params: dict[str, Any], ctx: Context) -> dict[str, Any]:
        filt = ListenFilter.parse(params, server.capabilities())
        notify = ctx._notify
        if notify is None:
            raise InternalError("subscriptions/listen needs a transport that can stream")
        sub_id = ctx.request_id
        assert sub_id is not None
        async with server.broker.subscribe() as changes:
            await notify(
                {
                    "jsonrpc": "2.0",
                    "method": Method.SUBSCRIPTIONS_ACKNOWLEDGED,
                    "params": {
                        "_meta": {SUBSCRIPTION_ID_KEY: sub_id},
                        "notifications": filt.acknowledged(),
                    },
                }
            )
            async for change in changes:
                message = filt.message_for(change, sub_id)
                if message is not None:
                    await notify(message)
        return {"resultType": "complete", "_meta": {SUBSCRIPTION_ID_KEY: sub_id}}

    return {
        Method.DISCOVER: discover,
        Method.TOOLS_LIST: tools_list,
        Method.TOOLS_CALL: tools_call,
        Method.RESOURCES_LIST: resources_list,
        Method.RESOURCES_TEMPLATES_LIST: templates_list,
        Method.RESOURCES_READ: resources_read,
        Method.PROMPTS_LIST: prompts_list,
        Method.PROMPTS_GET: prompts_get,
        Method.COMPLETE: complete,
        Method.SUBSCRIPTIONS_LISTEN: listen,
    }


def completion_of(outcome: Any) -> dict[str, Any]:
    """`completion` of a CompleteResult: from a list of values or a dict with total/hasMore."""
    if outcome is None:
        return {"values": []}
    if isinstance(outcome, dict):
        values = list(outcome.get("values", []))
        extra = {k: outcome[k] for k in ("total", "hasMore") if k in outcome}
    else:
        values, extra = list(outcome), {}
    if not all(isinstance(v, str) for v in values):
        raise TypeError("completion values must be strings")
    if len(values) > 100:
        extra.setdefault("total", len(values))
        extra["hasMore"] = True
        values = values[:100]
    return {"values": values, **extra}
