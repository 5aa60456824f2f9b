"""An OTLP/HTTP receiver on 127.0.0.1 (over TLS when given a server context): decodes each
protobuf export into plain spans and plain histogram points, keeps each trace request's headers
and size on the wire, and answers the statuses it is told to before it takes a request."""

from __future__ import annotations

import ssl
from dataclasses import dataclass, field
from typing import Any

from aiohttp import web


@dataclass
class ReceivedSpan:
    name: str
    trace_id: str
    span_id: str
    parent_id: str
    kind: int
    attributes: dict[str, Any]
    events: list[tuple[str, dict[str, Any]]]
    status: int
    resource: dict[str, Any] = field(default_factory=dict)
    scope: str = ""  # the instrumentation scope (tracer name) that made it
    links: list[tuple[str, str]] = field(default_factory=list)  # (trace id, span id) linked to


def _value(any_value: Any) -> Any:
    kind = any_value.WhichOneof("value")
    if kind == "array_value":
        return [_value(v) for v in any_value.array_value.values]
    return getattr(any_value, kind) if kind else None


def _attrs(pairs: Any) -> dict[str, Any]:
    return {p.key: _value(p.value) for p in pairs}


@dataclass
class ReceivedRequest:
    """One POST to /v1/traces: its headers (names in lower case) and body sizes."""

    headers: dict[str, str]
    wire_bytes: int  # as sent (compressed when Content-Encoding says so)
    body_bytes: int  # the protobuf request, decompressed
    status: int  # what the receiver answered


@dataclass
class ReceivedHistogram:
    """One data point of a histogram metric."""

    name: str
    unit: str
    attributes: dict[str, Any]
    count: int
    total: float
    bounds: list[float]


class OtlpReceiver:
    def __init__(self, tls: ssl.SSLContext | None = None) -> None:
        self.spans: list[ReceivedSpan] = []
        self.histograms: list[ReceivedHistogram] = []
        self.requests = 0  # trace requests taken
        self.received: list[ReceivedRequest] = []  # every trace request, taken or refused
        self.refuse: list[int] = []  # statuses to answer, one per request, before taking any
        self._tls = tls
        self._runner: web.AppRunner | None = None
        self.port = 0

    @property
    def base_url(self) -> str:
        return f"{'https' if self._tls else 'http'}://127.0.0.1:{self.port}"

    async def __aenter__(self) -> OtlpReceiver:
        app = web.Application()
        app.router.add_post("/v1/traces", self._traces)
        app.router.add_post("/v1/metrics", self._metrics)
        self._runner = web.AppRunner(app)
        await self._runner.setup()
        site = web.TCPSite(self._runner, "127.0.0.1", 0, ssl_context=self._tls)
        await site.start()
        self.port = self._runner.addresses[0][1]
        return self

    async def __aexit__(self, *exc: object) -> None:
        assert self._runner is not None
        await self._runner.cleanup()

    async def _traces(self, request: web.Request) -> web.Response:
        from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import (
            ExportTraceServiceRequest,
            ExportTraceServiceResponse,
        )

        assert request.content_type == "application/x-protobuf"
        body = await request.read()  # aiohttp decompresses what Content-Encoding names
        status = self.refuse.pop(0) if self.refuse else 200
        headers = {k.lower(): v for k, v in request.headers.items()}
        wire = request.content_length or 0
        self.received.append(ReceivedRequest(headers, wire, len(body), status))
        if status != 200:
            return web.Response(status=status)
        export = ExportTraceServiceRequest()
        export.ParseFromString(body)
        self.requests += 1
        for resource_spans in export.resource_spans:
            resource = _attrs(resource_spans.resource.attributes)
            for scope in resource_spans.scope_spans:
                for span in scope.spans:
                    self.spans.append(
                        ReceivedSpan(
                            span.name,
                            span.trace_id.hex(),
                            span.span_id.hex(),
                            span.parent_span_id.hex(),
                            span.kind,
                            _attrs(span.attributes),
                            [(e.name, _attrs(e.attributes)) for e in span.events],
                            span.status.code,
                            resource,
                            scope.scope.name,
                            [(k.trace_id.hex(), k.span_id.hex()) for k in span.links],
                        )
                    )
        return web.Response(
            body=ExportTraceServiceResponse().SerializeToString(),
            content_type="application/x-protobuf",
        )

    async def _metrics(self, request: web.Request) -> web.Response:
        from opentelemetry.proto.collector.metrics.v1.metrics_service_pb2 import (
            ExportMetricsServiceRequest,
            ExportMetricsServiceResponse,
        )

        assert request.content_type == "application/x-protobuf"
        export = ExportMetricsServiceRequest()
        export.ParseFromString(await request.read())
        for resource_metrics in export.resource_metrics:
            for scope in resource_metrics.scope_metrics:
                for metric in scope.metrics:
                    for point in metric.histogram.data_points:
                        self.histograms.append(
                            ReceivedHistogram(
                                metric.name,
                                metric.unit,
                                _attrs(point.attributes),
                                point.count,
                                point.sum,
                                list(point.explicit_bounds),
                            )
                        )
        return web.Response(
            body=ExportMetricsServiceResponse().SerializeToString(),
            content_type="application/x-protobuf",
        )

    def named(self, name: str) -> list[ReceivedSpan]:
        return [s for s in self.spans if s.name == name]
