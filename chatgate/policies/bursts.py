"""Bursts: a user's quick run of messages (several lines sent apart, an album, a long paste the
platform split) becomes one turn when each arrives within the channel's debounce window."""

from __future__ import annotations

from collections.abc import Sequence


def burst_size(senders: Sequence[str | None]) -> int:
    """How many leading waiting messages form the burst: the run from the first message's
    sender (None marks a message that is not a turn's input and ends the run)."""
    if not senders or senders[0] is None:
        return 0
    n = 1
    while n < len(senders) and senders[n] == senders[0]:
        n += 1
    return n


def burst_wait(newest_at: float, now: float, window_s: float) -> float:
    """Seconds still to wait for more of a burst whose newest message arrived at ``newest_at``."""
    if window_s <= 0:
        return 0.0
    return max(0.0, newest_at + window_s - now)
