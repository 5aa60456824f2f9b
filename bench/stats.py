"""Numbers: percentiles of one run, and median/min/max of a metric over repetitions."""

from __future__ import annotations

import math
import statistics
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

Better = Literal["higher", "lower"]


def percentile(values: Sequence[float], q: float) -> float:
    """Nearest-rank percentile (``q`` in 0..100); NaN for an empty sequence."""
    if not values:
        return math.nan
    ordered = sorted(values)
    rank = max(1, math.ceil(q / 100.0 * len(ordered)))
    return ordered[min(rank, len(ordered)) - 1]


def latency_ms(samples_s: Sequence[float]) -> tuple[float, float]:
    """(p50, p99) in milliseconds of latencies given in seconds."""
    return percentile(samples_s, 50) * 1000.0, percentile(samples_s, 99) * 1000.0


@dataclass(frozen=True)
class Spec:
    """What a metric is: its unit, which direction is good and the target, if any."""

    name: str
    label: str
    unit: str
    better: Better
    target: float | None = None

    def meets(self, value: float) -> bool | None:
        if self.target is None or math.isnan(value):
            return None
        return value >= self.target if self.better == "higher" else value <= self.target

    def target_text(self) -> str:
        if self.target is None:
            return ""
        sign = "≥" if self.better == "higher" else "≤"
        return f"{sign} {fmt(self.target)} {self.unit}"


@dataclass
class Samples:
    """One value per repetition."""

    values: list[float] = field(default_factory=list)

    def add(self, value: float) -> None:
        self.values.append(float(value))

    @property
    def median(self) -> float:
        finite = [v for v in self.values if not math.isnan(v)]
        return statistics.median(finite) if finite else math.nan

    def summary(self) -> dict[str, Any]:
        finite = [v for v in self.values if not math.isnan(v)]
        return {
            "samples": [_clean(v) for v in self.values],
            "median": _clean(self.median),
            "min": _clean(min(finite)) if finite else None,
            "max": _clean(max(finite)) if finite else None,
        }


@dataclass
class Row:
    """One metric of one scenario: chatgate's samples and (when it has one) the floor's."""

    spec: Spec
    chatgate: Samples = field(default_factory=Samples)
    floor: Samples | None = None

    @property
    def ratio(self) -> float | None:
        """chatgate median / floor median (read with ``better``: >1 is worse for "lower")."""
        if self.floor is None:
            return None
        top, bottom = self.chatgate.median, self.floor.median
        if math.isnan(top) or math.isnan(bottom) or bottom == 0:
            return None
        return top / bottom

    def to_json(self) -> dict[str, Any]:
        ratio = self.ratio
        return {
            "label": self.spec.label,
            "unit": self.spec.unit,
            "better": self.spec.better,
            "target": self.spec.target,
            "chatgate": self.chatgate.summary(),
            "floor": self.floor.summary() if self.floor is not None else None,
            "ratio": round(ratio, 3) if ratio is not None else None,
            "meets_target": self.spec.meets(self.chatgate.median),
        }


class Table:
    """The rows of one scenario, created on first use and kept in insertion order."""

    def __init__(self) -> None:
        self.rows: dict[str, Row] = {}

    def row(self, spec: Spec, *, floor: bool) -> Row:
        existing = self.rows.get(spec.name)
        if existing is None:
            existing = self.rows[spec.name] = Row(spec, floor=Samples() if floor else None)
        return existing

    def add(self, spec: Spec, chatgate: float, floor: float | None = None) -> None:
        row = self.row(spec, floor=floor is not None)
        row.chatgate.add(chatgate)
        if floor is not None and row.floor is not None:
            row.floor.add(floor)

    def to_json(self) -> dict[str, Any]:
        return {name: row.to_json() for name, row in self.rows.items()}


def fmt(value: float | None) -> str:
    """Compact human formatting: 3 significant digits, thousands separated."""
    if value is None or math.isnan(value):
        return "–"
    magnitude = abs(value)
    if value == int(value) and magnitude < 1e9:
        return f"{int(value):,}"
    if magnitude >= 1000:
        return f"{value:,.0f}"
    if magnitude >= 100:
        return f"{value:.0f}"
    if magnitude >= 10:
        return f"{value:.1f}"
    if magnitude >= 1:
        return f"{value:.2f}"
    return f"{value:.3f}"


def _clean(value: float) -> float | None:
    return None if math.isnan(value) else round(value, 6)
