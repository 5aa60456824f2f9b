"""What a test's in-process gateway traces, through `chatgate.tracing` over an in-memory
exporter: a test that already runs a gateway for a channel sees its messages' traces without a
second daemon or an OTLP receiver (`tests/telemetry` covers the export path)."""

from __future__ import annotations

from opentelemetry.sdk.trace import ReadableSpan, TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from opentelemetry.trace import SpanKind, StatusCode

from chatgate import tracing

RETRY = "chatgate.send_retry"  # the event a delivery retry adds to the sending step's span


class Spans:
    """Installs tracing (every span recorded) until `close`; reads the finished spans."""

    def __init__(self) -> None:
        self.exporter = InMemorySpanExporter()
        provider = TracerProvider()
        provider.add_span_processor(SimpleSpanProcessor(self.exporter))
        tracing.install(provider.get_tracer("chatgate"))

    def close(self) -> None:
        tracing.uninstall()

    def named(self, name: str) -> list[ReadableSpan]:
        return [s for s in self.exporter.get_finished_spans() if s.name == name]

    def trace_of(self, span: ReadableSpan) -> list[ReadableSpan]:
        trace = trace_id(span)
        return [s for s in self.exporter.get_finished_spans() if trace_id(s) == trace]

    def deliveries(self, name: str, *, kind: SpanKind = SpanKind.CLIENT) -> list[ReadableSpan]:
        """The platform calls named ``name`` (`<platform> <method>`), each checked to be a
        ``kind`` span whose parent is its message's turn (the sending step), in send order."""
        found = self.named(name)
        assert found, f"no {name!r} span among {[s.name for s in self.trace_spans()]}"
        for call in found:
            [turn] = [s for s in self.trace_of(call) if s.name == "chatgate.turn"]
            assert call.kind is kind, (name, call.kind)
            assert call.parent is not None and call.parent.span_id == span_id(turn)
        return sorted(found, key=lambda s: s.start_time or 0)

    def turn_of(self, span: ReadableSpan) -> ReadableSpan:
        [turn] = [s for s in self.trace_of(span) if s.name == "chatgate.turn"]
        return turn

    def trace_spans(self) -> list[ReadableSpan]:
        return list(self.exporter.get_finished_spans())

    @staticmethod
    def trace_id(span: ReadableSpan) -> int:
        return trace_id(span)


def failed(span: ReadableSpan) -> bool:
    return span.status.status_code is StatusCode.ERROR


def retries(turn: ReadableSpan) -> list[str]:
    """The kinds of the delivery retries recorded on a turn's span, in order."""
    return [str((e.attributes or {}).get("kind")) for e in turn.events if e.name == RETRY]


def trace_id(span: ReadableSpan) -> int:
    assert span.context is not None
    return span.context.trace_id


def span_id(span: ReadableSpan) -> int:
    assert span.context is not None
    return span.context.span_id
