#!/usr/bin/env python3
"""Where one Streamable HTTP `tools/call` goes inside mcpkit's ASGI app, piece by piece.

    python bench/breakdown.py [--rounds 5] [--n 100000] [--otel]

No sockets and no ASGI server: the app is called in a loop with the bench's request already
read, so each figure is mcpkit's own work with warm caches (best of the rounds, µs per call).
The pieces are the same calls the app makes, timed one at a time; beside them the bare ASGI
floor (`bench/servers/floor_asgi.py`) under the same driver. Under wrk the server also pays
uvicorn's parsing and the two write system calls, which the floor pays too. It runs on uvloop
when it is installed, as `mcpkit run --http` does.

`--otel` sets OpenTelemetry's global tracer provider first (the SDK's, its spans handed to an
exporter that drops them), so every figure includes the SERVER span of each request; without
it no provider is set and mcpkit's tracing costs one check per request.
"""

from __future__ import annotations

import argparse
import asyncio
import importlib.util
import logging
import sys
import time
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

BENCH = Path(__file__).resolve().parent
sys.path.insert(0, str(BENCH / "servers"))

import orjson  # noqa: E402

from mcpkit.protocol.codec import decode, encode  # noqa: E402
from mcpkit.protocol.http import accepts, check_request_headers, read_headers  # noqa: E402
from mcpkit.transports.http_server.app import HTTPApp  # noqa: E402
from mcpkit.transports.http_server.exchange import Exchange, Watchlist  # noqa: E402
from mcpkit.transports.http_server.modern import ModernEndpoint  # noqa: E402

META = {
    "io.modelcontextprotocol/protocolVersion": "2026-07-28",
    "io.modelcontextprotocol/clientCapabilities": {},
    "io.modelcontextprotocol/clientInfo": {"name": "breakdown", "version": "1.0.0"},
}
BODY = orjson.dumps({"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {
    "name": "echo", "arguments": {"text": "hello world"}, "_meta": META}})
HEADERS = [
    (b"host", b"127.0.0.1:8000"),
    (b"content-type", b"application/json"),
    (b"accept", b"application/json, text/event-stream"),
    (b"mcp-protocol-version", b"2026-07-28"),
    (b"mcp-method", b"tools/call"),
    (b"mcp-name", b"echo"),
    (b"content-length", b"%d" % len(BODY)),
]
SCOPE = {"type": "http", "method": "POST", "path": "/mcp", "headers": HEADERS,
         "query_string": b"", "http_version": "1.1", "scheme": "http",
         "server": ("127.0.0.1", 8000), "client": ("127.0.0.1", 50000)}
MESSAGE = {"type": "http.request", "body": BODY, "more_body": False}


async def receive() -> dict[str, Any]:
    return MESSAGE


async def send(message: dict[str, Any]) -> None:
    return None


def load_server(name: str) -> Any:
    spec = importlib.util.spec_from_file_location(name, BENCH / "servers" / f"{name}.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module.server


async def best_of(fn: Callable[[], Awaitable[Any]], rounds: int, n: int) -> float:
    for _ in range(2000):
        await fn()
    best = float("inf")
    for _ in range(rounds):
        start = time.perf_counter()
        for _ in range(n):
            await fn()
        best = min(best, (time.perf_counter() - start) / n * 1e6)
    return best


def trace_everything() -> list[int]:
    """The global SDK provider, each span ended and exported (to nowhere) as it finishes;
    returns the count of spans exported, so the report shows the provider was really used."""
    from opentelemetry import trace
    from opentelemetry.sdk.trace import TracerProvider
    from opentelemetry.sdk.trace.export import SimpleSpanProcessor, SpanExporter, SpanExportResult

    exported = [0]

    class Dropped(SpanExporter):
        def export(self, spans: Any) -> SpanExportResult:
            exported[0] += len(spans)
            return SpanExportResult.SUCCESS

    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(Dropped()))
    trace.set_tracer_provider(provider)
    return exported


async def main(rounds: int, n: int, otel: bool = False) -> None:
    import floor_asgi

    exported = trace_everything() if otel else None

    logging.getLogger("mcpkit").setLevel(logging.ERROR)  # no state keys: fine here
    floor = floor_asgi.create_app()
    apps = {name: HTTPApp(load_server(name), path="/mcp", allowed_hosts=("127.0.0.1:8000",))
            for name in ("mcpkit_echo_async", "mcpkit_echo")}
    app = apps["mcpkit_echo_async"]
    server = app.server
    request = decode(BODY)
    headers = read_headers(HEADERS)
    response = await server.handle(request)
    watchlist = Watchlist()
    modern = ModernEndpoint(server, 15.0, True)  # what the app serves a modern POST with

    async def exchange() -> None:
        await Exchange(send, receive, 15.0).run(server.handle(request), watchlist)

    async def reply() -> None:
        body = encode(response)
        await send({"type": "http.response.start", "status": 200, "headers": [
            (b"content-type", b"application/json"), (b"content-length", b"%d" % len(body))]})
        await send({"type": "http.response.body", "body": body})

    async def sync(fn: Callable[[], Any]) -> None:
        fn()

    rows: list[tuple[str, Callable[[], Awaitable[Any]]]] = [
        ("bare ASGI floor: the whole request", lambda: floor(SCOPE, receive, send)),
        ("mcpkit, async def echo: the whole request",
         lambda: app(SCOPE, receive, send)),
        ("mcpkit, plain def echo: the whole request (one call at a time: a full thread "
         "round trip, which load amortises)",
         lambda: apps["mcpkit_echo"](SCOPE, receive, send)),
        ("  decode the body (orjson + JSON-RPC shape)", lambda: sync(lambda: decode(BODY))),
        ("  read the headers", lambda: sync(lambda: read_headers(HEADERS))),
        ("  Host/Origin policy, Accept", lambda: sync(lambda: (
            app._policy.check(headers.host, headers.origin), accepts(headers.accept)))),
        ("  mirrored headers against the body", lambda: sync(lambda: check_request_headers(
            headers, request, modern._tool_params(request)))),
        ("  serve: _meta, lookup, argument check, call, result", lambda: server.handle(request)),
        ("  the same inside an Exchange (cancellation on disconnect)", exchange),
        ("  encode and the two ASGI sends", reply),
    ]
    print(f"µs per call, best of {rounds} rounds of {n:,} ({sys.version.split()[0]}, "
          f"{type(asyncio.get_running_loop()).__module__.split('.')[0]}"
          f"{', OpenTelemetry SDK provider set' if otel else ''})")
    print()
    print("| piece | µs |")
    print("|---|---:|")
    for label, fn in rows:
        print(f"| {label} | {await best_of(fn, rounds, n):.2f} |")
    if exported is not None:
        print()
        print(f"spans exported: {exported[0]:,}")


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--n", type=int, default=100_000)
    parser.add_argument("--otel", action="store_true",
                        help="set an OpenTelemetry SDK tracer provider (spans dropped)")
    args = parser.parse_args()
    try:
        import uvloop
    except ImportError:
        asyncio.run(main(args.rounds, args.n, args.otel))
    else:
        uvloop.run(main(args.rounds, args.n, args.otel))
