"""GenAI client metrics through the OpenTelemetry metrics API: how long each model call took and
the tokens it used, as the GenAI conventions name them (``gen_ai.client.operation.duration``,
``gen_ai.client.token.usage``). No-ops until the telemetry feature installs a meter, so a
gateway without export pays one global read per call; Prometheus ``/metrics`` is separate.

Unlike spans these are not sampled: every call is counted whatever ``sample_ratio`` says.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

DURATION = "gen_ai.client.operation.duration"
TOKENS = "gen_ai.client.token.usage"
# The bucket boundaries the conventions advise for each histogram.
DURATION_BUCKETS: tuple[float, ...] = tuple(0.01 * 2**n for n in range(14))  # 0.01 s … 81.92 s
TOKEN_BUCKETS: tuple[int, ...] = tuple(4**n for n in range(14))  # 1 … 67,108,864

_duration: Any = None  # Histogram instruments while export is on
_tokens: Any = None
_latest_genai = False
_SHAPES = 256  # attribute sets kept (cleared when full: models and errors are few)
# (call, response model or error) → the attributes of its duration, input and output points
_shapes: dict[tuple[Call, str | None, bool], tuple[Mapping[str, str], ...]] = {}


def install(meter: Any, *, latest_genai: bool = False) -> None:
    """Record with ``meter`` (an OpenTelemetry Meter); ``latest_genai`` as in `tracing.install`."""
    global _duration, _tokens, _latest_genai
    _latest_genai = latest_genai
    _shapes.clear()
    _duration = meter.create_histogram(
        DURATION,
        unit="s",
        description="GenAI operation duration",
        explicit_bucket_boundaries_advisory=DURATION_BUCKETS,
    )
    _tokens = meter.create_histogram(
        TOKENS,
        unit="{token}",
        description="Number of input and output tokens used",
        explicit_bucket_boundaries_advisory=TOKEN_BUCKETS,
    )


def uninstall() -> None:
    global _duration, _tokens
    _duration = _tokens = None
    _shapes.clear()


def on() -> bool:
    return _duration is not None


@dataclass(frozen=True)
class Call:
    """What a model call was: the operation, the provider and the model as configured."""

    operation: str
    provider: str
    request_model: str


def model_call(
    call: Call,
    duration_s: float,
    *,
    error: str | None = None,
    response_model: str | None = None,
    input_tokens: int | None = None,
    output_tokens: int | None = None,
) -> None:
    """One finished model call: its duration (with ``error.type`` when it failed) and, when it
    answered, the tokens it used by type; both carry ``gen_ai.response.model`` when the
    provider named the model that answered. The attribute mappings of each (call, answer) are
    built once and reused."""
    duration, tokens = _duration, _tokens
    if duration is None or tokens is None:
        return
    failed = error is not None
    key = (call, error if failed else response_model, failed)
    shape = _shapes.get(key)
    if shape is None:
        shape = _shape(call, error, response_model)
        if len(_shapes) >= _SHAPES:
            _shapes.clear()
        _shapes[key] = shape
    timed, given, answered = shape
    duration.record(duration_s, timed)
    if failed:
        return
    if input_tokens is not None:
        tokens.record(input_tokens, given)
    if output_tokens is not None:
        tokens.record(output_tokens, answered)


def _shape(
    call: Call, error: str | None, response_model: str | None
) -> tuple[Mapping[str, str], ...]:
    provider = call.provider
    attributes: dict[str, str] = {
        "gen_ai.operation.name": call.operation,
        "gen_ai.provider.name": provider,
        "gen_ai.request.model": call.request_model,
    }
    if not _latest_genai:
        attributes["gen_ai.system"] = provider  # the deprecated name, as on the spans
    if error is not None:
        return ({**attributes, "error.type": error}, {}, {})
    if response_model:
        attributes["gen_ai.response.model"] = response_model
    return (
        attributes,
        {**attributes, "gen_ai.token.type": "input"},
        {**attributes, "gen_ai.token.type": "output"},
    )
