"""Memory pressure: shed new turns and pick warm session caches to drop before an OOM kill.

Evicted sessions are rebuilt from the session store on their next turn, so only caches that
are idle (no turn in flight) and flushed (transcript persisted) are ever named.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass


@dataclass(frozen=True)
class WarmSessionFacts:
    """A warm per-session cache as seen by the planner."""

    key: str
    last_activity: float
    in_flight: bool = False
    flushed: bool = True


@dataclass(frozen=True)
class MemorySample:
    """Resident memory and the container limit (None when the host can't tell)."""

    rss_bytes: int
    limit_bytes: int | None


def _finite(value: object) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool) and math.isfinite(value)


def pressure_ratio(sample: MemorySample) -> float | None:
    """rss / limit, or None when either number is unknown or nonsense."""
    rss, limit = sample.rss_bytes, sample.limit_bytes
    if limit is None or not _finite(rss) or not _finite(limit):
        return None
    if limit <= 0 or rss < 0:
        return None
    return rss / limit


def should_shed(sample: MemorySample, shed_ratio: float) -> bool:
    """Refuse new turns at or above ``shed_ratio``; never on unknown numbers."""
    ratio = pressure_ratio(sample)
    if ratio is None or not _finite(shed_ratio) or shed_ratio <= 0:
        return False
    return ratio >= shed_ratio


def _activity_order(session: WarmSessionFacts) -> tuple[float, str]:
    # An unknown (NaN) activity time sorts as coldest instead of breaking the ordering.
    when = session.last_activity
    return (-math.inf if math.isnan(when) else when, session.key)


def plan_evictions(
    sample: MemorySample, sessions: Sequence[WarmSessionFacts], headroom_ratio: float
) -> list[str]:
    """Keys to evict, coldest first, when rss is above ``headroom_ratio`` of the limit.

    Every evictable key is returned; the enactor evicts down the list and re-samples memory
    as it goes. A key listed more than once is protected if any entry is busy or unflushed.
    """
    ratio = pressure_ratio(sample)
    if ratio is None or not _finite(headroom_ratio) or headroom_ratio <= 0:
        return []
    if ratio <= headroom_ratio:
        return []
    protected = {s.key for s in sessions if s.in_flight or not s.flushed}
    chosen: dict[str, WarmSessionFacts] = {}
    for session in sessions:
        if session.key in protected:
            continue
        seen = chosen.get(session.key)
        if seen is None or _activity_order(session) > _activity_order(seen):
            chosen[session.key] = session
    return [s.key for s in sorted(chosen.values(), key=_activity_order)]
