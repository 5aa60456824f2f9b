"""The span batch encoder writes exactly what the OTLP exporter's own encoder would: parsed
back, the request equals `encode_spans` of the same spans, for every kind of value and span;
the exporter built on it delivers what the SDK's exporter delivers to an OTLP receiver."""

from __future__ import annotations

import asyncio

from opentelemetry.exporter.otlp.proto.common.trace_encoder import encode_spans
from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest
from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import ReadableSpan, TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor, SpanExportResult
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from opentelemetry.trace import (
    Link,
    NonRecordingSpan,
    SpanContext,
    SpanKind,
    Status,
    StatusCode,
    TraceFlags,
    TraceState,
    set_span_in_context,
)

from chatgate.telemetry.export import SpanExporter
from chatgate.telemetry.wire import SpanWriter
from tests.fakes.otlp_receiver import OtlpReceiver

SCHEMA = "https://opentelemetry.io/schemas/1.37.0"
REMOTE = SpanContext(
    0x4BF92F3577B34DA6A3CE929D0E0E4736,
    0x00F067AA0BA902B7,
    is_remote=True,
    trace_flags=TraceFlags(1),
    trace_state=TraceState([("vendor", "a=1"), ("other", "b")]),
)


def _spans() -> list[ReadableSpan]:
    exporter = InMemorySpanExporter()
    resources = [
        Resource({"service.name": "chatgate", "service.instance.id": "r1"}, SCHEMA),
        Resource({"service.name": "other", "k8s.pod.name": "p-0"}),
    ]
    for resource in resources:
        provider = TracerProvider(resource=resource)
        provider.add_span_processor(SimpleSpanProcessor(exporter))
        tracer = provider.get_tracer("chatgate", "1.2.3", schema_url=SCHEMA)
        bare = provider.get_tracer("")  # a scope with no name, version or schema
        remote = set_span_in_context(NonRecordingSpan(REMOTE))
        with tracer.start_as_current_span(
            "telegram message", context=remote, kind=SpanKind.CONSUMER, links=[Link(REMOTE)]
        ) as root:
            root.set_attributes(
                {
                    "s": "text é ✓",
                    "empty": "",
                    "yes": True,
                    "no": False,
                    "n": 42,
                    "zero": 0,
                    "negative": -7,
                    "big": 2**62,
                    "x": 0.25,
                    "steps": ["a", "b", ""],
                    "took": [0.1, 2.0],
                    "counts": [1, -2],
                    "flags": [True, False],
                }
            )
            root.add_event("chatgate.send_retry", {"kind": "transient", "attempt": 1})
            root.add_event("bare")
            with tracer.start_as_current_span("chat m", kind=SpanKind.CLIENT) as chat:
                chat.set_status(Status(StatusCode.ERROR, "TimeoutError"))
            with bare.start_as_current_span("", kind=SpanKind.PRODUCER) as quiet:
                quiet.set_status(Status(StatusCode.OK))
        with tracer.start_as_current_span("server", kind=SpanKind.SERVER):
            pass
    return list(exporter.get_finished_spans())


def test_the_request_is_the_exporters_own_field_for_field() -> None:
    spans = _spans()
    writer = SpanWriter()
    for _ in range(2):  # the second time, recurring pairs come from the cache
        ours = ExportTraceServiceRequest.FromString(writer.request(spans))
        theirs = encode_spans(spans)
        assert ours == theirs
        assert ours.SerializeToString(deterministic=True) == theirs.SerializeToString(
            deterministic=True
        )


def test_an_empty_batch_is_an_empty_request() -> None:
    assert SpanWriter().request([]) == b""


async def test_the_exporter_sends_the_written_batch_as_the_sdk_exporter_would() -> None:
    spans = _spans()
    async with OtlpReceiver() as ours, OtlpReceiver() as theirs:
        url = "{}/v1/traces"
        sent = await asyncio.to_thread(SpanExporter.to(url.format(ours.base_url), {}).export, spans)
        reference = OTLPSpanExporter(endpoint=url.format(theirs.base_url))
        assert await asyncio.to_thread(reference.export, spans) is SpanExportResult.SUCCESS
    assert sent is SpanExportResult.SUCCESS
    assert ours.spans == theirs.spans and len(ours.spans) == len(spans)


async def test_a_refused_batch_is_a_failed_export() -> None:
    env = {"OTEL_EXPORTER_OTLP_TIMEOUT": "500"}
    exporter = SpanExporter.to("http://127.0.0.1:9/v1/traces", env)
    assert await asyncio.to_thread(exporter.export, _spans()) is SpanExportResult.FAILURE
