"""The span exporter: each batch written by `SpanWriter` (a third of the CPU a traced message
cost when the SDK's encoder built protobuf objects) and POSTed by `OtlpHttpSender`. Only the SDK's
public exporter interface: endpoint, OTEL_EXPORTER_OTLP_* headers, TLS, compression, timeout and
retries are the sender's."""

from __future__ import annotations

import logging
from collections.abc import Mapping, Sequence

from opentelemetry.sdk.trace import ReadableSpan
from opentelemetry.sdk.trace.export import SpanExporter as SdkSpanExporter
from opentelemetry.sdk.trace.export import SpanExportResult

from chatgate.telemetry.otlp_http import OtlpHttpSender, from_env
from chatgate.telemetry.wire import SpanWriter

log = logging.getLogger("chatgate.telemetry")


class SpanExporter(SdkSpanExporter):
    """Writes span batches as OTLP requests and sends them with ``sender``; a batch the writer
    cannot write (an attribute value of a type it does not know) is encoded by the SDK's own
    encoder instead."""

    def __init__(self, sender: OtlpHttpSender) -> None:
        self._sender = sender
        self._writer = SpanWriter()
        self._stopped = False

    @classmethod
    def to(cls, url: str, env: Mapping[str, str]) -> SpanExporter:
        """An exporter posting to ``url`` as the OTEL_EXPORTER_OTLP_* settings in ``env`` say."""
        return cls(OtlpHttpSender(from_env(url, "TRACES", env)))

    def export(self, spans: Sequence[ReadableSpan]) -> SpanExportResult:
        if self._stopped:
            return SpanExportResult.FAILURE
        try:
            data = self._writer.request(spans)
        except Exception as exc:
            log.warning(
                "span batch written by the SDK encoder", extra={"error": type(exc).__name__}
            )
            data = _sdk_encoded(spans)
        sent = self._sender.send(data)
        if sent.ok:
            return SpanExportResult.SUCCESS
        log.warning(
            "span export failed",
            extra={"status": sent.status, "error": sent.error, "attempts": sent.attempts},
        )
        return SpanExportResult.FAILURE

    def shutdown(self) -> None:
        self._stopped = True
        self._sender.close()

    def force_flush(self, timeout_millis: int = 30000) -> bool:
        return True  # nothing is kept here: the span processor holds what waits


def _sdk_encoded(spans: Sequence[ReadableSpan]) -> bytes:
    from opentelemetry.exporter.otlp.proto.common.trace_encoder import encode_spans

    encoded: bytes = encode_spans(spans).SerializePartialToString()
    return encoded
