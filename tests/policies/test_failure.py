"""Failure replies: every reason has actionable text; status codes map to reasons."""

from __future__ import annotations

import math

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from chatgate.model.reasons import FailureReason as F
from chatgate.policies.failure import (
    RETRYABLE_REASONS,
    FailureReply,
    failure_reply,
    parse_retry_after,
    reason_from_status,
)

# What each reply must mention (lower-case fragments): what happened, then the next step.
REPLY_FRAGMENTS = {
    F.AUTH_EXPIRED: ("expired", "next step", "api_key"),
    F.AUTH_PERMANENT: ("rejected", "next step", "chatgate config check"),
    F.MISSING_KEY: ("no api key is configured", "next step for the operator",
                    "`api_key` (or `api_key_file`) in gateway.yaml", "`chatgate config check`"),
    F.RATE_LIMIT: ("rate-limiting", "try again"),
    F.OVERLOADED: ("overloaded", "try again"),
    F.TIMEOUT: ("too long", "resend"),
    F.CONTEXT_OVERFLOW: ("too long", "/new", "fresh conversation"),
    F.MODEL_NOT_FOUND: ("model", "`model` in gateway.yaml"),
    F.BUDGET_EXHAUSTED: ("budget", "chatgate usage"),
    F.PROVIDER_QUOTA: ("quota", "top up"),
    F.CANCELLED: ("cancelled",),
    F.FORMAT_ERROR: ("invalid", "resend"),
    F.UNAVAILABLE: ("marked unavailable", "next step"),
    F.MEMORY_PRESSURE: ("busy right now", "resend in a minute"),
    F.TOOL_LIMIT: ("more tool steps", "next step", "`tools.max_steps`"),
    F.TOOL_TIMEOUT: ("tool took too long", "next step", "`tools.tool_timeout_s`"),
    F.TOOL_BUDGET: ("budget", "next step", "`tools.budget_tokens`"),
    F.TOOL_FAILED: ("server failed", "next step", "chatgate status"),
    F.UNKNOWN: ("went wrong", "resend"),
}  # fmt: skip


def test_every_reason_is_covered() -> None:
    assert set(REPLY_FRAGMENTS) == set(F)


@pytest.mark.parametrize(("reason", "fragments"), list(REPLY_FRAGMENTS.items()))
def test_reply_text(reason: F, fragments: tuple[str, ...]) -> None:
    reply = failure_reply(reason)
    for fragment in fragments:
        assert fragment in reply.detail.lower()
    assert reply.reason is reason


def test_cancelled_is_short() -> None:
    assert len(failure_reply(F.CANCELLED).detail) < 40


@pytest.mark.parametrize(
    ("reason", "retryable"),
    [(F.RATE_LIMIT, True), (F.OVERLOADED, True), (F.TIMEOUT, True), (F.UNAVAILABLE, True),
     (F.MEMORY_PRESSURE, True), (F.AUTH_EXPIRED, False), (F.AUTH_PERMANENT, False),
     (F.MISSING_KEY, False), (F.CONTEXT_OVERFLOW, False), (F.MODEL_NOT_FOUND, False),
     (F.BUDGET_EXHAUSTED, False), (F.PROVIDER_QUOTA, False), (F.CANCELLED, False), (F.FORMAT_ERROR, False),
     (F.UNKNOWN, False)],
)  # fmt: skip
def test_retryable(reason: F, retryable: bool) -> None:
    assert failure_reply(reason).retryable is retryable
    assert (reason in RETRYABLE_REASONS) is retryable


@pytest.mark.parametrize(
    ("reason", "retry_after", "fragment"),
    [(F.RATE_LIMIT, 7.0, "please try again in about 7 s."),
     (F.RATE_LIMIT, 0.2, "please try again in about 1 s."),
     (F.RATE_LIMIT, 12.1, "please try again in about 13 s."),
     (F.RATE_LIMIT, 600.0, "please try again in about 10 min."),
     (F.OVERLOADED, 30.0, "please try again in about 30 s."),
     (F.UNAVAILABLE, 45.0, "please try again in about 45 s.")],
)  # fmt: skip
def test_retry_after_is_shown(reason: F, retry_after: float, fragment: str) -> None:
    text = failure_reply(reason, retry_after_s=retry_after).detail
    assert text.endswith(fragment)
    assert text.count("Next step") == 1


@pytest.mark.parametrize("retry_after", [None, 0.0, -3.0, math.nan, math.inf])
def test_unusable_retry_after_keeps_default_text(retry_after: float | None) -> None:
    assert failure_reply(F.RATE_LIMIT, retry_after_s=retry_after) == failure_reply(F.RATE_LIMIT)


def test_retry_after_ignored_where_it_means_nothing() -> None:
    assert failure_reply(F.MISSING_KEY, retry_after_s=5) == failure_reply(F.MISSING_KEY)


@pytest.mark.parametrize(
    ("hint", "suffix"),
    [("Ask #ops to rotate the key", " Next step: Ask #ops to rotate the key."),
     ("  spaced\n  out  hint. ", " Next step: spaced out hint."),
     ("", ""), ("   ", ""), (None, "")],
)  # fmt: skip
def test_hint_replaces_the_generic_next_step(hint: str | None, suffix: str) -> None:
    base = failure_reply(F.AUTH_PERMANENT).detail
    head = base.split(" Next step", 1)[0]
    expected = head + suffix if suffix else base
    assert failure_reply(F.AUTH_PERMANENT, hint=hint).detail == expected
    assert expected.count("Next step") == 1


def test_long_hint_is_capped() -> None:
    text = failure_reply(F.UNKNOWN, hint="x" * 5000).detail
    assert len(text) < len(failure_reply(F.UNKNOWN).detail) + 320
    assert text.endswith("…")


# (status, message, expected reason)
STATUS_CASES = [
    (401, "Incorrect API key provided", F.AUTH_PERMANENT),
    (401, "Your token has EXPIRED", F.AUTH_EXPIRED),
    (403, "", F.AUTH_PERMANENT),
    (404, "The model `gpt-9` does not exist", F.MODEL_NOT_FOUND),
    (408, "", F.TIMEOUT),
    (429, "Rate limit reached for requests", F.RATE_LIMIT),
    (429, "You exceeded your current quota, please check your plan and billing details",
     F.PROVIDER_QUOTA),
    (429, "insufficient_quota", F.PROVIDER_QUOTA),
    (400, "This model's maximum context length is 8192 tokens", F.CONTEXT_OVERFLOW),
    (400, "context_length_exceeded", F.CONTEXT_OVERFLOW),
    (400, "prompt is too long: 210000 tokens > 200000 maximum", F.CONTEXT_OVERFLOW),
    (400, "API key not valid. Please pass a valid API key.", F.AUTH_PERMANENT),
    (400, "Invalid value for 'temperature'", F.FORMAT_ERROR),
    (400, "", F.FORMAT_ERROR),
    (422, "unprocessable", F.FORMAT_ERROR),
    (402, "Payment required", F.PROVIDER_QUOTA),
    (413, "request_too_large", F.CONTEXT_OVERFLOW),
    (500, "", F.OVERLOADED),
    (502, "", F.OVERLOADED),
    (503, "", F.OVERLOADED),
    (504, "", F.OVERLOADED),
    (529, "Overloaded", F.OVERLOADED),
    (599, "", F.OVERLOADED),
    (409, "", F.UNKNOWN),
    (418, "request timed out", F.TIMEOUT),
    (None, "", F.UNKNOWN),
    (None, "Request timed out.", F.TIMEOUT),
    (None, "Too Many Requests", F.RATE_LIMIT),
    (None, "maximum context length exceeded", F.CONTEXT_OVERFLOW),
    (None, "Connection refused", F.UNAVAILABLE),
    (None, "invalid api key", F.AUTH_PERMANENT),
    (None, "something odd", F.UNKNOWN),
]  # fmt: skip


@pytest.mark.parametrize(("status", "message", "reason"), STATUS_CASES)
def test_reason_from_status(status: int | None, message: str, reason: F) -> None:
    assert reason_from_status(status, message) is reason


@settings(max_examples=50)
@given(
    reason=st.sampled_from(list(F)),
    hint=st.none() | st.text(max_size=80),
    retry_after=st.none() | st.floats(allow_nan=True, allow_infinity=True),
)
def test_reply_is_always_visible_and_bounded(
    reason: F, hint: str | None, retry_after: float | None
) -> None:
    reply = failure_reply(reason, hint=hint, retry_after_s=retry_after)
    assert isinstance(reply, FailureReply)
    assert reply.detail.strip()
    assert len(reply.detail) < 1000
    assert "\n" not in reply.detail


@settings(max_examples=50)
@given(status=st.none() | st.integers(-10, 1000), message=st.text(max_size=60))
def test_reason_from_status_is_total(status: int | None, message: str) -> None:
    assert reason_from_status(status, message) in set(F)


NOW = 1_700_000_000.0  # 2023-11-14T22:13:20Z


@pytest.mark.parametrize(
    ("header", "seconds"),
    [
        ("7", 7.0),
        (" 2.5 ", 2.5),
        ("0", 0.0),
        ("-3", 0.0),
        ("Tue, 14 Nov 2023 22:13:50 GMT", 30.0),
        ("Tue, 14 Nov 2023 22:13:00 GMT", 0.0),
        (None, None),
        ("", None),
        ("soon", None),
        ("nan", None),
        ("inf", None),
    ],
)
def test_retry_after_header_parsing(header: str | None, seconds: float | None) -> None:
    assert parse_retry_after(header, NOW) == seconds
