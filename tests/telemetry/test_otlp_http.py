"""The span exporter's own OTLP/HTTP sender against the OTLP receiver fake: the OTEL_EXPORTER_OTLP_*
headers, gzip, a CA certificate, and retries of what the collector could not take yet (with the
backoff the SDK's exporters use, within the timeout), never of what it refused."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest
from opentelemetry.sdk.trace import ReadableSpan, TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor, SpanExportResult
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

from chatgate.telemetry.export import SpanExporter
from chatgate.telemetry.otlp_http import OtlpHttpSender, SenderSettings, from_env
from tests.fakes.otlp_receiver import OtlpReceiver
from tests.fakes.tls import server_ssl_context, session_ca


def _spans(n: int = 20) -> list[ReadableSpan]:
    exporter = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    tracer = provider.get_tracer("chatgate")
    for i in range(n):
        with tracer.start_as_current_span("telegram sendMessage") as span:
            span.set_attributes({"chatgate.channel": "telegram", "chatgate.attempt": i})
    return list(exporter.get_finished_spans())


class Waits:
    """Records the pauses before retries instead of taking them, moving its clock on."""

    def __init__(self) -> None:
        self.taken: list[float] = []
        self.clock = 1000.0

    def __call__(self, seconds: float) -> bool:
        self.taken.append(seconds)
        self.clock += seconds
        return False

    def now(self) -> float:
        return self.clock


def _exporter(url: str, env: dict[str, str], waits: Waits | None = None) -> SpanExporter:
    waits = waits or Waits()
    settings = from_env(url, "TRACES", env)
    return SpanExporter(OtlpHttpSender(settings, wait=waits, now=waits.now, jitter=lambda: 1.0))


async def _export(exporter: SpanExporter, spans: list[ReadableSpan]) -> SpanExportResult:
    return await asyncio.to_thread(exporter.export, spans)


async def test_headers_from_the_environment_go_with_every_request() -> None:
    env = {
        "OTEL_EXPORTER_OTLP_HEADERS": "x-tenant=acme,authorization=Basic%20YWJj",
        "OTEL_EXPORTER_OTLP_TRACES_HEADERS": "api-key=k%3D1,x-team=traces",  # the signal's own
    }
    async with OtlpReceiver() as receiver:
        exporter = _exporter(f"{receiver.base_url}/v1/traces", env)
        for _ in range(2):  # the second over the kept connection
            assert await _export(exporter, _spans(3)) is SpanExportResult.SUCCESS
    assert len(receiver.received) == 2 and len(receiver.spans) == 6
    for request in receiver.received:
        assert request.headers["api-key"] == "k=1"
        assert request.headers["x-team"] == "traces"
        assert "x-tenant" not in request.headers  # the signal's variable wins, as in the SDK
        assert request.headers["content-type"] == "application/x-protobuf"


def test_without_the_signals_own_variable_the_general_one_is_read() -> None:
    env = {"OTEL_EXPORTER_OTLP_HEADERS": "authorization=Basic%20YWJj"}
    assert from_env("http://c/v1/traces", "TRACES", env).headers == {"authorization": "Basic YWJj"}


async def test_gzip_compression_sends_fewer_bytes_that_decode_to_the_same_spans() -> None:
    spans = _spans()
    async with OtlpReceiver() as plain, OtlpReceiver() as zipped:
        assert await _export(_exporter(f"{plain.base_url}/v1/traces", {}), spans) is (
            SpanExportResult.SUCCESS
        )
        env = {"OTEL_EXPORTER_OTLP_TRACES_COMPRESSION": "gzip"}
        exporter = _exporter(f"{zipped.base_url}/v1/traces", env)
        assert await _export(exporter, spans) is SpanExportResult.SUCCESS
    [sent] = zipped.received
    assert sent.headers["content-encoding"] == "gzip"
    assert sent.wire_bytes < sent.body_bytes / 2
    assert sent.body_bytes == plain.received[0].body_bytes
    assert zipped.spans == plain.spans and len(zipped.spans) == len(spans)


def test_compression_is_read_as_the_sdk_reads_it() -> None:
    def read(value: str) -> str | None:
        env = {"OTEL_EXPORTER_OTLP_COMPRESSION": value}
        return from_env("http://c/v1/traces", "TRACES", env).compression

    assert (read("GZIP "), read("deflate"), read("none"), read("br")) == (
        "gzip",
        "deflate",
        None,
        None,
    )


async def test_a_503_is_retried_after_a_backoff_and_the_batch_arrives_once() -> None:
    waits = Waits()
    async with OtlpReceiver() as receiver:
        receiver.refuse = [503, 429]
        exporter = _exporter(f"{receiver.base_url}/v1/traces", {}, waits)
        assert await _export(exporter, _spans(4)) is SpanExportResult.SUCCESS
    assert [r.status for r in receiver.received] == [503, 429, 200]
    assert waits.taken == [1.0, 2.0]  # exponential backoff (jitter fixed at 1 here)
    assert len(receiver.spans) == 4


async def test_a_refused_batch_is_not_retried() -> None:
    waits = Waits()
    async with OtlpReceiver() as receiver:
        receiver.refuse = [400]
        exporter = _exporter(f"{receiver.base_url}/v1/traces", {}, waits)
        assert await _export(exporter, _spans(2)) is SpanExportResult.FAILURE
    assert len(receiver.received) == 1 and not waits.taken and not receiver.spans


async def test_retries_stop_at_the_bound() -> None:
    waits = Waits()
    async with OtlpReceiver() as receiver:
        receiver.refuse = [503] * 10
        env = {"OTEL_EXPORTER_OTLP_TIMEOUT": "600000"}  # ms: the deadline is not what stops it
        exporter = _exporter(f"{receiver.base_url}/v1/traces", env, waits)
        assert await _export(exporter, _spans(2)) is SpanExportResult.FAILURE
    assert len(receiver.received) == 6 and waits.taken == [1.0, 2.0, 4.0, 8.0, 16.0]


async def test_no_retry_waits_past_the_timeout() -> None:
    waits = Waits()
    async with OtlpReceiver() as receiver:
        receiver.refuse = [503] * 10
        env = {"OTEL_EXPORTER_OTLP_TRACES_TIMEOUT": "5000"}  # 5 s: 1 + 2 fit, 4 more do not
        exporter = _exporter(f"{receiver.base_url}/v1/traces", env, waits)
        assert await _export(exporter, _spans(2)) is SpanExportResult.FAILURE
    assert waits.taken == [1.0, 2.0] and len(receiver.received) == 3


async def test_an_unreachable_collector_is_a_failed_export() -> None:
    exporter = _exporter("http://127.0.0.1:9/v1/traces", {"OTEL_EXPORTER_OTLP_TIMEOUT": "500"})
    assert await _export(exporter, _spans(1)) is SpanExportResult.FAILURE


async def test_tls_with_the_configured_ca_certificate(tmp_path: Path) -> None:
    ca = tmp_path / "ca.pem"
    session_ca().cert_pem.write_to_path(str(ca))
    async with OtlpReceiver(tls=server_ssl_context(["localhost"])) as receiver:
        url = f"{receiver.base_url}/v1/traces"
        trusting = _exporter(url, {"OTEL_EXPORTER_OTLP_CERTIFICATE": str(ca)})
        assert await _export(trusting, _spans(2)) is SpanExportResult.SUCCESS
        untrusting = _exporter(url, {"OTEL_EXPORTER_OTLP_TIMEOUT": "2000"})
        assert await _export(untrusting, _spans(2)) is SpanExportResult.FAILURE
    assert len(receiver.spans) == 2


def test_an_endpoint_that_is_not_http_is_refused() -> None:
    with pytest.raises(ValueError):
        OtlpHttpSender(SenderSettings("grpc://collector:4317"))
