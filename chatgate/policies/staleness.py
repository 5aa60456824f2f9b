"""Stale backlog: a message that waited too long before it reached us (the gateway was down, a
platform replayed a long backlog) is answered, skipped, or answered with a short notice."""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum


class StaleAction(StrEnum):
    ANSWER = "answer"  # treat it as new
    SKIP = "skip"  # journal it, keep it as context, say nothing
    NOTICE = "notice"  # tell the user it came in while we were offline


@dataclass(frozen=True)
class StalePolicy:
    after_s: float | None = None  # None: no message is ever stale
    action: StaleAction = StaleAction.NOTICE


def stale_action(sent_at: float, now: float, policy: StalePolicy) -> StaleAction:
    """What to do with a message sent at ``sent_at`` (platform time; 0 = unknown) reaching
    intake at ``now``. Unknown or future timestamps are never stale."""
    if policy.after_s is None or sent_at <= 0:
        return StaleAction.ANSWER
    if now - sent_at <= policy.after_s:
        return StaleAction.ANSWER
    return policy.action
