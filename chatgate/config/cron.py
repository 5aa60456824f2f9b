"""Cron timings in a named zone (croniter over zone-aware datetimes: DST gaps and repeats are
croniter's), and the timing of a job's config. croniter (and dateutil under it) is imported
when a schedule is checked or run, not by a gateway without schedules."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from zoneinfo import ZoneInfo


def valid_cron(expr: str) -> bool:
    from croniter import croniter

    return bool(croniter.is_valid(expr))


@dataclass(frozen=True, slots=True)
class Cron:
    expr: str
    tz: str = "UTC"

    def next_after(self, after: float) -> float | None:
        start = datetime.fromtimestamp(after, ZoneInfo(self.tz))
        from croniter import croniter

        return float(croniter(self.expr, start).get_next(float))

    def newest_first(self, after: float, until: float, limit: int) -> list[float]:
        if until <= after or limit <= 0:
            return []
        # get_prev is strictly before its start: start a hair after `until` so it counts.
        from croniter import croniter

        it = croniter(self.expr, datetime.fromtimestamp(until + 0.001, ZoneInfo(self.tz)))
        found: list[float] = []
        while len(found) < limit:
            instant = float(it.get_prev(float))
            if instant <= after:
                break
            found.append(instant)
        return found
