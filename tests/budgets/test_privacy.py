"""`chatgate people` sees and erases a person's budget counters: their user counters (every
address of theirs) and their direct chats' counters, nobody else's."""

from __future__ import annotations

from pathlib import Path

from chatgate.budgets.personal import UsageCounters
from chatgate.budgets.store import Spent, SqliteBudgetStore
from chatgate.state.personal import Footprint, Person


async def test_a_person_s_counters_are_shown_and_erased(tmp_path: Path) -> None:
    store = SqliteBudgetStore(tmp_path / "b.db")
    await store.open()
    try:
        for key in (
            "daily|telegram:42|2026-12-06",
            "daily|slack:U42|2026-12-06",
            "per-chat|telegram:42|2026-12-06",
            "daily|telegram:7|2026-12-06",
        ):
            await store.settle("t", [key], Spent(1000, 10, 1), "default")
        person = Footprint(
            Person("telegram", "42"), chats=frozenset({"telegram:42"}), also=("slack:U42",)
        )
        part = UsageCounters(store)
        found = await part.collect(person)
        erased = await part.erase(person, 0.0)
        left = await store.counters()
    finally:
        await store.close()
    assert sorted(r["scope_id"] for r in found.records) == [
        "slack:U42",
        "telegram:42",
        "telegram:42",
    ]
    assert erased.removed == 3
    assert list(left) == ["daily|telegram:7|2026-12-06"]
