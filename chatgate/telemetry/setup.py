"""Where traces go, read from `telemetry:` and the standard OTEL_* environment, and the tracer
provider built from it (OpenTelemetry's SDK is imported only when export is on)."""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any
from urllib.parse import unquote, urlsplit

from chatgate import __version__
from chatgate.config.telemetry_models import TelemetryConfig

# The conventions' version the names follow (gen_ai.provider.name arrived in 1.37.0).
SCHEMA_URL = "https://opentelemetry.io/schemas/1.37.0"
LATEST_GENAI = "gen_ai_latest_experimental"  # an OTEL_SEMCONV_STABILITY_OPT_IN value
SERVICE = "chatgate"
QUEUE_SIZE = 16384
_SAMPLERS = (
    "always_on",
    "always_off",
    "traceidratio",
    "parentbased_always_on",
    "parentbased_always_off",
    "parentbased_traceidratio",
)


@dataclass(frozen=True)
class ExportSettings:
    traces_url: str  # where the OTLP/HTTP exporter posts spans
    sampler: str  # one of _SAMPLERS
    ratio: float
    capture_content: bool
    resource: Mapping[str, str]
    queue_size: int | None = QUEUE_SIZE  # spans waiting for export; None: OTEL_BSP_MAX_QUEUE_SIZE
    latest_genai: bool = False  # the latest experimental GenAI conventions, opted in
    metrics_url: str | None = None  # where GenAI client metrics go (None: not exported)

    @property
    def shown_endpoint(self) -> str:
        """The endpoint without credentials or query, for status pages."""
        parts = urlsplit(self.traces_url)
        return f"{parts.scheme}://{parts.hostname or ''}{f':{parts.port}' if parts.port else ''}"


def settings(
    config: TelemetryConfig, env: Mapping[str, str], replica: str
) -> ExportSettings | None:
    """What to export, or None: export is off unless an endpoint is configured (gateway.yaml,
    OTEL_EXPORTER_OTLP_TRACES_ENDPOINT or OTEL_EXPORTER_OTLP_ENDPOINT) and not disabled."""
    if env.get("OTEL_SDK_DISABLED", "").strip().lower() == "true":
        return None
    if env.get("OTEL_TRACES_EXPORTER", "otlp").strip().lower() == "none":
        return None
    url = _traces_url(config, env)
    if url is None:
        return None
    sampler = env.get("OTEL_TRACES_SAMPLER", "").strip().lower()
    ratio = config.sample_ratio
    if sampler in _SAMPLERS:
        ratio = _ratio(env.get("OTEL_TRACES_SAMPLER_ARG"), ratio)
    else:
        sampler = "parentbased_traceidratio"
    queue = None if env.get("OTEL_BSP_MAX_QUEUE_SIZE", "").strip() else QUEUE_SIZE
    opted = {v.strip() for v in env.get("OTEL_SEMCONV_STABILITY_OPT_IN", "").split(",")}
    return ExportSettings(
        url,
        sampler,
        ratio,
        config.capture_content,
        resource(env, replica),
        queue,
        LATEST_GENAI in opted,
        _metrics_url(config, env),
    )


def _traces_url(config: TelemetryConfig, env: Mapping[str, str]) -> str | None:
    if config.otlp_endpoint:
        return config.otlp_endpoint.rstrip("/") + "/v1/traces"
    signal = env.get("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", "").strip()
    if signal:
        return signal  # the signal's own endpoint is used as given
    base = env.get("OTEL_EXPORTER_OTLP_ENDPOINT", "").strip()
    return base.rstrip("/") + "/v1/traces" if base else None


def _metrics_url(config: TelemetryConfig, env: Mapping[str, str]) -> str | None:
    """The metrics URL beside the traces' (same base, ``/v1/metrics``), or the signal's own."""
    if env.get("OTEL_METRICS_EXPORTER", "otlp").strip().lower() == "none":
        return None
    if config.otlp_endpoint:
        return config.otlp_endpoint.rstrip("/") + "/v1/metrics"
    signal = env.get("OTEL_EXPORTER_OTLP_METRICS_ENDPOINT", "").strip()
    if signal:
        return signal
    base = env.get("OTEL_EXPORTER_OTLP_ENDPOINT", "").strip()
    return base.rstrip("/") + "/v1/metrics" if base else None


def meters(found: ExportSettings, env: Mapping[str, str], reader: Any = None) -> Any:
    """A MeterProvider exporting to the OTLP/HTTP metrics endpoint (or read by ``reader``) from the
    SDK's reader thread, every OTEL_METRIC_EXPORT_INTERVAL (60 s) and when it shuts down; None
    when metrics are not exported. Without exemplars unless OTEL_METRICS_EXEMPLAR_FILTER asks
    for them: offering every measurement in a sampled trace to a reservoir costs a sixth of
    what recording a model call's metrics does, and the spans already carry the same numbers."""
    if found.metrics_url is None:
        return None
    from opentelemetry.sdk import metrics
    from opentelemetry.sdk.metrics.export import PeriodicExportingMetricReader
    from opentelemetry.sdk.resources import Resource

    if reader is None:
        reader = PeriodicExportingMetricReader(
            _metric_exporter(found.metrics_url, env),
            export_interval_millis=_positive(env, "OTEL_METRIC_EXPORT_INTERVAL", 60000.0),
        )
    asked = env.get("OTEL_METRICS_EXEMPLAR_FILTER", "").strip().lower()
    exemplars = {
        "trace_based": metrics.TraceBasedExemplarFilter,
        "always_on": metrics.AlwaysOnExemplarFilter,
    }.get(asked, metrics.AlwaysOffExemplarFilter)
    return metrics.MeterProvider(
        [reader],
        resource=Resource(dict(found.resource), SCHEMA_URL),
        exemplar_filter=exemplars(),
    )


def _metric_exporter(url: str, env: Mapping[str, str]) -> Any:
    """The SDK's OTLP/HTTP metric exporter, given the OTEL_EXPORTER_OTLP_* settings as the span
    sender reads them (the timeout in milliseconds, as the specification says, where the SDK
    alone would read seconds)."""
    from opentelemetry.exporter.otlp.proto.http import Compression
    from opentelemetry.exporter.otlp.proto.http.metric_exporter import OTLPMetricExporter

    from chatgate.telemetry.otlp_http import from_env

    sends = from_env(url, "METRICS", env)
    return OTLPMetricExporter(
        endpoint=url,
        certificate_file=sends.certificate,
        client_key_file=sends.client_key,
        client_certificate_file=sends.client_certificate,
        headers=dict(sends.headers),
        timeout=sends.timeout_s,
        compression=Compression(sends.compression or "none"),
    )


def _positive(env: Mapping[str, str], name: str, default: float) -> float:
    try:
        value = float(env.get(name, "").strip() or default)
    except ValueError:
        return default
    return value if value > 0 else default


def _ratio(raw: str | None, default: float) -> float:
    try:
        value = float(raw) if raw else default
    except ValueError:
        return default
    return min(max(value, 0.0), 1.0)


def resource(env: Mapping[str, str], replica: str) -> dict[str, str]:
    """Service name and version, this replica, the k8s pod; OTEL_RESOURCE_ATTRIBUTES and
    OTEL_SERVICE_NAME win over what chatgate derives."""
    attrs = {
        "service.name": SERVICE,
        "service.version": __version__,
        "service.instance.id": replica,
    }
    pod = env.get("POD_NAME") or env.get("K8S_POD_NAME")
    if pod:
        attrs["k8s.pod.name"] = pod
    for pair in env.get("OTEL_RESOURCE_ATTRIBUTES", "").split(","):
        key, sep, value = pair.partition("=")
        if sep and key.strip():
            attrs[key.strip()] = unquote(value.strip())
    if env.get("OTEL_SERVICE_NAME", "").strip():
        attrs["service.name"] = env["OTEL_SERVICE_NAME"].strip()
    return attrs


def provider(
    found: ExportSettings, exporter: Any = None, env: Mapping[str, str] = os.environ
) -> tuple[Any, Any]:
    """A TracerProvider batching spans to the OTLP/HTTP exporter (or ``exporter``), exported on
    a thread of its own, never on the event loop, and that span processor (chatgate's own spans
    end into it directly)."""
    from opentelemetry.sdk.resources import Resource
    from opentelemetry.sdk.trace import TracerProvider

    from chatgate.telemetry.batch import from_env

    if exporter is None:
        from chatgate.telemetry.export import SpanExporter

        exporter = SpanExporter.to(found.traces_url, env)
    made = TracerProvider(
        resource=Resource(dict(found.resource), SCHEMA_URL), sampler=sampler(found)
    )
    # A deeper queue than the SDK's 2048: a burst on a busy machine, where the export thread
    # runs late, is kept rather than dropped (OTEL_BSP_* still wins when set).
    processor = from_env(exporter, env, found.queue_size)
    made.add_span_processor(processor)
    return made, processor


def sampler(found: ExportSettings) -> Any:
    from opentelemetry.sdk.trace import sampling

    base: Any = {
        "always_on": sampling.ALWAYS_ON,
        "always_off": sampling.ALWAYS_OFF,
    }.get(found.sampler.removeprefix("parentbased_"))
    if base is None:
        base = sampling.TraceIdRatioBased(found.ratio)
    return sampling.ParentBased(base) if found.sampler.startswith("parentbased_") else base
