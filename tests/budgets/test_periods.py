"""Budget periods are calendar periods in the rule's zone."""

from __future__ import annotations

from datetime import datetime
from zoneinfo import ZoneInfo

import pytest

from chatgate.budgets.periods import period_bounds


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
