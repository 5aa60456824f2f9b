"""When a scheduled job runs: which of its instants run now, and which missed instants run after
downtime (the misfire policy). Pure: the caller passes the job's timing, its cursor (the newest
instant already decided) and the current time; nothing here reads a clock.

Interval and one-shot timings are plain arithmetic here; cron timings (croniter over zone-aware
datetimes, DST gaps and repeats included) live in `chatgate.config.cron` and satisfy the
same `Timing` protocol.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from enum import StrEnum
from typing import Protocol

MAX_BACKLOG = 1000  # instants looked at per decision; older ones count as skipped
SCHEDULE_PLATFORM = "schedule"  # InboundMessage.platform of a scheduled run (no adapter has it)


class Misfire(StrEnum):
    """What happens to instants missed by more than the grace window (downtime)."""

    SKIP = "skip"  # none of them run
    RUN_ONCE = "run_once"  # the newest one runs, once, for the whole backlog
    RUN_ALL = "run_all"  # each runs, oldest first (at most `max_catch_up`)


class ScheduleReason(StrEnum):
    """Why a job ran, did not run, or was held back (history, metrics, status, logs)."""

    DUE = "due"  # on time (within the grace window)
    CATCH_UP = "catch_up"  # missed, run by `run_all`
    COLLAPSED = "misfire_collapsed"  # missed, the one run of `run_once`
    SKIPPED = "misfire_skipped"  # missed, not run (policy or the catch-up cap)
    RUN_NOW = "run_now"  # an operator asked for a run now
    DUPLICATE = "claimed_elsewhere"  # another replica (or an earlier start) already ran it
    PAUSED = "paused"
    FINISHED = "finished"  # a one-shot that has run
    TARGET_UNKNOWN = "target_unknown"  # deliver.to names no configured channel
    TARGET_DEAD = "target_dead"  # the target chat is marked dead (blocked, deleted)
    NOT_ADMITTED = "not_admitted"  # the run could not be journaled (state unavailable)


class Timing(Protocol):
    def next_after(self, after: float) -> float | None:
        """The first instant strictly after ``after`` (None: there is none)."""
        ...

    def newest_first(self, after: float, until: float, limit: int) -> list[float]:
        """Instants in (``after``, ``until``], newest first, at most ``limit`` of them."""
        ...


@dataclass(frozen=True, slots=True)
class Every:
    """Every ``seconds``, on the grid ``cursor + k * seconds`` (the cursor anchors the grid)."""

    seconds: float

    def next_after(self, after: float) -> float | None:
        return after + self.seconds

    def newest_first(self, after: float, until: float, limit: int) -> list[float]:
        if until <= after or limit <= 0:
            return []
        steps = math.floor((until - after) / self.seconds)
        return [after + k * self.seconds for k in range(steps, max(0, steps - limit), -1)]


@dataclass(frozen=True, slots=True)
class Once:
    at: float

    def next_after(self, after: float) -> float | None:
        return self.at if self.at > after else None

    def newest_first(self, after: float, until: float, limit: int) -> list[float]:
        return [self.at] if after < self.at <= until and limit > 0 else []


def next_after(timing: Timing, after: float) -> float | None:
    return timing.next_after(after)


@dataclass(frozen=True, slots=True)
class Plan:
    """What to do now: ``runs`` (instant, reason) oldest first, how many instants are skipped,
    the cursor to store (newest instant decided) and the next instant after that."""

    runs: tuple[tuple[float, ScheduleReason], ...]
    skipped: int
    cursor: float
    next_at: float | None


def plan_runs(
    timing: Timing,
    cursor: float,
    now: float,
    *,
    misfire: Misfire = Misfire.RUN_ONCE,
    grace_s: float = 60.0,
    max_catch_up: int = 24,
) -> Plan:
    """The runs due at ``now`` for a job whose instants up to ``cursor`` are already decided.

    An instant at most ``grace_s`` old is on time and runs; older ones were missed (downtime, a
    clock jump) and follow ``misfire``.
    """
    found = timing.newest_first(cursor, now, MAX_BACKLOG + 1)
    if not found:
        return Plan((), 0, cursor, timing.next_after(cursor))
    beyond = len(found) > MAX_BACKLOG  # even older instants exist: they count once, as one
    found = found[:MAX_BACKLOG]
    on_time = [t for t in found if now - t <= grace_s]
    missed = [t for t in found if now - t > grace_s]
    runs: list[tuple[float, ScheduleReason]] = [(t, ScheduleReason.DUE) for t in on_time]
    if misfire is Misfire.RUN_ALL:
        kept = missed[: max(0, max_catch_up - len(on_time))]
        runs += [(t, ScheduleReason.CATCH_UP) for t in kept]
    elif misfire is Misfire.RUN_ONCE and missed and not on_time:
        kept = missed[:1]
        runs.append((kept[0], ScheduleReason.COLLAPSED))
    else:
        kept = []
    skipped = len(missed) - len(kept) + (1 if beyond else 0)
    newest = found[0]
    return Plan(tuple(sorted(runs)), skipped, newest, timing.next_after(newest))
