"""Calendar periods of budget counters: a day, an ISO week or a month in the rule's zone."""

from __future__ import annotations

from datetime import datetime, timedelta
from zoneinfo import ZoneInfo


def period_bounds(period: str, timezone: str, now: float) -> tuple[datetime, datetime]:
    """The calendar period holding ``now`` in ``timezone``: [start, end)."""
    zone = ZoneInfo(timezone)
    local = datetime.fromtimestamp(now, zone)
    day = local.replace(hour=0, minute=0, second=0, microsecond=0, tzinfo=None)
    if period == "week":  # ISO weeks: Monday first
        start = day - timedelta(days=day.weekday())
        end = start + timedelta(days=7)
    elif period == "month":
        start = day.replace(day=1)
        end = (start + timedelta(days=32)).replace(day=1)
    else:
        start, end = day, day + timedelta(days=1)
    # Wall-clock midnights read in the zone (a daylight-saving change moves the offset).
    return start.replace(tzinfo=zone), end.replace(tzinfo=zone)
