"""Operator notifications: a failed turn's operator detail, sent to the operator's own chat at
most once per reason per window, so a provider outage is one message, not one per user."""

from __future__ import annotations

from dataclasses import dataclass

from chatgate.model.reasons import FailureReason

DEFAULT_EVERY_S = 600.0
# Failures the user caused or chose: nothing for the operator to fix.
QUIET_REASONS = frozenset({FailureReason.CANCELLED})


@dataclass(frozen=True)
class NotifyState:
    """Per reason: when the operator was last told, and how many failures were held back."""

    last_at: float | None = None
    held_back: int = 0


def decide_notify(
    reason: FailureReason, state: NotifyState, now: float, every_s: float
) -> tuple[bool, NotifyState]:
    """Whether to message the operator now, and the reason's next state."""
    if reason in QUIET_REASONS:
        return False, state
    if state.last_at is not None and now - state.last_at < every_s:
        return False, NotifyState(state.last_at, state.held_back + 1)
    return True, NotifyState(now, 0)


def operator_text(
    reason: FailureReason, detail: str, where: str, agent: str, held_back: int
) -> str:
    """The message for the operator chat (config keys and commands are fine here)."""
    text = f"chatgate: a turn failed ({reason.value}) in {where}, agent '{agent}'.\n{detail}"
    if held_back:
        text += f"\n({held_back} more like this since the last notice.)"
    return text
