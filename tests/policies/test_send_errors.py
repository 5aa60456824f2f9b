"""Send-error classification and the retry decision."""

from __future__ import annotations

import math
import random

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from chatgate.model.reasons import SendErrorKind as K
from chatgate.policies.send_errors import (
    DEAD_TARGET_KINDS,
    GIVE_UP_MAX_ATTEMPTS,
    GIVE_UP_NON_RETRYABLE,
    GIVE_UP_RETRY_AFTER_TOO_LONG,
    GIVE_UP_UPLOAD_MAY_HAVE_ARRIVED,
    MAX_RETRY_AFTER_S,
    NON_RETRYABLE,
    RetryDecision,
    RetryPolicy,
    decide_retry,
    is_retryable,
)
from chatgate.policies.send_errors import classify_status as classify


@pytest.mark.parametrize(
    ("kind", "retryable", "dead"),
    [(K.RATE_LIMITED, True, False), (K.TARGET_NOT_FOUND, False, True), (K.FORBIDDEN, False, True),
     (K.AUTH_FATAL, False, False), (K.INVALID_REQUEST, False, False), (K.TRANSIENT, True, False),
     (K.UNKNOWN, True, False)],
)  # fmt: skip
def test_kind_sets(kind: K, retryable: bool, dead: bool) -> None:
    assert is_retryable(kind) is retryable
    assert (kind in NON_RETRYABLE) is not retryable
    assert (kind in DEAD_TARGET_KINDS) is dead


STATUS_CASES = [
    (429, "", K.RATE_LIMITED),
    (401, "", K.AUTH_FATAL),
    (403, "Forbidden: bot was blocked by the user", K.FORBIDDEN),
    (404, "", K.TARGET_NOT_FOUND),
    (410, "", K.TARGET_NOT_FOUND),
    (400, "Bad Request: message text is empty", K.INVALID_REQUEST),
    (400, "Bad Request: chat not found", K.TARGET_NOT_FOUND),
    (400, "Bad Request: not enough rights to send text messages", K.FORBIDDEN),
    (400, "Too Many Requests", K.INVALID_REQUEST),
    (408, "", K.TRANSIENT),
    (500, "", K.TRANSIENT),
    (502, "Bad Gateway", K.TRANSIENT),
    (503, "", K.TRANSIENT),
    (599, "", K.TRANSIENT),
    (409, "Conflict: terminated by other getUpdates request", K.UNKNOWN),
    (200, "ratelimited", K.RATE_LIMITED),
    (200, "channel_not_found", K.TARGET_NOT_FOUND),
    (200, "not_in_channel", K.FORBIDDEN),
    (200, "invalid_auth", K.AUTH_FATAL),
    (200, "is_archived", K.TARGET_NOT_FOUND),
    (None, "429 Too Many Requests", K.RATE_LIMITED),
    (None, "Flood control exceeded", K.RATE_LIMITED),
    (None, "Chat not found", K.TARGET_NOT_FOUND),
    (None, "user is deactivated", K.TARGET_NOT_FOUND),
    (None, "Unauthorized", K.AUTH_FATAL),
    (None, "token_revoked", K.AUTH_FATAL),
    (None, "bot was kicked from the group chat", K.FORBIDDEN),
    (None, "Missing Permissions", K.FORBIDDEN),
    (None, "Connection reset by peer", K.TRANSIENT),
    (None, "Read timed out", K.TRANSIENT),
    (None, "Service Unavailable", K.TRANSIENT),
    (None, "", K.UNKNOWN),
    (None, "something strange", K.UNKNOWN),
]


@pytest.mark.parametrize(("status", "text", "kind"), STATUS_CASES)
def test_classify_status(status: int | None, text: str, kind: K) -> None:
    assert classify(status, text) is kind


NO_JITTER = RetryPolicy(max_attempts=5, base_delay_s=0.5, max_delay_s=30.0, jitter=0.0)

# (case id, kind, attempt, policy, retry_after, expected decision)
RETRY_CASES = [
    ("forbidden-dead", K.FORBIDDEN, 1, NO_JITTER, None,
     RetryDecision(False, 0.0, True, GIVE_UP_NON_RETRYABLE)),
    ("not-found-dead", K.TARGET_NOT_FOUND, 1, NO_JITTER, None,
     RetryDecision(False, 0.0, True, GIVE_UP_NON_RETRYABLE)),
    ("auth-not-dead", K.AUTH_FATAL, 1, NO_JITTER, None,
     RetryDecision(False, 0.0, False, GIVE_UP_NON_RETRYABLE)),
    ("invalid-not-dead", K.INVALID_REQUEST, 1, NO_JITTER, 3.0,
     RetryDecision(False, 0.0, False, GIVE_UP_NON_RETRYABLE)),
    ("transient-1", K.TRANSIENT, 1, NO_JITTER, None, RetryDecision(True, 0.5, False, None)),
    ("transient-2", K.TRANSIENT, 2, NO_JITTER, None, RetryDecision(True, 1.0, False, None)),
    ("transient-4", K.TRANSIENT, 4, NO_JITTER, None, RetryDecision(True, 4.0, False, None)),
    ("unknown-retried", K.UNKNOWN, 1, NO_JITTER, None, RetryDecision(True, 0.5, False, None)),
    ("attempt-0-treated-as-1", K.TRANSIENT, 0, NO_JITTER, None,
     RetryDecision(True, 0.5, False, None)),
    ("capped", K.TRANSIENT, 9, RetryPolicy(max_attempts=20, jitter=0.0), None,
     RetryDecision(True, 30.0, False, None)),
    ("huge-attempt-no-overflow", K.TRANSIENT, 10_000, RetryPolicy(max_attempts=10**6, jitter=0.0),
     None, RetryDecision(True, 30.0, False, None)),
    ("max-attempts", K.TRANSIENT, 5, NO_JITTER, None,
     RetryDecision(False, 0.0, False, GIVE_UP_MAX_ATTEMPTS)),
    ("single-attempt-policy", K.RATE_LIMITED, 1, RetryPolicy(max_attempts=1), 1.0,
     RetryDecision(False, 0.0, False, GIVE_UP_MAX_ATTEMPTS)),
    ("honours-retry-after", K.RATE_LIMITED, 1, NO_JITTER, 12.0,
     RetryDecision(True, 12.0, False, None)),
    ("retry-after-above-backoff-cap", K.RATE_LIMITED, 1, NO_JITTER, 120.0,
     RetryDecision(True, 120.0, False, None)),
    ("retry-after-at-limit", K.RATE_LIMITED, 1, NO_JITTER, MAX_RETRY_AFTER_S,
     RetryDecision(True, MAX_RETRY_AFTER_S, False, None)),
    ("retry-after-too-long", K.RATE_LIMITED, 1, NO_JITTER, MAX_RETRY_AFTER_S + 1,
     RetryDecision(False, 0.0, False, GIVE_UP_RETRY_AFTER_TOO_LONG)),
    ("backoff-longer-than-retry-after", K.RATE_LIMITED, 4, NO_JITTER, 1.0,
     RetryDecision(True, 4.0, False, None)),
    ("retry-after-on-transient", K.TRANSIENT, 1, NO_JITTER, 5.0,
     RetryDecision(True, 5.0, False, None)),
    ("rate-limited-no-hint", K.RATE_LIMITED, 2, NO_JITTER, None,
     RetryDecision(True, 1.0, False, None)),
    ("nan-retry-after-ignored", K.RATE_LIMITED, 1, NO_JITTER, math.nan,
     RetryDecision(True, 0.5, False, None)),
    ("negative-retry-after-ignored", K.RATE_LIMITED, 1, NO_JITTER, -4.0,
     RetryDecision(True, 0.5, False, None)),
]  # fmt: skip


@pytest.mark.parametrize(
    ("kind", "attempt", "policy", "retry_after", "expected"),
    [pytest.param(*case[1:], id=case[0]) for case in RETRY_CASES],
)
def test_decide_retry(
    kind: K, attempt: int, policy: RetryPolicy, retry_after: float | None, expected: RetryDecision
) -> None:
    assert decide_retry(kind, attempt, policy, retry_after, random.Random(0)) == expected


@pytest.mark.parametrize("kind", [K.TRANSIENT, K.UNKNOWN, K.RATE_LIMITED])
def test_an_upload_that_timed_out_is_never_repeated(kind: K) -> None:
    decision = decide_retry(kind, 1, NO_JITTER, 1.0, random.Random(0), upload_timed_out=True)
    assert decision == RetryDecision(False, 0.0, False, GIVE_UP_UPLOAD_MAY_HAVE_ARRIVED)


def test_jitter_spreads_delays_within_bounds() -> None:
    policy = RetryPolicy(base_delay_s=2.0, jitter=0.2)
    rng = random.Random(5)
    delays = {decide_retry(K.TRANSIENT, 1, policy, None, rng).delay_s for _ in range(50)}
    assert len(delays) > 10
    assert all(1.6 <= d <= 2.4 for d in delays)


@pytest.mark.parametrize(
    "kwargs",
    [{"max_attempts": 0}, {"base_delay_s": -1.0}, {"base_delay_s": math.inf},
     {"max_delay_s": 0.1}, {"jitter": -0.1}, {"jitter": 1.5}],
)  # fmt: skip
def test_retry_policy_validation(kwargs: dict[str, float]) -> None:
    with pytest.raises(ValueError):
        RetryPolicy(**kwargs)  # type: ignore[arg-type]


policies = st.builds(
    RetryPolicy,
    max_attempts=st.integers(1, 10),
    base_delay_s=st.floats(0.0, 5.0),
    max_delay_s=st.floats(5.0, 60.0),
    jitter=st.floats(0.0, 1.0),
)


@settings(max_examples=70)
@given(
    kind=st.sampled_from(list(K)),
    attempt=st.integers(-2, 12),
    policy=policies,
    retry_after=st.none() | st.floats(allow_nan=True, allow_infinity=True),
    seed=st.integers(0, 1000),
)
def test_retry_properties(
    kind: K, attempt: int, policy: RetryPolicy, retry_after: float | None, seed: int
) -> None:
    decision = decide_retry(kind, attempt, policy, retry_after, random.Random(seed))
    if kind in NON_RETRYABLE:
        assert not decision.retry
        assert decision.dead_target is (kind in DEAD_TARGET_KINDS)
        return
    assert not decision.dead_target
    if not decision.retry:
        assert decision.give_up_reason is not None
        return
    assert attempt < policy.max_attempts
    assert 0.0 <= decision.delay_s <= max(policy.max_delay_s, MAX_RETRY_AFTER_S)
    if retry_after is not None and retry_after > 0:
        assert decision.delay_s >= retry_after
