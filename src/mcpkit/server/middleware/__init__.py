"""Middleware: the one public chain every request the core serves passes through.

    class Timing(Middleware):
        async def on_call_tool(self, context, call_next):
            start = time.perf_counter()
            try:
                return await call_next(context)
            finally:
                log.info("%s took %.1f ms", context.name, (time.perf_counter() - start) * 1e3)

    server.add_middleware(Timing())

A link sees the method, its params and the request's `Context` (principal, client info, era,
`_meta`) in a `MiddlewareContext`, and the result or the exception on the way back. It may
answer without calling on (short-circuit), pass on a changed context (`context.copy(params=
...)`: rewrite), change what comes back, time it or map what it raises. Each `Middleware` has a
hook for every request (`on_request`) and narrower ones (`on_call_tool`, `on_read_resource`,
`on_get_prompt`, `on_list_tools`, `on_list_resources`, `on_list_resource_templates`,
`on_list_prompts`), the names FastMCP's users know; the first link added is the outermost, and
within one link the wider hook wraps the narrower. A function is a link too
(`@server.middleware()`, or `@server.middleware("tools/call", ...)` for some methods only).

Where the chain sits, in the order a request meets them:

1. the transport's own checks (framing, HTTP headers and Host, the OAuth token and the
   `scopes=` of the tool, resource or prompt named: an HTTP request refused there never
   reaches the chain), then, for a 2025-11-25 session, the adapter, which answers `ping`,
   `logging/setLevel`, `resources/(un)subscribe` itself and turns the rest into modern requests;
2. the envelope (`_meta`: version, capabilities, client info; -32602/-32022) and the route
   (an unknown method is -32601): the chain sees only requests whose `Context` is built;
3. **the chain**, outermost link first;
4. the method: whether the server offers its kind at all (-32601), the params (an unknown
   tool, prompt or URI; arguments checked against the input schema, so a link that rewrites
   arguments has them checked), then the handler with its dependencies.

So a link sees the params as sent and before they are checked, and what the handler raised:
the exceptions a tool, resource or prompt raises pass up through every link, and what none
turns into an answer is answered at the top as it is without middleware (a tool's `isError`
with an error id; -32603 naming the resource or prompt). A `ToolError` raised by a link in
`tools/call` is the tool's `isError` too. The chain runs alike in both eras (each round of a
2025-11-25 request's input is one pass, as each modern retry is) and on every transport, and
for the requests a handler makes of its own server (`ctx.call_tool`, `context.depth` > 0).

Without a link, a request takes the path it took before the chain existed: one attribute
read more (`Server.chain` is None).

Imports the server's own modules; the `Server` only for its type.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Collection, Mapping
from typing import TYPE_CHECKING, Any, Final

from mcpkit.errors import HandleError, RPCError
from mcpkit.server.context import Context, raise_failures
from mcpkit.server.prompts import prompt_failure
from mcpkit.server.resources import read_failure
from mcpkit.server.tool_results import tool_failure
from mcpkit.types.era import Era
from mcpkit.types.methods import Method

if TYPE_CHECKING:
    from mcpkit.server.tools import Tool

__all__ = [
    "HOOKS",
    "CallNext",
    "Chain",
    "ErrorHandlingMiddleware",
    "FunctionMiddleware",
    "LoggingMiddleware",
    "Middleware",
    "MiddlewareContext",
    "RateLimitingMiddleware",
    "ResponseCachingMiddleware",
    "TimingMiddleware",
    "by_client",
    "by_principal",
]

_BUILT_IN = {
    "RateLimitingMiddleware": "rate_limit",
    "by_principal": "rate_limit",
    "by_client": "rate_limit",
    "ResponseCachingMiddleware": "caching",
    "TimingMiddleware": "timing",
    "ErrorHandlingMiddleware": "error_handling",
    "LoggingMiddleware": "request_log",
}
"""The links mcpkit ships, each in a module of its own, loaded when first named (a server
without them never imports the store, orjson or logging setup they need)."""


def __getattr__(name: str) -> Any:
    module = _BUILT_IN.get(name)
    if module is None:
        raise AttributeError(f"module 'mcpkit.server.middleware' has no attribute {name!r}")
    from importlib import import_module

    value = getattr(import_module(f"mcpkit.server.middleware.{module}"), name)
    globals()[name] = value
    return value


class MiddlewareContext:
    """One request as a link sees it: its method, its params and its `Context`."""

    __slots__ = ("ctx", "method", "params")

    def __init__(self, method: str, params: dict[str, Any], ctx: Context) -> None:
        self.method = method
        self.params = params
        """The request's params as sent (`_meta` included), before the method checks them."""
        self.ctx = ctx
        """The request's `Context`: what its handler gets."""

    def copy(self, *, params: Mapping[str, Any] | None = None,
             ctx: Context | None = None) -> MiddlewareContext:
        """This request with other params (or another `Context`), to pass on: the links
        after this one and the method see the copy."""
        return MiddlewareContext(self.method, self.params if params is None else dict(params),
                                 self.ctx if ctx is None else ctx)

    @property
    def server(self) -> Any:
        return self.ctx.server

    @property
    def principal(self) -> Any:
        """Who the transport authenticated (the OAuth principal), or None."""
        return self.ctx.principal

    @property
    def client_info(self) -> dict[str, Any] | None:
        """Self-reported by the client: for display and logs, never for decisions."""
        return self.ctx.client_info

    @property
    def era(self) -> Era:
        return self.ctx.era

    @property
    def depth(self) -> int:
        """0 for a client's request; more for one a handler made of its own server."""
        return self.ctx.depth

    @property
    def name(self) -> str | None:
        """The tool or prompt named (`params.name`), when it is a string."""
        name = self.params.get("name")
        return name if type(name) is str else None

    @property
    def uri(self) -> str | None:
        """The resource URI named (`params.uri`), when it is a string."""
        uri = self.params.get("uri")
        return uri if type(uri) is str else None

    @property
    def arguments(self) -> Any:
        """`params.arguments` as sent (not checked yet)."""
        return self.params.get("arguments")

    @property
    def tool(self) -> Tool | None:
        """The registered tool a `tools/call` names, or None (an unknown name)."""
        name = self.name
        return None if name is None else self.ctx.server.tools.get(name)

    def __repr__(self) -> str:
        return f"MiddlewareContext({self.method!r}, depth={self.depth})"


CallNext = Callable[[MiddlewareContext], Awaitable[dict[str, Any]]]
"""The rest of the chain, then the method: await it with the context to pass on."""

HOOKS: Final[Mapping[str, str]] = {
    Method.TOOLS_CALL: "on_call_tool",
    Method.RESOURCES_READ: "on_read_resource",
    Method.PROMPTS_GET: "on_get_prompt",
    Method.TOOLS_LIST: "on_list_tools",
    Method.RESOURCES_LIST: "on_list_resources",
    Method.RESOURCES_TEMPLATES_LIST: "on_list_resource_templates",
    Method.PROMPTS_LIST: "on_list_prompts",
}
"""Method -> the narrower hook of a link that runs for it, inside `on_request`."""


class Middleware:
    """A link of the chain; override the hooks it needs (each passes on by default).

    `methods`: the methods its `on_request` runs for (None: every one); a narrower hook runs
    for its own method whatever this says."""

    methods: Collection[str] | None = None

    async def on_request(self, context: MiddlewareContext, call_next: CallNext
                         ) -> dict[str, Any]:
        return await call_next(context)

    async def on_call_tool(self, context: MiddlewareContext, call_next: CallNext
                           ) -> dict[str, Any]:
        return await call_next(context)

    async def on_read_resource(self, context: MiddlewareContext, call_next: CallNext
                               ) -> dict[str, Any]:
        return await call_next(context)

    async def on_get_prompt(self, context: MiddlewareContext, call_next: CallNext
                            ) -> dict[str, Any]:
        return await call_next(context)

    async def on_list_tools(self, context: MiddlewareContext, call_next: CallNext
                            ) -> dict[str, Any]:
        return await call_next(context)

    async def on_list_resources(self, context: MiddlewareContext, call_next: CallNext
                                ) -> dict[str, Any]:
        return await call_next(context)

    async def on_list_resource_templates(self, context: MiddlewareContext, call_next: CallNext
                                         ) -> dict[str, Any]:
        return await call_next(context)

    async def on_list_prompts(self, context: MiddlewareContext, call_next: CallNext
                              ) -> dict[str, Any]:
        return await call_next(context)


MiddlewareFunction = Callable[[MiddlewareContext, CallNext], Awaitable[dict[str, Any]]]


class FunctionMiddleware(Middleware):
    """A function `(context, call_next) -> result` as a link (`@server.middleware()`)."""

    def __init__(self, fn: MiddlewareFunction, methods: Collection[str] | None = None) -> None:
        if not callable(fn):
            raise TypeError(f"a middleware function takes (context, call_next), not {fn!r}")
        self.fn = fn
        self.methods = None if methods is None else frozenset(methods)

    async def on_request(self, context: MiddlewareContext, call_next: CallNext
                         ) -> dict[str, Any]:
        return await self.fn(context, call_next)

    def __repr__(self) -> str:
        return f"FunctionMiddleware({getattr(self.fn, '__qualname__', self.fn)!r})"


def _overrides(link: Middleware, hook: str) -> bool:
    return getattr(type(link), hook, None) is not getattr(Middleware, hook)


Hook = Callable[[MiddlewareContext, CallNext], Awaitable[dict[str, Any]]]
Handler = Callable[[dict[str, Any], Context], Awaitable[dict[str, Any]]]


class Chain:
    """A server's links, composed per method on its first request (and again when a route
    or the links change), with the guard of its method outside them."""

    __slots__ = ("_composed", "links")

    def __init__(self, links: list[Middleware]) -> None:
        self.links = tuple(links)
        self._composed: dict[str, tuple[Handler, CallNext]] = {}

    def hooks(self, method: str) -> list[Hook]:
        """The hooks a request of `method` meets, outermost first."""
        narrow = HOOKS.get(method)
        found: list[Hook] = []
        for link in self.links:
            if _overrides(link, "on_request") and (link.methods is None or method in link.methods):
                found.append(link.on_request)
            if narrow is not None and _overrides(link, narrow):
                found.append(getattr(link, narrow))
        return found

    def _compose(self, method: str, handler: Handler) -> CallNext:
        def core(context: MiddlewareContext) -> Awaitable[dict[str, Any]]:
            return handler(context.params, context.ctx)

        step: CallNext = core
        for hook in reversed(self.hooks(method)):
            step = _link(hook, step)
        return step

    async def run(self, method: str, params: dict[str, Any], ctx: Context, handler: Handler
                  ) -> dict[str, Any]:
        """The request through the links, then `handler`; the method's guard answers what
        they let through as the core would."""
        held = self._composed.get(method)
        if held is None or held[0] is not handler:
            held = self._composed[method] = (handler, self._compose(method, handler))
        guard = GUARDS.get(method)
        context = MiddlewareContext(method, params, ctx)
        raise_failures(ctx, True)
        try:
            if guard is None:
                return await held[1](context)
            return await guard(held[1], context)
        finally:
            raise_failures(ctx, False)


def _link(hook: Hook, after: CallNext) -> CallNext:
    def step(context: MiddlewareContext) -> Awaitable[dict[str, Any]]:
        return hook(context, after)
    return step


# -- the guards: what the core answers for what passes every link -----------------------------


async def _guard_tool(chain: CallNext, context: MiddlewareContext) -> dict[str, Any]:
    name = str(context.name)
    try:
        return await chain(context)
    except RPCError as exc:
        if isinstance(exc, HandleError):
            return tool_failure(name, exc, context.ctx)
        raise
    except Exception as exc:
        return tool_failure(name, exc, context.ctx)


async def _guard_read(chain: CallNext, context: MiddlewareContext) -> dict[str, Any]:
    uri = str(context.uri)
    try:
        return await chain(context)
    except RPCError:
        raise
    except Exception as exc:
        raise read_failure(uri, exc, context.ctx) from None


async def _guard_prompt(chain: CallNext, context: MiddlewareContext) -> dict[str, Any]:
    name = str(context.name)
    try:
        return await chain(context)
    except RPCError:
        raise
    except Exception as exc:
        raise prompt_failure(name, exc, context.ctx) from None


GUARDS: Final[Mapping[str, Callable[[CallNext, MiddlewareContext], Awaitable[dict[str, Any]]]]] = {
    Method.TOOLS_CALL: _guard_tool,
    Method.RESOURCES_READ: _guard_read,
    Method.PROMPTS_GET: _guard_prompt,
}
"""Method -> how the exceptions of its handler that no link answered are answered."""
