"""A stdio server with OpenTelemetry's global tracer provider set, as an application would set
it: its one tool reports the span it runs in, so a test can see, across a real pipe, which
span the client's `_meta` made its parent."""

from __future__ import annotations

import json

from opentelemetry import trace
from opentelemetry.sdk.trace import TracerProvider

from mcpkit import Context, Server

trace.set_tracer_provider(TracerProvider())

server = Server("traced", "1.0.0")


@server.tool()
async def where(ctx: Context) -> str:
    """The span this call runs in, and the trace context its request carried."""
    span = trace.get_current_span()
    context = span.get_span_context()
    parent = getattr(span, "parent", None)
    return json.dumps({
        "name": getattr(span, "name", None),
        "kind": getattr(getattr(span, "kind", None), "name", None),
        "trace_id": f"{context.trace_id:032x}",
        "parent": f"{parent.span_id:016x}" if parent is not None else None,
        "attributes": dict(getattr(span, "attributes", None) or {}),
        "received": ctx.trace,
    })
