"""Outbound send failures: classify them once and decide whether and when to retry."""

from __future__ import annotations

import math
import random
from dataclasses import dataclass

from chatgate.model.reasons import SendErrorKind

NON_RETRYABLE: frozenset[SendErrorKind] = frozenset(
    {
        SendErrorKind.TARGET_NOT_FOUND,
        SendErrorKind.FORBIDDEN,
        SendErrorKind.AUTH_FATAL,
        SendErrorKind.INVALID_REQUEST,
        SendErrorKind.OUTSIDE_WINDOW,  # a retry cannot reopen it; a DLQ replay after the user writes
        SendErrorKind.NO_REFERENCE,  # likewise: replayable once the user writes to the bot
    }
)
DEAD_TARGET_KINDS: frozenset[SendErrorKind] = frozenset(
    {SendErrorKind.TARGET_NOT_FOUND, SendErrorKind.FORBIDDEN}
)

# A platform asking us to wait longer than this is treated as "give up", not "sleep".
MAX_RETRY_AFTER_S = 300.0

GIVE_UP_NON_RETRYABLE = "non_retryable"
GIVE_UP_MAX_ATTEMPTS = "max_attempts"
GIVE_UP_RETRY_AFTER_TOO_LONG = "retry_after_too_long"
GIVE_UP_UPLOAD_MAY_HAVE_ARRIVED = "upload_may_have_arrived"


def is_retryable(kind: SendErrorKind) -> bool:
    """Only provably permanent kinds are not retried; unknown failures are."""
    return kind not in NON_RETRYABLE


# Ordered: the first matching group wins. Lower-case substrings common across platforms.
_TEXT_PATTERNS: tuple[tuple[SendErrorKind, tuple[str, ...]], ...] = (
    (
        SendErrorKind.RATE_LIMITED,
        ("too many requests", "rate limit", "rate_limited", "ratelimited", "flood"),
    ),
    (
        SendErrorKind.TARGET_NOT_FOUND,
        (
            "chat not found",
            "channel not found",
            "channel_not_found",
            "unknown channel",
            "user not found",
            "peer_id_invalid",
            "user is deactivated",
            "group chat was deleted",
            "is_archived",
        ),
    ),
    (
        SendErrorKind.AUTH_FATAL,
        (
            "unauthorized",
            "invalid token",
            "invalid_auth",
            "token_revoked",
            "not_authed",
            "authentication failed",
        ),
    ),
    (
        SendErrorKind.FORBIDDEN,
        (
            "forbidden",
            "blocked",
            "kicked",
            "not enough rights",
            "no rights to send",
            "missing permissions",
            "not_in_channel",
        ),
    ),
    (
        SendErrorKind.TRANSIENT,
        (
            "timeout",
            "timed out",
            "temporarily unavailable",
            "service unavailable",
            "connection reset",
            "connection refused",
            "connection aborted",
            "bad gateway",
        ),
    ),
)

# A 400 that really says "this chat is gone / closed to us" (Telegram reports those as 400).
_DEAD_TARGET_ON_400 = (SendErrorKind.TARGET_NOT_FOUND, SendErrorKind.FORBIDDEN)


def _classify_text(text: str, kinds: tuple[SendErrorKind, ...] | None = None) -> SendErrorKind:
    lowered = text.lower()
    for kind, patterns in _TEXT_PATTERNS:
        if kinds is not None and kind not in kinds:
            continue
        if any(p in lowered for p in patterns):
            return kind
    return SendErrorKind.UNKNOWN


def classify_status(status: int | None, text: str = "") -> SendErrorKind:
    """Classify by HTTP status first, falling back to small generic text patterns."""
    if status == 429:
        return SendErrorKind.RATE_LIMITED
    if status == 401:
        return SendErrorKind.AUTH_FATAL
    if status == 403:
        return SendErrorKind.FORBIDDEN
    if status in (404, 410):
        return SendErrorKind.TARGET_NOT_FOUND
    if status == 400:
        refined = _classify_text(text, _DEAD_TARGET_ON_400)
        return SendErrorKind.INVALID_REQUEST if refined is SendErrorKind.UNKNOWN else refined
    if status is not None and (status == 408 or 500 <= status < 600):
        return SendErrorKind.TRANSIENT
    return _classify_text(text)


@dataclass(frozen=True)
class RetryPolicy:
    """Exponential backoff with a jitter fraction; ``max_attempts`` counts every attempt."""

    max_attempts: int = 5
    base_delay_s: float = 0.5
    max_delay_s: float = 30.0
    jitter: float = 0.2

    def __post_init__(self) -> None:
        if self.max_attempts < 1:
            raise ValueError(f"max_attempts must be >= 1, got {self.max_attempts!r}")
        if not (math.isfinite(self.base_delay_s) and self.base_delay_s >= 0):
            raise ValueError(f"base_delay_s must be finite and >= 0, got {self.base_delay_s!r}")
        if not (math.isfinite(self.max_delay_s) and self.max_delay_s >= self.base_delay_s):
            raise ValueError(f"max_delay_s must be finite, >= base_delay_s: {self.max_delay_s!r}")
        if not 0.0 <= self.jitter <= 1.0:
            raise ValueError(f"jitter must be within [0, 1], got {self.jitter!r}")


@dataclass(frozen=True)
class RetryDecision:
    """Whether to retry, after how long, and whether the target should be marked dead."""

    retry: bool
    delay_s: float
    dead_target: bool
    give_up_reason: str | None


def _give_up(reason: str, *, dead_target: bool = False) -> RetryDecision:
    return RetryDecision(retry=False, delay_s=0.0, dead_target=dead_target, give_up_reason=reason)


def backoff_delay_s(attempt: int, policy: RetryPolicy, rng: random.Random) -> float:
    """Jittered ``base * 2^(attempt-1)``, kept within [0, max_delay]."""
    exponent = min(max(attempt, 1) - 1, 64)
    nominal = min(policy.max_delay_s, policy.base_delay_s * 2.0**exponent)
    jittered = nominal * (1.0 + rng.uniform(-policy.jitter, policy.jitter))
    return min(policy.max_delay_s, max(0.0, jittered))


def decide_retry(
    kind: SendErrorKind,
    attempt: int,
    policy: RetryPolicy,
    retry_after_s: float | None,
    rng: random.Random,
    *,
    upload_timed_out: bool = False,
) -> RetryDecision:
    """Decide the next step after ``attempt`` failed attempts (1 after the first failure).

    A platform-supplied ``retry_after_s`` is a floor for the delay, never shortened by jitter;
    one above MAX_RETRY_AFTER_S gives up rather than parking the delivery for that long. An
    upload that timed out may have arrived (no platform lets us ask): it is not sent again.
    """
    if upload_timed_out:
        return _give_up(GIVE_UP_UPLOAD_MAY_HAVE_ARRIVED)
    if kind in NON_RETRYABLE:
        return _give_up(GIVE_UP_NON_RETRYABLE, dead_target=kind in DEAD_TARGET_KINDS)
    if attempt >= policy.max_attempts:
        return _give_up(GIVE_UP_MAX_ATTEMPTS)
    delay = backoff_delay_s(attempt, policy, rng)
    if retry_after_s is not None and not math.isnan(retry_after_s) and retry_after_s > 0:
        if retry_after_s > MAX_RETRY_AFTER_S:
            return _give_up(GIVE_UP_RETRY_AFTER_TOO_LONG)
        spread = retry_after_s * (1.0 + rng.uniform(0.0, policy.jitter))
        delay = max(delay, min(spread, MAX_RETRY_AFTER_S), retry_after_s)
    return RetryDecision(retry=True, delay_s=delay, dead_target=False, give_up_reason=None)
