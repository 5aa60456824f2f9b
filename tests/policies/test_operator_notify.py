"""Operator notices: once per reason per window, counting what was held back."""

from __future__ import annotations

import pytest

from chatgate.model.reasons import FailureReason as F
from chatgate.policies.operator_notify import NotifyState, decide_notify, operator_text

EVERY = 600.0


@pytest.mark.parametrize(
    ("reason", "state", "now", "send", "after"),
    [(F.AUTH_EXPIRED, NotifyState(), 5.0, True, NotifyState(5.0, 0)),
     (F.AUTH_EXPIRED, NotifyState(5.0, 0), 100.0, False, NotifyState(5.0, 1)),
     (F.AUTH_EXPIRED, NotifyState(5.0, 3), 605.0, True, NotifyState(605.0, 0)),
     (F.CANCELLED, NotifyState(), 5.0, False, NotifyState()),  # the user's own /stop
     (F.TIMEOUT, NotifyState(0.0, 0), 599.0, False, NotifyState(0.0, 1))],
)  # fmt: skip
def test_decide_notify(
    reason: F, state: NotifyState, now: float, send: bool, after: NotifyState
) -> None:
    assert decide_notify(reason, state, now, EVERY) == (send, after)


def test_operator_text_counts_held_back_failures() -> None:
    text = operator_text(F.TIMEOUT, "The model took too long.", "telegram:42", "default", 3)
    assert "timeout" in text and "telegram:42" in text and "3 more" in text
    assert "more" not in operator_text(F.TIMEOUT, "x", "t:1", "default", 0)
