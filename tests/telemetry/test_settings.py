"""Where traces go: off unless configured, the OTEL_* environment, the resource, the sampler."""

from __future__ import annotations

import pytest

from chatgate.config.telemetry_models import TelemetryConfig
from chatgate.telemetry.setup import sampler, settings

ON = TelemetryConfig(otlp_endpoint="http://collector:4318/")


@pytest.mark.parametrize(
    ("config", "env", "url"),
    [
        (TelemetryConfig(), {}, None),
        (ON, {}, "http://collector:4318/v1/traces"),
        (
            TelemetryConfig(),
            {"OTEL_EXPORTER_OTLP_ENDPOINT": "http://c:4318"},
            "http://c:4318/v1/traces",
        ),
        (TelemetryConfig(), {"OTEL_EXPORTER_OTLP_TRACES_ENDPOINT": "http://c/t"}, "http://c/t"),
        (ON, {"OTEL_SDK_DISABLED": "true"}, None),
        (ON, {"OTEL_TRACES_EXPORTER": "none"}, None),
    ],
)
def test_export_is_off_unless_an_endpoint_is_named(
    config: TelemetryConfig, env: dict[str, str], url: str | None
) -> None:
    found = settings(config, env, "replica-1")
    assert (found.traces_url if found else None) == url


def test_the_resource_names_service_version_replica_and_pod() -> None:
    found = settings(
        ON, {"POD_NAME": "chatgate-0", "OTEL_RESOURCE_ATTRIBUTES": "team=bots,x=a%20b"}, "r1"
    )
    assert found is not None
    assert found.resource["service.name"] == "chatgate"
    assert found.resource["service.instance.id"] == "r1"
    assert found.resource["k8s.pod.name"] == "chatgate-0"
    assert found.resource["team"] == "bots" and found.resource["x"] == "a b"
    named = settings(ON, {"OTEL_SERVICE_NAME": "bot-eu"}, "r1")
    assert named is not None and named.resource["service.name"] == "bot-eu"


def test_the_endpoint_shown_carries_no_credentials() -> None:
    found = settings(
        TelemetryConfig(otlp_endpoint="https://user:s3cret@otel.example:4318"), {}, "r"
    )
    assert found is not None
    assert found.shown_endpoint == "https://otel.example:4318"


@pytest.mark.parametrize(
    ("env", "ratio", "described"),
    [
        ({}, 0.25, "ParentBased{root:TraceIdRatioBased{0.25}"),
        ({"OTEL_TRACES_SAMPLER": "always_off"}, 1.0, "AlwaysOffSampler"),
        (
            {"OTEL_TRACES_SAMPLER": "traceidratio", "OTEL_TRACES_SAMPLER_ARG": "0.5"},
            1.0,
            "TraceIdRatioBased{0.5}",
        ),
        ({"OTEL_TRACES_SAMPLER": "bogus"}, 1.0, "ParentBased{root:TraceIdRatioBased{1.0}"),
    ],
)
def test_the_sampler(env: dict[str, str], ratio: float, described: str) -> None:
    found = settings(TelemetryConfig(otlp_endpoint="http://c:4318", sample_ratio=ratio), env, "r")
    assert found is not None
    assert sampler(found).get_description().startswith(described)


@pytest.mark.parametrize(
    ("header", "kept"),
    [
        ("00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01", True),
        (" 00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01 ", True),
        ("00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7", False),
        ("not a traceparent", False),
        (None, False),
    ],
)
def test_a_webhook_keeps_only_a_well_formed_traceparent(header: str | None, kept: bool) -> None:
    from chatgate.channels.webhook.adapter import _trace_context

    assert bool(_trace_context(header)) is kept


def test_a_telemetry_change_needs_a_restart() -> None:
    from chatgate.config.hot import restart_only_changes
    from chatgate.config.models import GatewayConfig

    old = GatewayConfig()
    new = GatewayConfig(telemetry=ON)
    assert restart_only_changes(old, new) == ["telemetry"]


@pytest.mark.parametrize(
    ("opt_in", "latest"),
    [
        ("", False),
        ("http", False),
        ("http, gen_ai_latest_experimental", True),
        ("gen_ai_latest_experimental", True),
    ],
)
def test_the_latest_genai_conventions_are_opted_into(opt_in: str, latest: bool) -> None:
    found = settings(ON, {"OTEL_SEMCONV_STABILITY_OPT_IN": opt_in}, "r")
    assert found is not None and found.latest_genai is latest


@pytest.mark.parametrize(
    ("config", "env", "url"),
    [
        (ON, {}, "http://collector:4318/v1/metrics"),
        (ON, {"OTEL_METRICS_EXPORTER": "none"}, None),
        (
            TelemetryConfig(),
            {"OTEL_EXPORTER_OTLP_ENDPOINT": "http://c:4318/"},
            "http://c:4318/v1/metrics",
        ),
        (
            TelemetryConfig(),
            {
                "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT": "http://c/t",
                "OTEL_EXPORTER_OTLP_METRICS_ENDPOINT": "http://c/m",
            },
            "http://c/m",
        ),
        (TelemetryConfig(), {"OTEL_EXPORTER_OTLP_TRACES_ENDPOINT": "http://c/t"}, None),
    ],
)
def test_genai_metrics_go_beside_the_traces(
    config: TelemetryConfig, env: dict[str, str], url: str | None
) -> None:
    found = settings(config, env, "r")
    assert found is not None and found.metrics_url == url
