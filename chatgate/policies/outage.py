"""When to speak about a failing dependency: once when it breaks, a reminder at most every
``remind_s`` while it stays down, once when it recovers; silence otherwise.

A background loop that retries every few seconds would otherwise log (and trace back) every
attempt: a 30 s Redis outage made 744 lines. This is the decision; `chatgate.state.outage` logs it.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from enum import StrEnum


class OutageEvent(StrEnum):
    BROKE = "broke"
    STILL_DOWN = "still_down"
    RECOVERED = "recovered"


@dataclass(frozen=True)
class OutageState:
    since: float | None = None  # when the current outage began; None: healthy
    failures: int = 0  # failed attempts in the current outage
    said_at: float = 0.0  # when the last line about it was logged

    @property
    def down(self) -> bool:
        return self.since is not None


def on_failure(
    state: OutageState, now: float, remind_s: float
) -> tuple[OutageState, OutageEvent | None]:
    if state.since is None:
        return OutageState(since=now, failures=1, said_at=now), OutageEvent.BROKE
    failed = replace(state, failures=state.failures + 1)
    if now - state.said_at >= remind_s:
        return replace(failed, said_at=now), OutageEvent.STILL_DOWN
    return failed, None


def on_success(state: OutageState) -> tuple[OutageState, OutageEvent | None]:
    if state.since is None:
        return state, None
    return OutageState(), OutageEvent.RECOVERED
