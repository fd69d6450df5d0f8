"""What one tracing test's spans are: the finished spans of its in-memory exporter."""

from __future__ import annotations

from typing import Any

from opentelemetry.sdk.trace import ReadableSpan, TracerProvider
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from opentelemetry.trace import SpanKind


class Spans:
    """The spans one test made, and a tracer of the same provider for the test's own spans."""

    def __init__(self, provider: TracerProvider, exporter: InMemorySpanExporter) -> None:
        self.provider = provider
        self.exporter = exporter
        self.tracer = provider.get_tracer("tests")

    def finished(self) -> list[ReadableSpan]:
        return list(self.exporter.get_finished_spans())

    def named(self, name: str) -> list[ReadableSpan]:
        return [s for s in self.finished() if s.name == name]

    def one(self, name: str, kind: SpanKind) -> Any:
        """The one finished span of this name and kind (failing, with every span's name and
        kind, when there is none or more than one)."""
        found = [s for s in self.named(name) if s.kind == kind]
        assert len(found) == 1, (name, kind, [(s.name, s.kind) for s in self.finished()])
        return found[0]
