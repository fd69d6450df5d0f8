"""A server with every part of the framework layer, for the process tests: a lifespan that
writes `enter PID` and `exit PID` to the file $FRAMEWORK_EVENTS, a dependency reading it, a
middleware link tagging each tool result, a rate limit on `limited` ($FRAMEWORK_LIMIT calls
an hour per caller, counted in the server's store), and a mounted server."""

from __future__ import annotations

import os
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Annotated, Any

from mcpkit import Context, Server
from mcpkit.server.dependencies import Depends
from mcpkit.server.middleware import CallNext, MiddlewareContext, RateLimitingMiddleware

EVENTS = os.environ.get("FRAMEWORK_EVENTS")


def note(line: str) -> None:
    if EVENTS:
        with open(EVENTS, "a", encoding="utf-8") as out:
            out.write(f"{line}\n")


@asynccontextmanager
async def lifespan(server: Server) -> AsyncIterator[dict[str, Any]]:
    note(f"enter {os.getpid()}")
    try:
        yield {"pid": os.getpid()}
    finally:
        note(f"exit {os.getpid()}")


server = Server("framework", lifespan=lifespan)


def pid_of(ctx: Context) -> int:
    return int(ctx.lifespan_context["pid"])


@server.tool()
def whoami(pid: Annotated[int, Depends(pid_of)], ctx: Context) -> str:
    """Which process answered, and in which era."""
    return f"{pid} {ctx.era}"


@server.tool()
def limited() -> str:
    """A tool behind a rate limit."""
    return "ok"


@server.middleware("tools/call")
async def tag(context: MiddlewareContext, call_next: CallNext) -> dict[str, Any]:
    result = await call_next(context)
    for block in result.get("content", []):
        if block.get("type") == "text":
            block["text"] = f"{block['text']} [tagged]"
    return result


server.add_middleware(RateLimitingMiddleware(
    limit=int(os.environ.get("FRAMEWORK_LIMIT", "3")), per=3600.0, methods=["tools/call"],
    key=lambda context: f"{context.name}" if context.name == "limited" else None))

billing = Server("billing")


@billing.tool()
def pay(amount: int) -> str:
    """Pay an amount."""
    return f"paid {amount}"


server.mount(billing, namespace="billing")
