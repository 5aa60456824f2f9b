"""Memory-pressure shedding and the warm-session eviction planner."""

from __future__ import annotations

import math

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from chatgate.policies.memory import (
    MemorySample,
    WarmSessionFacts,
    plan_evictions,
    pressure_ratio,
    should_shed,
)

MB = 1024 * 1024


@pytest.mark.parametrize(
    ("rss", "limit", "ratio"),
    [(50 * MB, 100 * MB, 0.5), (0, 100, 0.0), (150, 100, 1.5), (10, None, None), (10, 0, None),
     (10, -5, None), (-1, 100, None), (10, math.inf, None), (math.nan, 100, None)],
)  # fmt: skip
def test_pressure_ratio(rss: int, limit: int | None, ratio: float | None) -> None:
    assert pressure_ratio(MemorySample(rss, limit)) == ratio


@pytest.mark.parametrize(
    ("rss", "limit", "shed_ratio", "shed"),
    [(95, 100, 0.95, True), (94, 100, 0.95, False), (200, 100, 0.95, True),
     (99, None, 0.5, False), (99, 100, math.nan, False), (99, 100, 0.0, False),
     (99, 100, -1.0, False)],
)  # fmt: skip
def test_should_shed(rss: int, limit: int | None, shed_ratio: float, shed: bool) -> None:
    assert should_shed(MemorySample(rss, limit), shed_ratio) is shed


def _s(key: str, at: float, *, busy: bool = False, flushed: bool = True) -> WarmSessionFacts:
    return WarmSessionFacts(key=key, last_activity=at, in_flight=busy, flushed=flushed)


SESSIONS = [
    _s("hot", 300.0),
    _s("busy", 10.0, busy=True),
    _s("dirty", 20.0, flushed=False),
    _s("cold", 50.0),
    _s("b-tie", 100.0),
    _s("a-tie", 100.0),
]
OVER = MemorySample(95, 100)

PLAN_CASES = [
    ("over-headroom", OVER, SESSIONS, 0.9, ["cold", "a-tie", "b-tie", "hot"]),
    ("within-headroom", MemorySample(90, 100), SESSIONS, 0.9, []),
    ("limit-unknown", MemorySample(95, None), SESSIONS, 0.9, []),
    ("limit-zero", MemorySample(95, 0), SESSIONS, 0.9, []),
    ("nan-headroom", OVER, SESSIONS, math.nan, []),
    ("zero-headroom", OVER, SESSIONS, 0.0, []),
    ("negative-headroom", OVER, SESSIONS, -0.5, []),
    ("nothing-evictable", OVER, [_s("busy", 1.0, busy=True), _s("dirty", 2.0, flushed=False)],
     0.9, []),
    ("no-sessions", OVER, [], 0.9, []),
    ("nan-activity-is-coldest", OVER, [_s("known", 5.0), _s("unknown", math.nan)], 0.9,
     ["unknown", "known"]),
    ("duplicate-key-protected-if-any-busy", OVER, [_s("k", 1.0), _s("k", 2.0, busy=True),
                                                    _s("z", 3.0)], 0.9, ["z"]),
    ("duplicate-key-listed-once", OVER, [_s("k", 1.0), _s("k", 9.0), _s("z", 5.0)], 0.9,
     ["z", "k"]),
]  # fmt: skip


@pytest.mark.parametrize(
    ("sample", "sessions", "headroom", "expected"),
    [pytest.param(*case[1:], id=case[0]) for case in PLAN_CASES],
)
def test_plan_evictions(
    sample: MemorySample, sessions: list[WarmSessionFacts], headroom: float, expected: list[str]
) -> None:
    assert plan_evictions(sample, sessions, headroom) == expected


sessions_st = st.lists(
    st.builds(
        WarmSessionFacts,
        key=st.text(alphabet="abcdef", min_size=1, max_size=3),
        last_activity=st.floats(0.0, 1e6),
        in_flight=st.booleans(),
        flushed=st.booleans(),
    ),
    max_size=30,
)


@settings(max_examples=60)
@given(
    sessions=sessions_st,
    rss=st.integers(0, 10**10),
    limit=st.none() | st.integers(-10, 10**10),
    headroom=st.floats(allow_nan=True, allow_infinity=True),
)
def test_planner_never_names_busy_or_unflushed_and_is_sorted(
    sessions: list[WarmSessionFacts], rss: int, limit: int | None, headroom: float
) -> None:
    plan = plan_evictions(MemorySample(rss, limit), sessions, headroom)
    protected = {s.key for s in sessions if s.in_flight or not s.flushed}
    assert not set(plan) & protected
    assert len(plan) == len(set(plan))
    newest = {}
    for s in sessions:
        newest[s.key] = max(newest.get(s.key, -math.inf), s.last_activity)
    order = [(newest[key], key) for key in plan]
    assert order == sorted(order)
    ratio = pressure_ratio(MemorySample(rss, limit))
    if plan:
        assert ratio is not None and ratio > headroom
    elif ratio is not None and math.isfinite(headroom) and 0 < headroom < ratio:
        assert {s.key for s in sessions} <= protected
