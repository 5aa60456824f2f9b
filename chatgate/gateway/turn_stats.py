"""Turns per minute by reason code, and reply latency p50/p99, over the last hour.

A ring of one-minute buckets fed by `turn_finished` events, so the dashboard can chart the
gateway's own recent history without Prometheus. Each minute keeps a fixed log-scale latency
histogram: memory stays bounded however busy the minute, and a percentile is exact to one bucket
(25 %). Pure bookkeeping: the caller passes the time in.
"""

from __future__ import annotations

import math
from bisect import bisect_left
from collections import Counter
from dataclasses import dataclass, field
from typing import Any

from chatgate.gateway.events import Event

MINUTE_S = 60
WINDOW_MINUTES = 60
FIRST_BOUND_S = 0.001
GROWTH = 1.25
BOUNDS = tuple(FIRST_BOUND_S * GROWTH**i for i in range(61))  # 1 ms … ~13 min


def quantile(histogram: list[int], q: float) -> float | None:
    """The upper bound of the bucket holding the ``q`` quantile (None for no samples)."""
    total = sum(histogram)
    if total == 0:
        return None
    rank = max(1, math.ceil(q * total))
    seen = 0
    for index, count in enumerate(histogram):
        seen += count
        if seen >= rank:
            return BOUNDS[min(index, len(BOUNDS) - 1)]
    return BOUNDS[-1]  # pragma: no cover - the loop always reaches the rank


@dataclass
class _Minute:
    reasons: Counter[str] = field(default_factory=Counter)
    latency: list[int] = field(default_factory=lambda: [0] * (len(BOUNDS) + 1))

    def add(self, reason: str, latency_s: float) -> None:
        self.reasons[reason] += 1
        self.latency[bisect_left(BOUNDS, max(0.0, latency_s))] += 1


class TurnStats:
    def __init__(self, minutes: int = WINDOW_MINUTES) -> None:
        self.minutes = minutes
        self._ring: dict[int, _Minute] = {}

    def record(self, at: float, reason: str, latency_s: float) -> None:
        minute = int(at // MINUTE_S)
        bucket = self._ring.get(minute)
        if bucket is None:
            bucket = self._ring[minute] = _Minute()
            horizon = minute - self.minutes
            for old in [m for m in self._ring if m <= horizon]:
                del self._ring[old]
        bucket.add(reason, latency_s)

    def on_event(self, event: Event) -> None:
        """The `turn_finished` subscriber."""
        latency = event.data.get("latency_s")
        reason = event.data.get("reason")
        self.record(event.at, str(reason or "unknown"), float(latency or 0.0))

    def snapshot(self, now: float) -> dict[str, Any]:
        """Every minute of the window, oldest first (empty ones too), plus the window's totals."""
        last = int(now // MINUTE_S)
        minutes = []
        overall = [0] * (len(BOUNDS) + 1)
        reasons: Counter[str] = Counter()
        for minute in range(last - self.minutes + 1, last + 1):
            bucket = self._ring.get(minute) or _Minute()
            overall = [a + b for a, b in zip(overall, bucket.latency, strict=True)]
            reasons.update(bucket.reasons)
            minutes.append(
                {
                    "at": minute * MINUTE_S,
                    "turns": sum(bucket.reasons.values()),
                    "reasons": dict(bucket.reasons),
                    "p50_s": quantile(bucket.latency, 0.5),
                    "p99_s": quantile(bucket.latency, 0.99),
                }
            )
        return {
            "window_minutes": self.minutes,
            "minutes": minutes,
            "reasons": dict(reasons.most_common()),
            "turns": sum(reasons.values()),
            "p50_s": quantile(overall, 0.5),
            "p99_s": quantile(overall, 0.99),
        }
