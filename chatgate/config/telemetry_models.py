"""`telemetry:` in gateway.yaml: OpenTelemetry trace export (off unless an endpoint is given)."""

from __future__ import annotations

from pydantic import Field

from chatgate.config.base import StrictModel


class TelemetryConfig(StrictModel):
    otlp_endpoint: str | None = Field(
        default=None,
        pattern=r"^https?://\S+$",
        description="OTLP/HTTP base URL (as OTEL_EXPORTER_OTLP_ENDPOINT); unset: no export "
        "unless the OTEL_* environment asks for it",
    )
    capture_content: bool = Field(
        default=False,
        description="record message text, prompts, answers and tool arguments as span events",
    )
    sample_ratio: float = Field(
        default=1.0, ge=0.0, le=1.0, description="share of new traces recorded (parent-based)"
    )
