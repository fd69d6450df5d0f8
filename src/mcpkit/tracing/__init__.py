"""OpenTelemetry spans on both sides of every request (`pip install 'mcpkit[otel]'`).

With `opentelemetry-api` installed and a tracer provider set (the global one, or the one given
to `use_tracer_provider`), a server makes one SERVER span per request it serves and a client one
CLIENT span per request it sends, named and described as the OpenTelemetry semantic
conventions for MCP say (`conventions.py` holds every attribute name). The client's span
travels in the request's `_meta` (`traceparent`, `tracestate`, `baggage`: META-10) and becomes
the parent of the server's, which is current while the handler runs, so a call the handler
makes to another server continues the same trace. Without a provider nothing is made, and
nothing of OpenTelemetry is imported (`spans.py` says what the check costs).

This layer sits beside `schema/` and `store/`: `server/`, `client/` and `legacy/` call into it,
and it imports only `types`, `errors`, `protocol` and `_version`. It is not part of the I/O-free
core: it reads OpenTelemetry's global state and its spans read the clock.
"""

from __future__ import annotations

from mcpkit.tracing.conventions import Attr
from mcpkit.tracing.spans import use_tracer_provider

__all__ = [
    "Attr",
    "use_tracer_provider",
]
