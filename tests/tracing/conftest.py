"""Fixtures of the tracing tests: an SDK tracer provider exporting to memory, per test.

OpenTelemetry's global provider can be set once per process, and every later test would then
trace; so this process never sets it. Each test that wants spans gets a fresh provider handed
to mcpkit alone (`mcpkit.tracing.use_tracer_provider`), which the fixture takes back after the
test. The global path, `trace.set_tracer_provider`, is exercised in subprocesses
(test_tracing_processes.py).
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from opentelemetry import trace
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from span_capture import Spans

from mcpkit.tracing import use_tracer_provider


@pytest.fixture
def spans() -> Iterator[Spans]:
    exporter = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    use_tracer_provider(provider)
    try:
        yield Spans(provider, exporter)
    finally:
        use_tracer_provider(None)
        provider.shutdown()
    # This process must never have a global provider: every other test would trace.
    assert isinstance(trace.get_tracer_provider(), trace.ProxyTracerProvider)
