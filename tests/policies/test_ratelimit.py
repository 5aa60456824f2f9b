"""Token buckets and the three-scope limiter."""

from __future__ import annotations

import math

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from chatgate.model.reasons import DropReason
from chatgate.policies.ratelimit import (
    BucketSpec,
    BucketState,
    RateDecision,
    RateLimiter,
    RateLimitSpec,
    take,
)

ONE_PER_S = BucketSpec(rate_per_s=1.0, burst=3)
TWO_PER_S = BucketSpec(rate_per_s=2.0, burst=2)
NO_REFILL = BucketSpec(rate_per_s=0.0, burst=1)

# (case id, spec, state, now, cost, allowed, tokens after, updated_at after, retry_after)
TAKE_CASES = [
    ("fresh-bucket-is-full", ONE_PER_S, None, 5.0, 1.0, True, 2.0, 5.0, 0.0),
    ("exact-last-token", ONE_PER_S, BucketState(1.0, 5.0), 5.0, 1.0, True, 0.0, 5.0, 0.0),
    ("empty-waits-for-refill", TWO_PER_S, BucketState(0.0, 0.0), 0.25, 1.0, False, 0.5, 0.25,
     0.25),
    ("refill-then-spend", TWO_PER_S, BucketState(0.0, 0.0), 0.5, 1.0, True, 0.0, 0.5, 0.0),
    ("refill-capped-at-burst", ONE_PER_S, BucketState(0.0, 0.0), 1000.0, 1.0, True, 2.0,
     1000.0, 0.0),
    ("no-refill-never", NO_REFILL, BucketState(0.0, 0.0), 1e9, 1.0, False, 0.0, 1e9, math.inf),
    ("cost-above-burst", ONE_PER_S, None, 0.0, 4.0, False, 3.0, 0.0, math.inf),
    ("multi-token-cost", ONE_PER_S, BucketState(1.0, 0.0), 0.0, 2.0, False, 1.0, 0.0, 1.0),
    ("zero-cost-always", NO_REFILL, BucketState(0.0, 0.0), 0.0, 0.0, True, 0.0, 0.0, 0.0),
    ("clock-backwards-adds-nothing", ONE_PER_S, BucketState(0.0, 100.0), 50.0, 1.0, False, 0.0,
     100.0, 1.0),
]  # fmt: skip


@pytest.mark.parametrize(
    ("spec", "state", "now", "cost", "allowed", "tokens", "updated_at", "retry_after"),
    [pytest.param(*case[1:], id=case[0]) for case in TAKE_CASES],
)
def test_take(
    spec: BucketSpec,
    state: BucketState | None,
    now: float,
    cost: float,
    allowed: bool,
    tokens: float,
    updated_at: float,
    retry_after: float,
) -> None:
    ok, new_state, wait = take(spec, state, now, cost)
    assert ok is allowed
    assert new_state.tokens == pytest.approx(tokens)
    assert new_state.updated_at == updated_at
    assert wait == pytest.approx(retry_after)


def test_clock_going_back_then_forward_is_not_credited_twice() -> None:
    _, state, _ = take(ONE_PER_S, BucketState(0.0, 100.0), 40.0)
    allowed, state, _ = take(ONE_PER_S, state, 100.5)
    assert not allowed
    assert state.tokens == pytest.approx(0.5)


@pytest.mark.parametrize("cost", [-1.0, math.nan, math.inf])
def test_take_rejects_bad_cost(cost: float) -> None:
    with pytest.raises(ValueError, match="cost"):
        take(ONE_PER_S, None, 0.0, cost)


@pytest.mark.parametrize(
    ("rate", "burst", "field"),
    [(-1.0, 1, "rate_per_s"), (math.nan, 1, "rate_per_s"), (math.inf, 1, "rate_per_s"),
     (1.0, 0, "burst"), (1.0, -3, "burst")],
)  # fmt: skip
def test_bucket_spec_validation(rate: float, burst: int, field: str) -> None:
    with pytest.raises(ValueError, match=field):
        BucketSpec(rate_per_s=rate, burst=burst)


@settings(max_examples=60)
@given(
    rate=st.floats(0.0, 50.0),
    burst=st.integers(1, 20),
    steps=st.lists(st.floats(-5.0, 10.0), min_size=1, max_size=60),
)
def test_bucket_never_admits_more_than_burst_plus_refill(
    rate: float, burst: int, steps: list[float]
) -> None:
    spec = BucketSpec(rate_per_s=rate, burst=burst)
    state: BucketState | None = None
    now = 1000.0
    first = latest = now + steps[0]
    admitted = 0
    for step in steps:
        now += step  # negative steps model a clock going backwards
        latest = max(latest, now)
        ok, state, wait = take(spec, state, now)
        admitted += ok
        assert (wait == 0.0) is ok
        assert 0.0 <= state.tokens <= burst
    assert admitted <= burst + rate * (latest - first) + 1e-6


def _limiter(**scopes: BucketSpec) -> RateLimiter:
    return RateLimiter(RateLimitSpec(**scopes))  # type: ignore[arg-type]


def _run(limiter: RateLimiter, messages: list[tuple[str, str, float]]) -> list[DropReason | None]:
    return [limiter.check(sender_key=s, chat_key=c, now=t).reason for s, c, t in messages]


GLOBAL, CHAT, SENDER = (
    DropReason.RATE_LIMITED_GLOBAL,
    DropReason.RATE_LIMITED_CHAT,
    DropReason.RATE_LIMITED_SENDER,
)
SEQUENCES = [
    ("no-limits", {}, [("a", "c", 0.0)] * 5, [None] * 5),
    ("sender", {"per_sender": BucketSpec(0.0, 2)},
     [("a", "c", 0.0), ("a", "c", 0.0), ("a", "c", 0.0), ("b", "c", 0.0)],
     [None, None, SENDER, None]),
    ("chat", {"per_chat": BucketSpec(0.0, 2)},
     [("a", "c1", 0.0), ("b", "c1", 0.0), ("c", "c1", 0.0), ("a", "c2", 0.0)],
     [None, None, CHAT, None]),
    ("global", {"global_": BucketSpec(0.0, 2)},
     [("a", "c1", 0.0), ("b", "c2", 0.0), ("c", "c3", 0.0)], [None, None, GLOBAL]),
    ("refusal-does-not-spend-earlier-scopes",
     {"global_": BucketSpec(0.0, 3), "per_sender": BucketSpec(0.0, 1)},
     [("a", "c", 0.0), ("a", "c", 0.0), ("a", "c", 0.0), ("b", "c", 0.0), ("d", "c", 0.0),
      ("e", "c", 0.0)],
     [None, SENDER, SENDER, None, None, GLOBAL]),
    ("global-reported-first", {"global_": BucketSpec(0.0, 1), "per_sender": BucketSpec(0.0, 1)},
     [("a", "c", 0.0), ("a", "c", 0.0)], [None, GLOBAL]),
    ("sender-refills", {"per_sender": BucketSpec(1.0, 1)},
     [("a", "c", 0.0), ("a", "c", 0.5), ("a", "c", 1.0)], [None, SENDER, None]),
]  # fmt: skip


@pytest.mark.parametrize(
    ("scopes", "messages", "expected"),
    [pytest.param(*case[1:], id=case[0]) for case in SEQUENCES],
)
def test_limiter_sequences(
    scopes: dict[str, BucketSpec],
    messages: list[tuple[str, str, float]],
    expected: list[DropReason | None],
) -> None:
    assert _run(_limiter(**scopes), messages) == expected


def test_refusal_reports_retry_after() -> None:
    limiter = _limiter(per_chat=BucketSpec(0.5, 1))
    assert limiter.check(sender_key="a", chat_key="c", now=0.0) == RateDecision(True, None)
    refused = limiter.check(sender_key="a", chat_key="c", now=1.0)
    assert refused == RateDecision(False, CHAT, pytest.approx(1.0))


def test_update_spec_keeps_levels() -> None:
    limiter = _limiter(per_sender=BucketSpec(0.0, 2))
    assert _run(limiter, [("a", "c", 0.0)] * 2) == [None, None]
    limiter.update_spec(RateLimitSpec(per_sender=BucketSpec(0.0, 10)))
    assert _run(limiter, [("a", "c", 1.0), ("b", "c", 1.0)]) == [SENDER, None]
    limiter.update_spec(RateLimitSpec(per_sender=BucketSpec(1.0, 10)), now=1.0)
    # Only the 0.5 s since the reload refills; the zero-rate time before it does not.
    assert _run(limiter, [("a", "c", 1.5), ("a", "c", 2.0), ("a", "c", 2.0)]) == [
        SENDER,
        None,
        SENDER,
    ]


def test_update_spec_without_now_credits_idle_time_at_new_rate() -> None:
    limiter = _limiter(per_sender=BucketSpec(0.0, 1))
    assert _run(limiter, [("a", "c", 0.0)]) == [None]
    limiter.update_spec(RateLimitSpec(per_sender=BucketSpec(1.0, 1)))
    assert _run(limiter, [("a", "c", 1.0)]) == [None]


def test_update_spec_shrinking_burst_clips_levels() -> None:
    limiter = _limiter(per_sender=BucketSpec(0.0, 5))
    assert _run(limiter, [("a", "c", 0.0)]) == [None]  # a now holds 4 tokens
    limiter.update_spec(RateLimitSpec(per_sender=BucketSpec(0.0, 1)))
    assert _run(limiter, [("a", "c", 0.0), ("a", "c", 0.0)]) == [None, SENDER]


def test_disabling_a_scope_forgets_its_buckets() -> None:
    limiter = _limiter(per_sender=BucketSpec(0.0, 1))
    assert _run(limiter, [("a", "c", 0.0)] * 2) == [None, SENDER]
    limiter.update_spec(RateLimitSpec())
    assert limiter.tracked_keys() == 0
    limiter.update_spec(RateLimitSpec(per_sender=BucketSpec(0.0, 1)))
    assert _run(limiter, [("a", "c", 0.0)]) == [None]


def test_memory_is_bounded() -> None:
    limiter = RateLimiter(
        RateLimitSpec(per_sender=BucketSpec(0.0, 1), per_chat=BucketSpec(0.0, 1)), max_keys=3
    )
    for i in range(50):
        limiter.check(sender_key=f"s{i}", chat_key=f"c{i}", now=float(i))
    assert limiter.tracked_keys() == 6


def test_eviction_prefers_full_buckets_over_lru() -> None:
    limiter = RateLimiter(RateLimitSpec(per_sender=BucketSpec(1.0, 2)), max_keys=2)
    # "a" is least recently used but still draining; "b" has refilled to full by t=1.15.
    assert _run(limiter, [("a", "c", 0.0), ("a", "c", 0.0), ("b", "c", 0.1)]) == [None] * 3
    assert _run(limiter, [("new", "c", 1.15)]) == [None]
    assert _run(limiter, [("a", "c", 1.15), ("a", "c", 1.15)]) == [None, SENDER]


def test_max_keys_must_be_positive() -> None:
    with pytest.raises(ValueError, match="max_keys"):
        RateLimiter(RateLimitSpec(), max_keys=0)
