"""Settled model calls waiting to ride the budget store's next round trip.

A turn's settle would be a store round trip of its own; instead it is queued and written in
the same transaction (SQLite) or script call (Redis) as the store's next call, typically the next
turn's reservation, and on its own after ``SETTLE_DELAY_S`` when nothing else comes. Until it
is written the call's reservation (its estimate) stands in for its cost, so admission still
holds the room. The bound: a crash loses the charges of the calls settled in the last
``SETTLE_DELAY_S`` before it and not yet carried by a round trip (their reservations expire),
as does a Redis round trip that fails (SQLite rolls back and keeps them for the next one).
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Protocol

log = logging.getLogger("chatgate.budgets")
SETTLE_DELAY_S = 0.1  # the longest a settled call's charge waits for another round trip


@dataclass(frozen=True)
class Settle:
    """One settled call: its ticket, the counters it charges, what it cost, its agent."""

    ticket: str
    keys: tuple[str, ...]
    nano: int
    tokens: int
    turns: int
    averaged: bool
    agent: str


class Timer(Protocol):
    def cancel(self) -> None: ...


# Calls a function after a delay in seconds: the running loop's ``call_later`` (tests inject
# their own, to fire the write without waiting).
Later = Callable[[float, Callable[[], None]], Timer]


def _call_later(delay: float, fn: Callable[[], None]) -> Timer:
    return asyncio.get_running_loop().call_later(delay, fn)


class SettleQueue:
    def __init__(self, flush: Callable[[], Awaitable[None]], later: Later = _call_later) -> None:
        self._flush = flush
        self._later = later
        self.items: list[Settle] = []
        self._timer: Timer | None = None
        self._tasks: set[asyncio.Task[None]] = set()

    def add(self, item: Settle) -> None:
        self.items.append(item)
        if self._timer is None:
            self._timer = self._later(SETTLE_DELAY_S, self._due)

    def take(self) -> list[Settle]:
        """The queued settles, now the caller's to write (with its own round trip)."""
        items, self.items = self.items, []
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None
        return items

    def give_back(self, items: list[Settle]) -> None:
        """Settles whose write was rolled back: they ride the next round trip instead."""
        for item in reversed(items):
            self.items.insert(0, item)
        if self.items and self._timer is None:
            self._timer = self._later(SETTLE_DELAY_S, self._due)

    def _due(self) -> None:
        self._timer = None
        if self.items:
            task = asyncio.ensure_future(self._write())
            self._tasks.add(task)
            task.add_done_callback(self._tasks.discard)

    async def _write(self) -> None:
        try:
            await self._flush()
        except Exception as exc:  # the next round trip tries again (SQLite) or they are lost
            log.warning("budget charges not written", extra={"error": type(exc).__name__})

    async def drain(self) -> None:
        """Write what is queued now (the store closes)."""
        if self._tasks:
            await asyncio.gather(*self._tasks, return_exceptions=True)
        if self.items:
            await self._write()
