"""`chatgate people` sees and erases a person's budget counters: their user counters (every
address of theirs) and their direct chats' counters, nobody else's."""

from __future__ import annotations

from pathlib import Path

from chatgate.budgets.personal import UsageCounters
from chatgate.budgets.store import Spent, SqliteBudgetStore, refusal_flag
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


async def test_an_erase_forgets_the_person_s_group_refusal_flags(tmp_path: Path) -> None:
    """The once-an-hour refusal flag names the person and the group: an erase drops it (the
    next refusal in that group is told again), another person's stays."""
    store = SqliteBudgetStore(tmp_path / "b.db")
    await store.open()
    try:
        theirs = refusal_flag("telegram:42", "telegram:-100")
        other = refusal_flag("telegram:7", "telegram:-100")
        assert await store.once(theirs, 0.0, 3600.0) and await store.once(other, 0.0, 3600.0)
        erased = await UsageCounters(store).erase(Footprint(Person("telegram", "42")), 1.0)
        assert b"telegram:42" not in (tmp_path / "b.db").read_bytes()  # compacted away
        told_again = await store.once(theirs, 2.0, 3600.0)
        other_again = await store.once(other, 2.0, 3600.0)
    finally:
        await store.close()
    assert erased.removed == 1
    assert told_again and not other_again
