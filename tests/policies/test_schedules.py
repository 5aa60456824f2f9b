"""When jobs run: instants in a named zone across DST, and the misfire policies after downtime."""

from __future__ import annotations

from datetime import datetime
from zoneinfo import ZoneInfo

import pytest

from chatgate.config.cron import Cron
from chatgate.policies.schedules import (
    MAX_BACKLOG,
    Every,
    Misfire,
    Once,
    Plan,
    ScheduleReason,
    next_after,
    plan_runs,
)

BERLIN = ZoneInfo("Europe/Berlin")
HOUR = 3600.0
R = ScheduleReason


def at(*parts: int, zone: ZoneInfo = BERLIN) -> float:
    return datetime(*parts, tzinfo=zone).timestamp()


def local(ts: float) -> str:
    return datetime.fromtimestamp(ts, BERLIN).strftime("%m-%d %H:%M%z")


HOURLY = Cron("0 * * * *", "Europe/Berlin")
T0 = at(2026, 6, 1, 9, 0)  # an hourly instant


@pytest.mark.parametrize(
    ("misfire", "runs", "skipped"),
    [
        # Down from 09:00:30 to 12:00:30: 10:00, 11:00, 12:00 were missed (12:00 by 30 s: on time).
        (Misfire.SKIP, [(T0 + 3 * HOUR, R.DUE)], 2),
        (Misfire.RUN_ONCE, [(T0 + 3 * HOUR, R.DUE)], 2),
        (
            Misfire.RUN_ALL,
            [(T0 + HOUR, R.CATCH_UP), (T0 + 2 * HOUR, R.CATCH_UP), (T0 + 3 * HOUR, R.DUE)],
            0,
        ),
    ],
)
def test_three_hour_downtime_ending_on_an_instant(
    misfire: Misfire, runs: list[tuple[float, R]], skipped: int
) -> None:
    plan = plan_runs(HOURLY, T0, T0 + 3 * HOUR + 30, misfire=misfire, grace_s=60)
    assert plan == Plan(tuple(runs), skipped, T0 + 3 * HOUR, T0 + 4 * HOUR)


@pytest.mark.parametrize(
    ("misfire", "runs", "skipped"),
    [
        # Down from 09:00 to 12:30: 10:00, 11:00 and 12:00 are all older than the grace window.
        (Misfire.SKIP, [], 3),
        (Misfire.RUN_ONCE, [(T0 + 3 * HOUR, R.COLLAPSED)], 2),
        (
            Misfire.RUN_ALL,
            [(T0 + k * HOUR, R.CATCH_UP) for k in (1, 2, 3)],
            0,
        ),
    ],
)
def test_three_hour_downtime_between_instants(
    misfire: Misfire, runs: list[tuple[float, R]], skipped: int
) -> None:
    plan = plan_runs(HOURLY, T0, T0 + 3.5 * HOUR, misfire=misfire, grace_s=60)
    assert plan == Plan(tuple(runs), skipped, T0 + 3 * HOUR, T0 + 4 * HOUR)


def test_run_all_is_capped_and_keeps_the_newest() -> None:
    plan = plan_runs(HOURLY, T0, T0 + 10.5 * HOUR, misfire=Misfire.RUN_ALL, max_catch_up=3)
    assert [t for t, _ in plan.runs] == [T0 + k * HOUR for k in (8, 9, 10)]
    assert plan.skipped == 7


def test_nothing_due_keeps_the_cursor() -> None:
    plan = plan_runs(HOURLY, T0, T0 + 59 * 60)
    assert plan == Plan((), 0, T0, T0 + HOUR)


def test_clock_jumped_back_runs_nothing_and_waits_for_the_next_instant_after_the_cursor() -> None:
    plan = plan_runs(HOURLY, T0, T0 - 2 * HOUR)
    assert plan == Plan((), 0, T0, T0 + HOUR)


def test_interval_runs_on_the_grid_anchored_at_the_cursor() -> None:
    every = Every(600)
    assert plan_runs(every, 1000.0, 1599.0) == Plan((), 0, 1000.0, 1600.0)
    assert plan_runs(every, 1000.0, 1600.0) == Plan(((1600.0, R.DUE),), 0, 1600.0, 2200.0)
    late = plan_runs(every, 1000.0, 1000.0 + 3 * 600 + 30, grace_s=60, misfire=Misfire.SKIP)
    assert late == Plan(((2800.0, R.DUE),), 2, 2800.0, 3400.0)


@pytest.mark.parametrize(
    ("cursor", "now", "misfire", "runs"),
    [
        (0.0, 999.0, Misfire.SKIP, []),
        (0.0, 1000.0, Misfire.SKIP, [(1000.0, R.DUE)]),
        (0.0, 1000.0 + 5000, Misfire.SKIP, []),
        (0.0, 1000.0 + 5000, Misfire.RUN_ONCE, [(1000.0, R.COLLAPSED)]),
        (1000.0, 1000.0 + 5000, Misfire.RUN_ALL, []),  # already ran
    ],
)
def test_one_shot(cursor: float, now: float, misfire: Misfire, runs: list[tuple[float, R]]) -> None:
    plan = plan_runs(Once(1000.0), cursor, now, misfire=misfire, grace_s=60)
    assert list(plan.runs) == runs
    assert plan.next_at == (1000.0 if now < 1000.0 else None)


def test_daily_nine_oclock_stays_at_nine_local_across_both_dst_changes() -> None:
    daily = Cron("0 9 * * *", "Europe/Berlin")
    spring = [at(2026, 3, 27, 12)]
    for _ in range(3):
        spring.append(next_after(daily, spring[-1]) or 0.0)
    assert [local(t) for t in spring[1:]] == [
        "03-28 09:00+0100",
        "03-29 09:00+0200",
        "03-30 09:00+0200",
    ]
    assert spring[2] - spring[1] == 23 * HOUR  # the night lost an hour
    autumn = plan_runs(
        daily, at(2026, 10, 24, 12), at(2026, 10, 26, 9, 0, 30), misfire=Misfire.RUN_ALL
    )
    assert [local(t) for t, _ in autumn.runs] == ["10-25 09:00+0100", "10-26 09:00+0100"]


def test_hourly_across_the_autumn_change_runs_every_real_hour_once() -> None:
    start, end = at(2026, 10, 25, 0, 0), at(2026, 10, 25, 6, 0)
    plan = plan_runs(HOURLY, start, end, misfire=Misfire.RUN_ALL, grace_s=1e9)
    assert len(plan.runs) == 7  # 01, 02 (+02:00), 02 (+01:00), 03, 04, 05, 06: 7 real hours
    assert len({t for t, _ in plan.runs}) == 7


def test_spring_gap_instant_runs_once_when_the_clock_skips_it() -> None:
    gap = Cron("30 2 * * *", "Europe/Berlin")  # 02:30 does not exist on 2026-03-29
    first = next_after(gap, at(2026, 3, 28, 12))
    assert first is not None and local(first) == "03-29 03:00+0200"


def test_a_huge_backlog_is_bounded() -> None:
    plan = plan_runs(Every(1), 0.0, 10 * MAX_BACKLOG + 0.5, misfire=Misfire.RUN_ONCE, grace_s=0)
    assert plan.runs == ((10.0 * MAX_BACKLOG, R.COLLAPSED),)
    assert plan.cursor == 10 * MAX_BACKLOG
    assert plan.skipped == MAX_BACKLOG  # 999 seen + the rest counted once
