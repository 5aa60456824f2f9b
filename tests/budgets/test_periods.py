"""Budget periods are calendar periods in the rule's zone."""

from __future__ import annotations

from datetime import datetime
from pathlib import Path
from types import SimpleNamespace
from zoneinfo import ZoneInfo

import pytest

from chatgate.budgets.periods import period_bounds
from chatgate.budgets.rules import Rules
from chatgate.policies.budgets import Who
from tests.harness import load, write_config


@pytest.mark.parametrize(
    ("period", "zone", "start", "end"),
    [
        ("day", "UTC", "2026-12-06T00:00", "2026-12-07T00:00"),
        ("day", "Asia/Tokyo", "2026-12-07T00:00", "2026-12-08T00:00"),
        ("week", "UTC", "2026-11-30T00:00", "2026-12-07T00:00"),
        ("month", "UTC", "2026-12-01T00:00", "2027-01-01T00:00"),
    ],
)
def test_calendar_periods(period: str, zone: str, start: str, end: str) -> None:
    now = datetime(2026, 12, 6, 21, 0, tzinfo=ZoneInfo("UTC")).timestamp()
    got = period_bounds(period, zone, now)
    assert [d.strftime("%Y-%m-%dT%H:%M") for d in got] == [start, end]


def test_a_turn_after_midnight_charges_the_new_day(tmp_path: Path) -> None:
    """The rules keep each period's bounds until it ends: the next day is a new counter."""
    loaded = load(
        write_config(
            tmp_path,
            """
budgets:
  - {name: daily, scope: user, limit_turns: 5, timezone: Europe/Paris}
channels:
  memory: {dm_policy: open}
""",
        )
    )
    rules = Rules(SimpleNamespace(loaded=loaded))
    who = Who("memory:ann", "memory:c", "default", "memory")
    midnight = datetime(2026, 12, 7, tzinfo=ZoneInfo("Europe/Paris")).timestamp()
    [(_, before, ends)] = rules.counters(who, midnight - 1)
    [(_, again, _)] = rules.counters(who, midnight - 0.5)
    [(_, after, _)] = rules.counters(who, midnight)
    assert before == again == "daily|memory:ann|2026-12-06" and ends == midnight
    assert after == "daily|memory:ann|2026-12-07"
