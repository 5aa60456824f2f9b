"""The dashboard's turn statistics: per-minute counts by reason and latency percentiles."""

from __future__ import annotations

import pytest

from chatgate.gateway.events import Event, EventName
from chatgate.gateway.turn_stats import BOUNDS, MINUTE_S, TurnStats, quantile

T0 = 1_700_000_000.0 - (1_700_000_000.0 % MINUTE_S)


def test_counts_by_reason_per_minute_over_the_window() -> None:
    stats = TurnStats(minutes=5)
    stats.record(T0 + 1, "text", 0.2)
    stats.record(T0 + 2, "text", 0.3)
    stats.record(T0 + 61, "timeout", 60.0)
    snap = stats.snapshot(T0 + 90)
    assert len(snap["minutes"]) == 5
    *_, before, last = snap["minutes"]
    assert before["at"] == T0 and before["turns"] == 2 and before["reasons"] == {"text": 2}
    assert last["reasons"] == {"timeout": 1}
    assert snap["reasons"] == {"text": 2, "timeout": 1} and snap["turns"] == 3
    assert snap["minutes"][0]["turns"] == 0 and snap["minutes"][0]["p50_s"] is None


def test_old_minutes_leave_the_window() -> None:
    stats = TurnStats(minutes=3)
    stats.record(T0, "text", 0.1)
    stats.record(T0 + 10 * MINUTE_S, "text", 0.1)  # evicts what is older than the window
    assert stats.snapshot(T0 + 10 * MINUTE_S)["turns"] == 1
    assert stats.snapshot(T0 + 2 * MINUTE_S)["turns"] == 0


@pytest.mark.parametrize(
    ("samples", "q", "expected"),
    [
        ([0.1] * 99 + [5.0], 0.5, 0.1),
        ([0.1] * 99 + [5.0], 0.99, 0.1),
        ([0.1] * 98 + [5.0] * 2, 0.99, 5.0),
        ([0.0], 0.5, 0.001),
    ],
)
def test_percentiles_are_exact_to_one_bucket(
    samples: list[float], q: float, expected: float
) -> None:
    stats = TurnStats()
    for latency in samples:
        stats.record(T0, "text", latency)
    got = stats.snapshot(T0)[f"p{round(q * 100)}_s"]
    assert expected <= got < expected * 1.25 + 1e-9


def test_quantile_of_nothing_and_of_the_overflow_bucket() -> None:
    assert quantile([0] * (len(BOUNDS) + 1), 0.5) is None
    overflow = [0] * len(BOUNDS) + [3]
    assert quantile(overflow, 0.99) == BOUNDS[-1]


def test_fed_by_turn_finished_events() -> None:
    stats = TurnStats()
    stats.on_event(Event(EventName.TURN_FINISHED, T0, {"reason": "rate_limit", "latency_s": 1.5}))
    stats.on_event(Event(EventName.TURN_FINISHED, T0, {}))
    assert stats.snapshot(T0)["reasons"] == {"rate_limit": 1, "unknown": 1}
