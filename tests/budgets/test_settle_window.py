"""The crash window of a queued settle, bounded: a settled call's charge is in the store's file
within `SETTLE_DELAY_S` (its own write when no other round trip carries it first); before that
a crash loses it (another process reads the spend without it once the reservation expires)."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from pathlib import Path

from chatgate.budgets.settling import SETTLE_DELAY_S
from chatgate.budgets.store import Spent, SqliteBudgetStore
from chatgate.policies.budgets import Charge, usd_to_nano

KEY = "money|telegram:1|2026-12-06"
COST = usd_to_nano(0.002)


class _Handle:
    def cancel(self) -> None:
        pass


class Timers:
    """An injected `Later`: records what is due and when, fired by the test."""

    def __init__(self) -> None:
        self.due: list[tuple[float, Callable[[], None]]] = []

    def __call__(self, delay: float, fn: Callable[[], None]) -> _Handle:
        self.due.append((delay, fn))
        return _Handle()

    async def fire(self) -> None:
        due, self.due = self.due, []
        for _, fn in due:
            fn()
        others = asyncio.all_tasks() - {asyncio.current_task()}
        if others:
            await asyncio.wait(others)  # the write the timer started


async def _spent(path: Path, now: float) -> int:
    """The spend another process (a restarted replica) reads from the file."""
    other = SqliteBudgetStore(path)
    await other.open()
    try:
        return (await other.read([KEY], now))[KEY].nano
    finally:
        await other.close()


async def test_a_settled_charge_is_written_within_the_settle_delay(tmp_path: Path) -> None:
    path, timers = tmp_path / "b.db", Timers()
    store = SqliteBudgetStore(path, later=timers)
    await store.open()
    try:
        charge = Charge(KEY, usd_to_nano(0.01), None, None, COST, 0, 1)
        assert await store.reserve("t1", [charge], 100.0, 200.0) is None
        await store.settle("t1", [KEY], Spent(COST, 10, 1), "default")
        assert [delay for delay, _ in timers.due] == [SETTLE_DELAY_S]
        # a crash now: the reservation expires and the charge is lost (the window)
        assert await _spent(path, 201.0) == 0
        await timers.fire()  # SETTLE_DELAY_S later, nothing else came: written on its own
        assert await _spent(path, 201.0) == COST
        assert timers.due == []
    finally:
        await store.close()
