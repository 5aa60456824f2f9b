"""The SQLite budget store: admission is `spent + reserved + estimate <= limit` on every
counter at once, settlement charges what was reported, a crashed call's reservation expires."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

from chatgate.budgets.store import Spent, SqliteBudgetStore
from chatgate.policies.budgets import Charge, usd_to_nano

KEY = "money|telegram:1|2026-12-06"


def _charge(key: str = KEY, nano: int = usd_to_nano(0.002), turns: int = 1) -> Charge:
    return Charge(key, usd_to_nano(0.01), None, None, nano, 0, turns)


async def test_exactly_five_turns_of_0002_fit_under_001(tmp_path: Path) -> None:
    store = SqliteBudgetStore(tmp_path / "b.db")
    await store.open()
    try:
        admitted = 0
        for i in range(8):
            if await store.reserve(f"t{i}", [_charge()], 100.0, 200.0) is not None:
                break
            await store.settle(f"t{i}", [KEY], Spent(usd_to_nano(0.002), 10, 1), "default")
            admitted += 1
        assert admitted == 5
        usage = (await store.read([KEY], 100.0))[KEY]
        assert (usage.nano, usage.turns, usage.reserved_nano) == (usd_to_nano(0.01), 5, 0)
        assert (await store.average("default")).per_call() == (usd_to_nano(0.002), 10)
    finally:
        await store.close()


async def test_reservations_are_all_or_none_and_expire(tmp_path: Path) -> None:
    store = SqliteBudgetStore(tmp_path / "b.db")
    await store.open()
    try:
        other = "money|chat|2026-12-06"
        big = _charge(nano=usd_to_nano(0.006))
        assert (
            await store.reserve("a", [big, _charge(other, usd_to_nano(0.006))], 0.0, 10.0) is None
        )
        # the first counter has room for 0.004 more; the second refuses: nothing is reserved
        refused = await store.reserve(
            "b", [_charge(), _charge(other, usd_to_nano(0.005))], 1.0, 10.0
        )
        assert refused == other
        assert (await store.read([KEY], 1.0))[KEY].reserved_nano == usd_to_nano(0.006)
        # the holder of "a" crashed: its reservation expires at 10
        assert await store.reserve("c", [_charge(nano=usd_to_nano(0.01))], 11.0, 20.0) is None
    finally:
        await store.close()


async def test_concurrent_reservations_never_overbook(tmp_path: Path) -> None:
    store = SqliteBudgetStore(tmp_path / "b.db")
    await store.open()
    try:
        charge = Charge("turns|u|2026-12-06", None, None, 10, 0, 0, 1)
        results = await asyncio.gather(
            *(store.reserve(f"t{i}", [charge], 0.0, 100.0) for i in range(40))
        )
        assert results.count(None) == 10
    finally:
        await store.close()


async def test_forget_removes_a_scope_only(tmp_path: Path) -> None:
    store = SqliteBudgetStore(tmp_path / "b.db")
    await store.open()
    try:
        await store.settle("t", [KEY, "money|telegram:2|2026-12-06"], Spent(5, 5, 1), "default")
        assert await store.forget("telegram:1") == 1
        assert list(await store.counters()) == ["money|telegram:2|2026-12-06"]
    finally:
        await store.close()


async def test_a_settle_rides_the_next_round_trip_and_close_writes_it(tmp_path: Path) -> None:
    """A settled call's charge is written in the same transaction as the store's next call
    (before its reservation, so admission counts it); one left queued is written on close."""
    store = SqliteBudgetStore(tmp_path / "b.db")
    await store.open()
    transactions = 0
    call = store._db.call

    async def counted(fn: Any) -> Any:
        nonlocal transactions
        transactions += 1
        return await call(fn)

    store._db.call = counted  # type: ignore[method-assign]
    try:
        await store.reserve("t1", [_charge()], 100.0, 200.0)
        await store.settle("t1", [KEY], Spent(usd_to_nano(0.008), 10, 1), "default")
        asked = _charge(nano=usd_to_nano(0.004))
        refused, usage = await store.reserve_reading("t2", [asked], 100.0, 200.0)
        assert transactions == 2  # the settle went with the second reservation
        assert refused == KEY  # 0.008 spent: 0.004 more does not fit under 0.01
        assert usage[KEY].nano == usd_to_nano(0.008) and usage[KEY].reserved_nano == 0
        await store.settle("t3", [KEY], Spent(usd_to_nano(0.001), 5, 0), "default")
    finally:
        await store.close()
    reopened = SqliteBudgetStore(tmp_path / "b.db")
    await reopened.open()
    try:
        assert (await reopened.counters())[KEY].nano == usd_to_nano(0.009)
    finally:
        await reopened.close()
