"""Megolm replay protection with a bound: the crypto store remembers each decrypted message's
(sender key, session, index) with its event id and time, so a homeserver cannot replay an old
index under a new event. Kept forever that index grows by one row per encrypted message.

`ReplayWindow` keeps it bounded: every `PRUNE_EVERY` new indices, those older than `MAX_AGE_MS`
before the newest message are dropped, then the oldest past `KEPT`. The time of the oldest
index still known is the horizon: an unknown index older than it may be a pruned one replayed,
so it is refused (the event is dropped as undecryptable), never decrypted a second time.
Times are the events' own (`origin_server_ts`, ms): no clock is read.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TypeVar

K = TypeVar("K")

MAX_AGE_MS = 14 * 86_400_000  # federation delivers within this; older unknown indices refused
KEPT = 100_000  # indices at most, whatever their age
PRUNE_EVERY = 500  # new indices between prunes


class ReplayWindow:
    def __init__(self) -> None:
        self.max_age_ms, self.kept, self.every = MAX_AGE_MS, KEPT, PRUNE_EVERY
        self.newest = 0
        self.horizon = 0  # unknown indices older than this are refused
        self._since = 0

    def loaded(self, count: int, oldest: int, newest: int) -> None:
        """The stored indices (at open). When the store is full, the oldest were dropped
        before: nothing older than the oldest kept is known."""
        if not count:
            return
        self.newest = max(self.newest, newest)
        self.horizon = max(self.horizon, self.newest - self.max_age_ms)
        if count >= self.kept:
            self.horizon = max(self.horizon, oldest)

    def refuses(self, timestamp: int) -> bool:
        return timestamp < self.horizon

    def added(self, timestamp: int) -> bool:
        """A new index was stored; whether a prune is due."""
        self.newest = max(self.newest, timestamp)
        self._since += 1
        if self._since < self.every:
            return False
        self._since = 0
        return True

    def plan(self, known: Mapping[K, int]) -> list[K]:
        """The indices to drop (by their time), moving the horizon past them."""
        cutoff = self.newest - self.max_age_ms
        self.horizon = max(self.horizon, cutoff)
        drop = [k for k, t in known.items() if t < cutoff]
        young = sorted(((k, t) for k, t in known.items() if t >= cutoff), key=lambda kt: kt[1])
        over = len(young) - self.kept
        if over > 0:
            drop += [k for k, _ in young[:over]]
            self.horizon = max(self.horizon, young[over - 1][1] + 1)
        return drop
