"""GenAI client metrics through an in-memory reader: names, units, attributes by outcome and
by the conventions opted into; nothing recorded while off."""

from __future__ import annotations

from typing import Any

import pytest
from opentelemetry.sdk.metrics import MeterProvider
from opentelemetry.sdk.metrics.export import InMemoryMetricReader

from chatgate import genai_metrics

CALL = genai_metrics.Call("chat", "openai", "openai/gpt-4o-mini")


def _points(reader: InMemoryMetricReader) -> dict[str, list[Any]]:
    found: dict[str, list[Any]] = {}
    data = reader.get_metrics_data()
    assert data is not None
    for resource in data.resource_metrics:
        for scope in resource.scope_metrics:
            for metric in scope.metrics:
                found.setdefault(metric.name, []).extend(metric.data.data_points)
    return found


@pytest.mark.parametrize("latest", [False, True])
def test_a_call_records_its_duration_and_tokens(latest: bool) -> None:
    reader = InMemoryMetricReader()
    genai_metrics.install(MeterProvider([reader]).get_meter("t"), latest_genai=latest)
    try:
        genai_metrics.model_call(
            CALL, 0.3, response_model="gpt-4o-mini-2024-07-18", input_tokens=120, output_tokens=7
        )
        genai_metrics.model_call(CALL, 2.0, error="timeout", input_tokens=5)
    finally:
        genai_metrics.uninstall()
    points = _points(reader)
    durations = {p.attributes.get("error.type"): p for p in points[genai_metrics.DURATION]}
    assert durations[None].sum == pytest.approx(0.3)
    assert durations["timeout"].count == 1  # failed calls are timed, their tokens are not
    assert durations[None].explicit_bounds[:3] == (0.01, 0.02, 0.04)
    tokens = {p.attributes["gen_ai.token.type"]: p.sum for p in points[genai_metrics.TOKENS]}
    assert tokens == {"input": 120, "output": 7}
    attributes = durations[None].attributes
    assert attributes["gen_ai.provider.name"] == "openai"
    assert attributes["gen_ai.request.model"] == "openai/gpt-4o-mini"
    answered = {p.attributes.get("gen_ai.response.model") for p in points[genai_metrics.TOKENS]}
    assert attributes["gen_ai.response.model"] == "gpt-4o-mini-2024-07-18"
    assert answered == {"gpt-4o-mini-2024-07-18"}  # the tokens say which model spent them
    assert "gen_ai.response.model" not in durations["timeout"].attributes  # nobody answered
    assert ("gen_ai.system" in attributes) is not latest


def test_nothing_is_recorded_while_off() -> None:
    assert not genai_metrics.on()
    genai_metrics.model_call(CALL, 1.0, input_tokens=1)  # no meter: a no-op, no error


@pytest.mark.parametrize(
    ("env", "kept"), [({}, 0), ({"OTEL_METRICS_EXEMPLAR_FILTER": "trace_based"}, 1)]
)
def test_exemplars_only_when_asked_for(env: dict[str, str], kept: int) -> None:
    from opentelemetry.sdk.trace import TracerProvider

    from chatgate.config.telemetry_models import TelemetryConfig
    from chatgate.telemetry.setup import meters, settings

    found = settings(TelemetryConfig(otlp_endpoint="http://collector:4318"), {}, "r1")
    assert found is not None
    reader = InMemoryMetricReader()
    made = meters(found, env, reader)
    genai_metrics.install(made.get_meter("t"))
    try:
        with TracerProvider().get_tracer("t").start_as_current_span("chat m"):  # sampled
            genai_metrics.model_call(CALL, 0.3, input_tokens=1)
    finally:
        genai_metrics.uninstall()
    (duration,) = _points(reader)[genai_metrics.DURATION]
    assert len(duration.exemplars) == kept
    made.shutdown()


class _Kept:
    """A histogram that keeps the attribute mappings it is given."""

    def __init__(self) -> None:
        self.given: list[object] = []

    def record(self, amount: float, attributes: object = None, context: object = None) -> None:
        self.given.append(attributes)


class _Meter:
    def __init__(self) -> None:
        self.made: list[_Kept] = []

    def create_histogram(self, name: str, **kwargs: object) -> _Kept:
        self.made.append(_Kept())
        return self.made[-1]


def test_a_calls_attribute_mappings_are_built_once_and_reused() -> None:
    meter = _Meter()
    genai_metrics.install(meter)
    try:
        for _ in range(2):
            genai_metrics.model_call(
                CALL, 0.1, response_model="m-1", input_tokens=3, output_tokens=4
            )
    finally:
        genai_metrics.uninstall()
    durations, tokens = meter.made
    assert durations.given[0] is durations.given[1]
    assert tokens.given[0] is tokens.given[2] and tokens.given[1] is tokens.given[3]


def test_reinstalled_with_the_latest_conventions_no_earlier_attributes_are_reused() -> None:
    reader = InMemoryMetricReader()
    meter = MeterProvider([reader]).get_meter("t")
    genai_metrics.install(meter)
    genai_metrics.model_call(CALL, 0.1)
    genai_metrics.install(meter, latest_genai=True)
    try:
        genai_metrics.model_call(CALL, 0.2)
    finally:
        genai_metrics.uninstall()
    systems = [("gen_ai.system" in p.attributes) for p in _points(reader)[genai_metrics.DURATION]]
    assert sorted(systems) == [False, True]


async def test_metrics_are_exported_every_interval_the_environment_given_says() -> None:
    import asyncio

    from chatgate.config.telemetry_models import TelemetryConfig
    from chatgate.telemetry.setup import meters, settings
    from tests.fakes.otlp_receiver import OtlpReceiver

    async with OtlpReceiver() as receiver:
        config = TelemetryConfig(otlp_endpoint=receiver.base_url)
        found = settings(config, {}, "r1")
        assert found is not None
        made = meters(found, {"OTEL_METRIC_EXPORT_INTERVAL": "50"})  # ms
        genai_metrics.install(made.get_meter("t"))
        try:
            genai_metrics.model_call(CALL, 0.3, input_tokens=1)
            for _ in range(400):  # exported by the reader's thread, not at shutdown
                if receiver.histograms:
                    break
                await asyncio.sleep(0.025)
            assert {h.name for h in receiver.histograms} >= {genai_metrics.DURATION}
        finally:
            genai_metrics.uninstall()
            await asyncio.to_thread(made.shutdown)
