"""A span processor that keeps ended spans in a deque for an export thread of its own.

The SDK's `BatchSpanProcessor` takes a lock, checks its queue and may notify a condition for
every span that ends, on the event loop; this one appends the span to a deque (thread-safe
without a lock) and wakes the exporter only when a batch is full. The thread exports what has
gathered every ``delay_s`` or when woken, in batches of ``batch`` spans; a span that ends while
``queue`` spans are waiting is dropped (counted), as the SDK's processor does.
"""

from __future__ import annotations

import logging
import threading
from collections import deque
from collections.abc import Mapping
from typing import Any

from opentelemetry.sdk.trace import ReadableSpan, SpanProcessor
from opentelemetry.sdk.trace.export import SpanExporter, SpanExportResult

log = logging.getLogger("chatgate.telemetry")

BATCH = 512  # spans per export request (OTEL_BSP_MAX_EXPORT_BATCH_SIZE)
DELAY_S = 5.0  # between exports (OTEL_BSP_SCHEDULE_DELAY, in ms)


class DequeSpanProcessor(SpanProcessor):
    """Ended spans appended to a deque, exported in batches on this processor's thread."""

    def __init__(
        self, exporter: SpanExporter, *, queue: int, batch: int = BATCH, delay_s: float = DELAY_S
    ) -> None:
        self._exporter = exporter
        self._queue, self._batch, self._delay_s = queue, batch, delay_s
        self._ended: deque[ReadableSpan] = deque()
        self.dropped = 0
        self._wake = threading.Event()
        self._exporting = threading.Lock()  # one export at a time (the thread or a flush)
        self._stopped = False
        self._thread = threading.Thread(target=self._run, name="chatgate-span-export", daemon=True)
        self._thread.start()

    def on_end(self, span: ReadableSpan) -> None:
        ended = self._ended
        if len(ended) >= self._queue:
            self.dropped += 1
            return
        ended.append(span)  # a deque: appended here, taken from the other end by the thread
        if len(ended) == self._batch:
            self._wake.set()

    def _run(self) -> None:
        while not self._stopped:
            self._wake.wait(self._delay_s)
            self._wake.clear()
            self._drain()

    def _drain(self) -> bool:
        """Export everything gathered so far; False when a batch failed."""
        with self._exporting:
            ended, take = self._ended, self._ended.popleft
            sent = True
            left = len(ended)  # what has ended so far (spans ending meanwhile wait their turn)
            while left > 0:
                batch = min(left, self._batch)
                sent = self._export([take() for _ in range(batch)]) and sent
                left -= batch
            return sent

    def _export(self, spans: list[ReadableSpan]) -> bool:
        try:
            return self._exporter.export(spans) is SpanExportResult.SUCCESS
        except Exception as exc:  # the thread must go on: the next batch may get through
            log.warning("span export failed", extra={"error": type(exc).__name__})
            return False

    def force_flush(self, timeout_millis: int = 30000) -> bool:
        return self._drain()

    def shutdown(self) -> None:
        if self._stopped:
            return
        self._stopped = True
        self._wake.set()
        self._thread.join()
        self._drain()
        self._exporter.shutdown()


def from_env(exporter: SpanExporter, env: Mapping[str, str], queue: int | None) -> Any:
    """The processor with the OTEL_BSP_* settings the SDK's batch processor reads."""
    return DequeSpanProcessor(
        exporter,
        queue=queue or _int(env, "OTEL_BSP_MAX_QUEUE_SIZE", 2048),
        batch=_int(env, "OTEL_BSP_MAX_EXPORT_BATCH_SIZE", BATCH),
        delay_s=_int(env, "OTEL_BSP_SCHEDULE_DELAY", int(DELAY_S * 1000)) / 1000,
    )


def _int(env: Mapping[str, str], name: str, default: int) -> int:
    try:
        value = int(env.get(name, "").strip() or default)
    except ValueError:
        return default
    return value if value > 0 else default
