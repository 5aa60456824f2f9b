"""Failed turns: map a failure to what the chat user is told and what the operator needs.

Two audiences: the user sees a catalog text chosen by reason (``chatgate.texts``: no config
keys or operator commands); the operator detail (``detail``) names the key or command that
fixes it and goes to logs, status and the operator chat, or to the chat itself when
``failure_replies: verbose``. Texts are fixed per reason and never interpolate exception
text, so no provider detail or secret can leak. Only an operator-supplied hint and a
retry-after figure vary.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from email.utils import parsedate_to_datetime

from chatgate.model.reasons import FailureReason

_OPERATOR_CHECK = "run `chatgate config check`"

_TEXTS: dict[FailureReason, str] = {
    FailureReason.AUTH_EXPIRED: (
        "I can't answer right now: the model provider says the API key has expired. "
        "Next step for the operator: renew the key, update the agent's `api_key` (or "
        f"`api_key_file`) in gateway.yaml and {_OPERATOR_CHECK}."
    ),
    FailureReason.AUTH_PERMANENT: (
        "I can't answer: the model provider rejected the API key. "
        "Next step for the operator: check the agent's `api_key` (or `api_key_file`) and its "
        f"access to this model in gateway.yaml, then {_OPERATOR_CHECK}."
    ),
    FailureReason.MISSING_KEY: (
        "I can't answer yet: no API key is configured for the model. "
        "Next step for the operator: set the agent's `api_key` (or `api_key_file`) in "
        f"gateway.yaml and {_OPERATOR_CHECK}."
    ),
    FailureReason.RATE_LIMIT: (
        "The model provider is rate-limiting requests right now, so I couldn't answer. "
        "Next step: please try again in a minute."
    ),
    FailureReason.OVERLOADED: (
        "The model provider is overloaded at the moment, so I couldn't answer. "
        "Next step: please try again in a minute."
    ),
    FailureReason.TIMEOUT: (
        "The model took too long to answer, so I stopped waiting. "
        "Next step: please resend, or split the request into smaller parts."
    ),
    FailureReason.CONTEXT_OVERFLOW: (
        "This conversation has grown too long for the model. "
        "Next step: send /new to start a fresh conversation, or send a shorter message."
    ),
    FailureReason.MODEL_NOT_FOUND: (
        "I can't answer: the configured model doesn't exist or this API key can't use it. "
        "Next step for the operator: fix the agent's `model` in gateway.yaml and "
        f"{_OPERATOR_CHECK}."
    ),
    FailureReason.BUDGET_EXHAUSTED: (
        "I can't answer: a spend budget (`budgets:` in gateway.yaml) is used up for this user, "
        "chat, agent or channel until its period renews. Next step for the operator: "
        "`chatgate usage` shows the counters; raise the rule's limit or run "
        "`chatgate budgets reset SCOPE:ID`."
    ),
    FailureReason.PROVIDER_QUOTA: (
        "I can't answer: the model provider says this account has no quota or credit left "
        "(insufficient_quota). Next step for the operator: top up the provider account; "
        "chatgate tries the provider again on its own."
    ),
    FailureReason.CANCELLED: "That request was cancelled.",
    FailureReason.FORMAT_ERROR: (
        "The model provider rejected the request as invalid. "
        "Next step: rephrase and resend; if it keeps happening, the operator should check the "
        "gateway logs for this turn."
    ),
    FailureReason.UNAVAILABLE: (
        "I can't answer right now: a service I depend on is marked unavailable. "
        "Next step: please try again in a few minutes; if it persists, the operator should "
        "run `chatgate status` to see which dependency is degraded."
    ),
    FailureReason.MEMORY_PRESSURE: "I'm busy right now, please resend in a minute.",
    FailureReason.TOOL_LIMIT: (
        "I stopped: the request needed more tool steps than this agent may take in one turn. "
        "Next step: split the request into smaller parts; the operator can raise the agent's "
        "`tools.max_steps` in gateway.yaml."
    ),
    FailureReason.TOOL_TIMEOUT: (
        "I stopped: a tool took too long to answer. "
        "Next step: please try again; if it keeps happening, the operator should check the tool's "
        "server (`chatgate status`) or raise the agent's `tools.tool_timeout_s`."
    ),
    FailureReason.TOOL_BUDGET: (
        "I stopped: this request used up the token or time budget for tool work in one turn. "
        "Next step: ask for less at once; the operator can raise the agent's `tools.budget_tokens` "
        "or `tools.budget_s` in gateway.yaml."
    ),
    FailureReason.TOOL_FAILED: (
        "I stopped: a tool's server failed while I was using it. "
        "Next step: please try again in a minute (the server is restarted); if it persists, the "
        "operator should run `chatgate status` to see which tool server is down."
    ),
    FailureReason.UNKNOWN: (
        "Something went wrong while answering. "
        "Next step: please resend; if it keeps happening, the operator should check the "
        "gateway logs."
    ),
}

RETRYABLE_REASONS: frozenset[FailureReason] = frozenset(
    {
        FailureReason.RATE_LIMIT,
        FailureReason.OVERLOADED,
        FailureReason.TIMEOUT,
        FailureReason.UNAVAILABLE,
        FailureReason.MEMORY_PRESSURE,
    }
)

# Reasons whose "wait and retry" advice is replaced by a concrete figure when one is known.
_WAIT_REASONS = frozenset(
    {FailureReason.RATE_LIMIT, FailureReason.OVERLOADED, FailureReason.UNAVAILABLE}
)

_MAX_HINT_CHARS = 300


@dataclass(frozen=True)
class FailureReply:
    """A failed turn for both audiences: ``detail`` for the operator; the chat's text comes
    from the catalog by ``reason`` (``chatgate.texts``), naming ``wait_s`` when it is known."""

    detail: str
    reason: FailureReason
    retryable: bool
    wait_s: float | None = None


def _format_wait(seconds: float) -> str:
    whole = max(1, math.ceil(seconds))
    if whole < 120:
        return f"about {whole} s"
    return f"about {math.ceil(whole / 60)} min"


def _clean_hint(hint: str | None) -> str:
    if hint is None:
        return ""
    text = " ".join(hint.split())
    if len(text) > _MAX_HINT_CHARS:
        text = text[: _MAX_HINT_CHARS - 1].rstrip() + "…"
    if text and text[-1].isalnum():
        text += "."
    return text


def failure_reply(
    reason: FailureReason, *, hint: str | None = None, retry_after_s: float | None = None
) -> FailureReply:
    """Build the reply for ``reason``; ``hint`` is an operator's next step (detail only)."""
    text = _TEXTS.get(reason, _TEXTS[FailureReason.UNKNOWN])
    wait: float | None = None
    if (
        reason in _WAIT_REASONS
        and retry_after_s is not None
        and math.isfinite(retry_after_s)
        and retry_after_s > 0
    ):
        head = text.split(" Next step:", 1)[0]
        text = f"{head} Next step: please try again in {_format_wait(retry_after_s)}."
        wait = retry_after_s
    extra = _clean_hint(hint)
    if extra:  # a specific hint replaces the generic next step
        text = f"{text.split(' Next step', 1)[0]} Next step: {extra}"
    return FailureReply(
        detail=text,
        reason=reason,
        retryable=reason in RETRYABLE_REASONS,
        wait_s=wait,
    )


_CONTEXT_PATTERNS = (
    "context length",
    "context_length",
    "context window",
    "maximum context",
    "too many tokens",
    "prompt is too long",
    "input is too long",
    "reduce the length",
)
_BAD_KEY_PATTERNS = ("api key not valid", "invalid api key", "invalid_api_key", "incorrect api key")
_BILLING_PATTERNS = ("insufficient_quota", "insufficient quota", "billing", "credit balance")
_TIMEOUT_PATTERNS = ("timed out", "timeout")
_RATE_PATTERNS = ("rate limit", "rate_limit", "too many requests")
_UNAVAILABLE_PATTERNS = ("connection refused", "connection reset", "name resolution")


def _mentions(message: str, patterns: tuple[str, ...]) -> bool:
    return any(p in message for p in patterns)


def _reason_from_message(message: str) -> FailureReason:
    if _mentions(message, _CONTEXT_PATTERNS):
        return FailureReason.CONTEXT_OVERFLOW
    if _mentions(message, _BILLING_PATTERNS):
        return FailureReason.PROVIDER_QUOTA
    if _mentions(message, _RATE_PATTERNS):
        return FailureReason.RATE_LIMIT
    if _mentions(message, _TIMEOUT_PATTERNS):
        return FailureReason.TIMEOUT
    if _mentions(message, _BAD_KEY_PATTERNS):
        return FailureReason.AUTH_PERMANENT
    if _mentions(message, _UNAVAILABLE_PATTERNS):
        return FailureReason.UNAVAILABLE
    return FailureReason.UNKNOWN


_STATUS_REASONS: dict[int, FailureReason] = {
    402: FailureReason.PROVIDER_QUOTA,
    403: FailureReason.AUTH_PERMANENT,
    404: FailureReason.MODEL_NOT_FOUND,
    408: FailureReason.TIMEOUT,
    413: FailureReason.CONTEXT_OVERFLOW,
    422: FailureReason.FORMAT_ERROR,
}


def reason_from_status(status: int | None, message: str = "") -> FailureReason:
    """Classify a provider failure from its HTTP status, refined by generic message text."""
    text = message.lower()
    if status is None:
        return _reason_from_message(text)
    if status == 401:
        return FailureReason.AUTH_EXPIRED if "expired" in text else FailureReason.AUTH_PERMANENT
    if status == 429:
        billing = _mentions(text, _BILLING_PATTERNS)
        return FailureReason.PROVIDER_QUOTA if billing else FailureReason.RATE_LIMIT
    if status == 400:
        if _mentions(text, _CONTEXT_PATTERNS):
            return FailureReason.CONTEXT_OVERFLOW
        if _mentions(text, _BAD_KEY_PATTERNS):
            return FailureReason.AUTH_PERMANENT
        return FailureReason.FORMAT_ERROR
    if status in _STATUS_REASONS:
        return _STATUS_REASONS[status]
    if 500 <= status < 600:
        return FailureReason.OVERLOADED
    return _reason_from_message(text)


def parse_retry_after(value: str | None, now: float) -> float | None:
    """Seconds to wait from an HTTP ``Retry-After`` (delta seconds or an HTTP date), if usable."""
    if not value or not value.strip():
        return None
    text = value.strip()
    try:
        seconds = float(text)
    except ValueError:
        try:
            seconds = parsedate_to_datetime(text).timestamp() - now
        except (TypeError, ValueError, IndexError, OverflowError):
            return None
    if not math.isfinite(seconds):
        return None
    return max(0.0, seconds)
