"""Bursts: a user's quick run of messages (several lines sent apart, an album, a long paste the
platform split) becomes one turn when each arrives within the channel's debounce window. The
parts of an album (Telegram sends each photo as its own message, possibly in separate polls or
webhook requests) wait for one another even without a debounce window; in a group, an album
whose caption addresses the bot on a later part is one turn with the parts before it."""

from __future__ import annotations

from collections.abc import Sequence

ALBUM_WINDOW_S = 1.0  # Telegram delivers an album's parts within a few hundred milliseconds


def burst_size(senders: Sequence[str | None]) -> int:
    """How many leading waiting messages form the burst: the run from the first message's
    sender (None marks a message that is not a turn's input and ends the run)."""
    return _leading_run(senders)


def burst_wait(newest_at: float, now: float, window_s: float) -> float:
    """Seconds still to wait for more of a burst whose newest message arrived at ``newest_at``."""
    if window_s <= 0:
        return 0.0
    return max(0.0, newest_at + window_s - now)


def burst_window(debounce_s: float, album: bool) -> float:
    """How long a message waits for more of its burst: the channel's debounce window, or for an
    album part without one, the album window."""
    if debounce_s > 0 or not album:
        return max(0.0, debounce_s)
    return ALBUM_WINDOW_S


def album_run(albums: Sequence[str | None]) -> int:
    """How many leading waiting jobs are parts of the first one's album (0: it is none)."""
    return _leading_run(albums)


def album_turn(albums: Sequence[str | None], addressed: Sequence[bool]) -> int:
    """How many leading waiting jobs are one turn because they are parts of one album and one of
    them addresses the bot (the others were kept as context); 0 when none does."""
    size = album_run(albums)
    return size if any(addressed[:size]) else 0


def _leading_run(values: Sequence[str | None]) -> int:
    """How many leading values equal the first (0 when it is None)."""
    if not values or values[0] is None:
        return 0
    n = 1
    while n < len(values) and values[n] == values[0]:
        n += 1
    return n
