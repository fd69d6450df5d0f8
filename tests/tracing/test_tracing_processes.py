"""What tracing does in a process of its own: nothing at all without a tracer provider (no
spans, no trace context sent, nothing of the SDK imported), spans once an application sets
OpenTelemetry's global provider, and a client span that a stdio server in another process
continues across a real pipe. Messages the subprocesses' clients send are checked against the
official schema here; the stdio connection is tapped by `SchemaTap`."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from helpers.client.schema_tap import SchemaTap
from helpers.wire import LEGACY, MODERN, check_client_message, check_server_message
from opentelemetry.trace import SpanKind
from span_capture import Spans

from mcpkit.client import Client, ClientOptions
from mcpkit.transports.stdio.client import StdioServer

ROOT = Path(__file__).resolve().parents[2]
TRACED_SERVER = str(Path(__file__).with_name("traced_server.py"))

_SCRIPT = """
import asyncio, json, sys
{setup}
import mcpkit.tracing.spans as spans
from mcpkit import Server
from mcpkit.testing import WireRecorder, connect

server = Server("plain", "1.0.0")

@server.tool()
async def echo(text: str) -> str:
    return text

async def main():
    recorder = WireRecorder()
    async with connect(server, recorder=recorder) as client:
        await client.call_tool("echo", {{"text": "hi"}})
    print(json.dumps({{
        "messages": recorder.messages,
        "loaded": sorted(m for m in sys.modules if m.startswith("opentelemetry")),
        "tracer": spans._tracer is not None,
        "spans": {spans},
    }}))

asyncio.run(main())
"""

_GLOBAL_PROVIDER = """
from opentelemetry import trace
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
exporter = InMemorySpanExporter()
provider = TracerProvider()
provider.add_span_processor(SimpleSpanProcessor(exporter))
trace.set_tracer_provider(provider)
"""

_SPANS = ("[{'name': s.name, 'kind': s.kind.name, 'span': s.context.span_id, "
          "'parent': s.parent.span_id if s.parent else None} "
          "for s in exporter.get_finished_spans()]")


def run(setup: str, spans: str = "[]") -> dict[str, Any]:
    done = subprocess.run([sys.executable, "-c", _SCRIPT.format(setup=setup, spans=spans)],
                          capture_output=True, text=True, timeout=60, cwd=ROOT)
    assert done.returncode == 0, done.stderr
    out: dict[str, Any] = json.loads(done.stdout)
    methods: dict[Any, str] = {}
    for direction, message in out["messages"]:
        if direction == "send":
            check_client_message(MODERN, message)
            if "id" in message and "method" in message:
                methods[message["id"]] = message["method"]
        else:
            check_server_message(MODERN, message, methods.get(message.get("id")))
    return out


def sent_meta(out: dict[str, Any], method: str | None = None) -> list[dict[str, Any]]:
    """The `_meta` of each request the subprocess's client sent (of `method`, when given)."""
    return [m["params"]["_meta"] for d, m in out["messages"]
            if d == "send" and "id" in m and method in (None, m["method"])]


@pytest.mark.parametrize("setup", [
    "",  # OpenTelemetry never imported: the check is a dictionary lookup
    "import opentelemetry.trace",  # the API imported, the provider still OpenTelemetry's proxy
], ids=["without-opentelemetry", "api-without-provider"])
def test_without_a_provider_nothing_is_traced_or_sent_or_imported(setup: str) -> None:
    out = run(setup)
    assert all(not set(meta) & {"traceparent", "tracestate", "baggage"}
               for meta in sent_meta(out)), sent_meta(out)
    assert out["tracer"] is False
    expected = [] if not setup else ["opentelemetry.trace"]
    assert [m for m in out["loaded"] if m in ("opentelemetry.trace", "opentelemetry.sdk",
                                              "opentelemetry.propagate")] == expected


def test_the_global_provider_an_application_sets_is_used() -> None:
    out = run(_GLOBAL_PROVIDER, _SPANS)
    # The era probe (server/discover) is sent while the connection opens, before any client
    # span: the server's span of it starts a trace of its own.
    probe = [s for s in out["spans"] if s["name"] == "server/discover"]
    assert [(s["kind"], s["parent"]) for s in probe] == [("SERVER", None)]
    by_kind = {s["kind"]: s for s in out["spans"] if s["name"] == "tools/call echo"}
    assert sorted(by_kind) == ["CLIENT", "SERVER"]
    assert by_kind["SERVER"]["parent"] == by_kind["CLIENT"]["span"]
    client_span = f"{by_kind['CLIENT']['span']:016x}"
    assert [meta["traceparent"].split("-")[2] for meta in sent_meta(out, "tools/call")] == [
        client_span]


@pytest.mark.parametrize("era", ["modern", "legacy"])
async def test_a_stdio_server_process_continues_the_client_span(spans: Spans, era: str) -> None:
    tap = SchemaTap()
    connector = StdioServer([sys.executable, "-m", "mcpkit", "run", TRACED_SERVER],
                            cwd=str(ROOT), stderr="capture", tap=tap)
    async with Client(connector, options=ClientOptions(era=era)) as client:
        result = await client.call_tool("where", {})
    tap.assert_clean()
    seen = json.loads(result["content"][0]["text"])
    client_span = spans.one("tools/call where", SpanKind.CLIENT)
    context = client_span.get_span_context()
    assert seen["name"] == "tools/call where" and seen["kind"] == "SERVER"
    assert seen["trace_id"] == f"{context.trace_id:032x}"
    assert seen["parent"] == f"{context.span_id:016x}"
    assert seen["received"]["traceparent"] == (
        f"00-{context.trace_id:032x}-{context.span_id:016x}-{context.trace_flags:02x}")
    version = MODERN if era == "modern" else LEGACY
    assert seen["attributes"]["mcp.protocol.version"] == version
    assert client_span.attributes["mcp.protocol.version"] == version
    assert client_span.attributes["network.transport"] == "pipe"
    assert "server.address" not in client_span.attributes
