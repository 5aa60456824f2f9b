"""Tracing as a feature: export is set up when the gateway opens and flushed when it closes."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Mapping
from typing import Any

from chatgate import __version__, genai_metrics, tracing
from chatgate.feature.base import Feature
from chatgate.feature.context import FeatureContext
from chatgate.telemetry.setup import SCHEMA_URL, ExportSettings, meters, provider, settings

log = logging.getLogger("chatgate.telemetry")


class Telemetry(Feature):
    name = "telemetry"

    def __init__(
        self, context: FeatureContext, env: Mapping[str, str], exporter: Any = None
    ) -> None:
        self.settings: ExportSettings | None = settings(
            context.config.telemetry, env, context.owner
        )
        self._env = env
        self._exporter = exporter  # tests: an in-memory exporter instead of OTLP/HTTP
        self._provider: Any = None
        self._meters: Any = None  # a MeterProvider while GenAI client metrics are exported
        self._secrets = context.loaded.secrets

    async def open(self) -> None:
        found = self.settings
        if found is None:
            return
        from opentelemetry.sdk.util.instrumentation import InstrumentationScope

        from chatgate.telemetry.own import OwnSpans

        self._provider, processor = provider(found, self._exporter, self._env)
        _share(self._provider)
        tracer = self._provider.get_tracer("chatgate", __version__, schema_url=SCHEMA_URL)
        scope = InstrumentationScope("chatgate", __version__, SCHEMA_URL)
        tracing.install(
            tracer,
            capture_content=found.capture_content,
            secrets=self._secrets,
            latest_genai=found.latest_genai,
            own=OwnSpans(processor.on_end, self._provider, scope),
        )
        self._meters = meters(found, self._env)
        if self._meters is not None:
            meter = self._meters.get_meter("chatgate", __version__, schema_url=SCHEMA_URL)
            genai_metrics.install(meter, latest_genai=found.latest_genai)
        log.info("exporting traces", extra={"endpoint": found.shown_endpoint})

    def flush(self) -> None:
        """Export the spans ended so far (blocking: call it off the event loop)."""
        if self._provider is not None:
            self._provider.force_flush()

    async def close(self) -> None:
        made, self._provider = self._provider, None
        measured, self._meters = self._meters, None
        if made is None:
            return
        tracing.uninstall()
        genai_metrics.uninstall()
        await asyncio.to_thread(made.shutdown)  # flushes the last batch over HTTP
        if measured is not None:
            await asyncio.to_thread(measured.shutdown)  # and the metrics since the last export

    async def status(self) -> Mapping[str, Any]:
        found = self.settings
        if found is None:
            return {"telemetry": {"export": False}}
        return {
            "telemetry": {
                "export": True,
                "endpoint": found.shown_endpoint,
                "capture_content": found.capture_content,
            }
        }


def _share(made: Any) -> None:
    """Make ``made`` the process's provider, so the spans the MCP SDK makes itself join the
    message's trace (the first gateway of a process sets it; it cannot be replaced)."""
    from opentelemetry import trace

    if isinstance(trace.get_tracer_provider(), trace.ProxyTracerProvider):
        trace.set_tracer_provider(made)
