"""Exit classification, restart backoff and budgets, and the fleet crash-loop breaker."""

from __future__ import annotations

import math
import random

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from chatgate.model.reasons import SendErrorKind as K
from chatgate.policies.supervision import (
    ExitClass,
    FleetBreaker,
    RestartBudget,
    backoff_delay,
    classify_exit,
)


@pytest.mark.parametrize(
    ("kind", "flags", "expected"),
    [(K.AUTH_FATAL, {}, ExitClass.FATAL),
     (None, {"config_error": True}, ExitClass.FATAL),
     (None, {"conflict": True}, ExitClass.FATAL),
     (K.AUTH_FATAL, {"clean": True}, ExitClass.FATAL),
     (None, {"clean": True}, ExitClass.CLEAN),
     (None, {}, ExitClass.TRANSIENT),
     (K.TRANSIENT, {}, ExitClass.TRANSIENT),
     (K.RATE_LIMITED, {}, ExitClass.TRANSIENT),
     (K.FORBIDDEN, {}, ExitClass.TRANSIENT),
     (K.UNKNOWN, {}, ExitClass.TRANSIENT)],
)  # fmt: skip
def test_classify_exit(kind: K | None, flags: dict[str, bool], expected: ExitClass) -> None:
    assert classify_exit(kind, **flags) is expected


@pytest.mark.parametrize(
    ("number", "base", "cap", "expected"),
    [(1, 1.0, 60.0, 1.0), (2, 1.0, 60.0, 2.0), (6, 1.0, 60.0, 32.0), (7, 1.0, 60.0, 60.0),
     (0, 1.0, 60.0, 1.0), (-3, 1.0, 60.0, 1.0), (5000, 1.0, 60.0, 60.0), (3, 0.0, 10.0, 0.0),
     (3, 5.0, 5.0, 5.0)],
)  # fmt: skip
def test_backoff_delay(number: int, base: float, cap: float, expected: float) -> None:
    assert backoff_delay(number, random.Random(0), base_s=base, cap_s=cap, jitter=0.0) == expected


@settings(max_examples=60)
@given(number=st.integers(1, 40), seed=st.integers(0, 10_000), jitter=st.floats(0.0, 1.0))
def test_backoff_delay_stays_in_band(number: int, seed: int, jitter: float) -> None:
    nominal = min(60.0, 2.0 ** (number - 1))
    delay = backoff_delay(number, random.Random(seed), jitter=jitter)
    assert nominal * (1 - jitter) - 1e-9 <= delay <= min(60.0, nominal * (1 + jitter)) + 1e-9


@pytest.mark.parametrize(
    "kwargs",
    [{"base_s": -1.0}, {"base_s": math.nan}, {"cap_s": 0.5}, {"jitter": 2.0}, {"jitter": -0.5}],
)
def test_backoff_delay_validation(kwargs: dict[str, float]) -> None:
    with pytest.raises(ValueError):
        backoff_delay(1, random.Random(0), **kwargs)


def test_restart_budget_window() -> None:
    budget = RestartBudget(max_per_hour=3, window_s=100.0)
    for t in (0.0, 10.0, 20.0):
        assert budget.allow(t)
        budget.record(t)
    assert not budget.allow(50.0)
    assert budget.count(50.0) == 3
    assert budget.count(100.0) == 2  # the restart at t=0 has left the window
    assert budget.allow(100.0)
    budget.reset()
    assert budget.count(100.0) == 0


def test_restart_budget_memory_is_bounded() -> None:
    budget = RestartBudget(max_per_hour=2)
    for t in range(1000):
        budget.record(float(t))
    assert budget.count(1000.0) == 2
    assert not budget.allow(1000.0)


@pytest.mark.parametrize(("limit", "window"), [(0, 3600.0), (3, 0.0), (3, -1.0), (3, math.inf)])
def test_restart_budget_validation(limit: int, window: float) -> None:
    with pytest.raises(ValueError):
        RestartBudget(limit, window)


@pytest.mark.parametrize(
    "kwargs",
    [{"restarts_per_hour": 0}, {"failing_fraction": 0.0}, {"failing_fraction": 1.2},
     {"cooldown_s": -1.0}, {"cooldown_s": math.nan}],
)  # fmt: skip
def test_fleet_breaker_validation(kwargs: dict[str, float]) -> None:
    with pytest.raises(ValueError):
        FleetBreaker(**kwargs)  # type: ignore[arg-type]


def test_breaker_trips_on_restart_rate_and_rearms_cleanly() -> None:
    breaker = FleetBreaker(restarts_per_hour=3, cooldown_s=120.0)
    assert [breaker.note_restart(t) for t in (0.0, 1.0)] == [False, False]
    assert breaker.note_restart(2.0)
    assert breaker.tripped_until() == 122.0
    assert breaker.tripped(121.9)
    assert breaker.note_restart(50.0)  # held, and not recorded
    assert not breaker.tripped(122.0)
    assert breaker.tripped_until() is None
    # History was cleared on re-arm: two more restarts do not trip again.
    assert [breaker.note_restart(t) for t in (123.0, 124.0)] == [False, False]
    assert breaker.note_restart(125.0)


def test_held_restarts_do_not_keep_breaker_stuck() -> None:
    breaker = FleetBreaker(restarts_per_hour=2, cooldown_s=10.0)
    breaker.note_restart(0.0)
    assert breaker.note_restart(1.0)
    for t in range(2, 11):
        assert breaker.note_restart(float(t))
    assert not breaker.note_restart(11.0)


def test_restart_rate_window_is_an_hour() -> None:
    breaker = FleetBreaker(restarts_per_hour=2)
    assert not breaker.note_restart(0.0)
    assert not breaker.note_restart(3600.0)
    assert breaker.note_restart(3601.0)


@pytest.mark.parametrize(
    ("failing", "total", "tripped"),
    [(5, 10, True), (4, 10, False), (10, 10, True), (0, 0, False), (3, 0, False),
     (-2, 4, False), (9, 4, True)],
)  # fmt: skip
def test_breaker_trips_on_failing_fraction(failing: int, total: int, tripped: bool) -> None:
    breaker = FleetBreaker(failing_fraction=0.5, cooldown_s=60.0)
    assert breaker.note_fleet_state(failing, total, 100.0) is tripped
    assert breaker.tripped(159.0) is tripped


def test_state_trip_is_not_extended_during_cooldown() -> None:
    breaker = FleetBreaker(cooldown_s=60.0)
    assert breaker.note_fleet_state(8, 10, 0.0)
    assert breaker.note_fleet_state(8, 10, 30.0)
    assert breaker.tripped_until() == 60.0
    assert not breaker.tripped(60.0)


def test_rearm_needs_a_restart_before_state_can_retrip() -> None:
    breaker = FleetBreaker(cooldown_s=60.0)
    assert breaker.note_fleet_state(8, 10, 0.0)
    # Channels held during the cooldown are still failing; that alone must not re-trip.
    assert not breaker.note_fleet_state(8, 10, 61.0)
    assert not breaker.note_restart(62.0)
    assert breaker.note_fleet_state(8, 10, 63.0)


def test_zero_cooldown_reports_trip_then_rearms() -> None:
    breaker = FleetBreaker(restarts_per_hour=1, cooldown_s=0.0)
    assert breaker.note_restart(5.0)
    assert not breaker.tripped(5.0)
    assert breaker.note_restart(6.0)


def test_reset_clears_trip_and_history() -> None:
    breaker = FleetBreaker(restarts_per_hour=2, cooldown_s=600.0)
    breaker.note_restart(0.0)
    assert breaker.note_restart(1.0)
    breaker.reset()
    assert not breaker.tripped(2.0)
    assert breaker.tripped_until() is None
    assert not breaker.note_restart(3.0)
