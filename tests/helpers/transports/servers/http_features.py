"""A server exercising what the HTTP transport must carry: progress and log streams, mirrored
argument headers, cancellation a test can observe, listen triggers, and each error kind.

    mcpkit run tests/helpers/transports/servers/http_features.py --http 127.0.0.1:0
"""

from __future__ import annotations

import asyncio
from typing import Annotated, Any

from mcpkit import Context, Param, Server, ToolError
from mcpkit.errors import InternalError, MissingRequiredClientCapabilityError
from mcpkit.server.middleware import RateLimitingMiddleware

server = Server("http-features", "1.0.0")

_events: dict[str, int] = {"started": 0, "cancelled": 0, "finished": 0}
_changed = asyncio.Condition()
_gate: dict[str, asyncio.Event] = {}


async def _bump(name: str) -> None:
    async with _changed:
        _events[name] += 1
        _changed.notify_all()


async def _await(name: str, above: int) -> int:
    async with _changed:
        await asyncio.wait_for(_changed.wait_for(lambda: _events[name] > above), 10)
        return _events[name]


@server.tool()
async def echo(text: str) -> str:
    """Return the text unchanged."""
    return text


@server.tool()
async def count(steps: int, ctx: Context) -> str:
    """Report progress `steps` times and log each step, then finish."""
    for i in range(steps):
        await ctx.report_progress(i + 1, steps, f"step {i + 1}")
        await ctx.info(f"step {i + 1}")
    return f"counted {steps}"


@server.tool()
async def hang(ctx: Context, stream: bool = True) -> str:
    """Run until cancelled (after one progress report when `stream`); counts cancellations."""
    await _bump("started")
    if stream:
        await ctx.report_progress(1, None, "started")
    try:
        await asyncio.Event().wait()
    except asyncio.CancelledError:
        await _bump("cancelled")
        raise
    return "never"


@server.tool()
async def gate(ctx: Context) -> str:
    """Report progress, wait until `open_gate` is called, then finish (counts "finished")."""
    opened = _gate.setdefault("gate", asyncio.Event())
    await ctx.report_progress(1, None, "waiting at the gate")
    await opened.wait()
    await _bump("finished")
    return "through"


@server.tool()
async def open_gate() -> str:
    """Let the calls waiting in `gate` through."""
    _gate.pop("gate", asyncio.Event()).set()
    return "open"


@server.tool()
async def observed(kind: str, above: int) -> int:
    """Wait (10 s at most) until more than `above` `kind` events ("started", "cancelled",
    "finished") happened, and return how many."""
    return await _await(kind, above)


@server.tool()
async def route(
    region: Annotated[str, Param(description="where to run", header="Region")],
    priority: Annotated[int | None, Param(header="Priority")] = None,
    verbose: Annotated[bool | None, Param(header="Verbose")] = None,
    query: str = "",
) -> dict[str, Any]:
    """Echo the routed arguments (region, priority and verbose are mirrored into headers)."""
    return {"region": region, "priority": priority, "verbose": verbose, "query": query}


@server.tool(input_schema={
    "type": "object",
    "properties": {
        "target": {
            "type": "object",
            "properties": {"zone": {"type": "string", "x-mcp-header": "Zone"}},
        },
    },
})
async def nested(target: dict[str, Any] | None = None) -> str:
    """A header declared on a nested property."""
    return str((target or {}).get("zone"))


@server.tool()
async def touch(kind: str, uri: str = "") -> str:
    """Announce a change: "tools", "prompts", "resources" or "resource" (with `uri`)."""
    if kind == "tools":
        server.notify_tools_changed()
    elif kind == "prompts":
        server.notify_prompts_changed()
    elif kind == "resources":
        server.notify_resources_changed()
    elif kind == "resource":
        server.notify_resource_updated(uri)
    else:
        raise ToolError(f"unknown kind {kind!r}")
    return "ok"


@server.tool()
async def boom() -> str:
    """Fail unexpectedly (an internal error)."""
    raise RuntimeError("the tool broke")


@server.tool()
async def fail_late(ctx: Context) -> str:
    """Report progress, then fail with a JSON-RPC error (a tool's unexpected exception is
    `isError`, so this one is raised as the error it is meant to be)."""
    await ctx.report_progress(1, 2)
    raise InternalError("the tool broke halfway")


@server.tool()
async def needs_sampling(ctx: Context) -> str:
    """Succeed only for clients that declare sampling."""
    if "sampling" not in ctx.client_capabilities:
        raise MissingRequiredClientCapabilityError({"sampling": {}})
    return "sampling declared"


@server.tool()
async def confirm(action: str, ctx: Context) -> str:
    """Ask the user to confirm `action` (a server-to-client request for legacy clients)."""
    answer = await ctx.elicit("confirm", f"Really {action}?", {"sure": bool})
    if not answer.accepted:
        return f"{action}: {answer.action}"
    return f"{action}: {'yes' if answer['sure'] else 'no'}"


@server.resource("memo://notes/today", mime_type="text/plain")
def today() -> str:
    """Today's notes."""
    return "nothing yet"


@server.prompt()
def greet(name: str) -> str:
    """Greet someone."""
    return f"Hello, {name}!"


@server.tool()
def limited() -> str:
    """Behind a rate limit of one call an hour: every call after the first is refused."""
    return "once"


server.add_middleware(RateLimitingMiddleware(
    limit=1, per=3600.0, key=lambda context: "limited" if context.name == "limited" else None))
