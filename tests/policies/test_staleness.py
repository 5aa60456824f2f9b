"""Stale backlog decisions: table-driven over age, threshold and action."""

from __future__ import annotations

import pytest

from chatgate.policies.staleness import StaleAction, StalePolicy, stale_action

NOW = 1_800_000_000.0
A = StaleAction


@pytest.mark.parametrize(
    ("age", "policy", "expected"),
    [(7200, StalePolicy(), A.ANSWER),  # no threshold: nothing is stale
     (59, StalePolicy(60), A.ANSWER), (60, StalePolicy(60), A.ANSWER),
     (61, StalePolicy(60), A.NOTICE), (61, StalePolicy(60, A.SKIP), A.SKIP),
     (86_400, StalePolicy(60, A.ANSWER), A.ANSWER),
     (-30, StalePolicy(60), A.ANSWER)],  # a clock ahead of ours: not stale
)  # fmt: skip
def test_stale_action(age: float, policy: StalePolicy, expected: StaleAction) -> None:
    assert stale_action(NOW - age, NOW, policy) is expected


def test_unknown_send_time_is_never_stale() -> None:
    assert stale_action(0.0, NOW, StalePolicy(1.0)) is A.ANSWER
