"""Errors every layer may raise or catch."""

from __future__ import annotations

from chatgate.model.reasons import MediaReason


class StateUnavailable(Exception):
    """A shared state backend cannot be reached. Raised where going on could break a guarantee
    (a turn lock that cannot be taken fails closed: the turn gets the `unavailable` reply; a
    submission that cannot be journaled is refused, so the platform redelivers it)."""


class GaveWay(Exception):
    """A turn waiting for its session's lock stepped back: an earlier message of the session
    was taken up from the journal meanwhile and goes first."""


class FetchError(Exception):
    """An attachment could not be fetched; ``detail`` is operator-safe (no token, no URL)."""

    def __init__(self, reason: MediaReason, detail: str = "") -> None:
        super().__init__(f"{reason.value}: {detail}" if detail else reason.value)
        self.reason = reason
        self.detail = detail
