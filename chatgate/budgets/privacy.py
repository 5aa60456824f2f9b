"""A person's budget counters for `chatgate people` show, export and erase: their user counters
(every address of theirs) and the counters of their direct chats."""

from __future__ import annotations

from chatgate.budgets.store import BudgetStore
from chatgate.policies.budgets import NANO, split_key
from chatgate.state.personal import Erased, Footprint, Found


def scope_ids(footprint: Footprint) -> frozenset[str]:
    """The scope ids that are the person's alone: their addresses and their direct chats."""
    return frozenset({footprint.person.address, *footprint.also, *footprint.chats})


class BudgetCounters:
    name = "budget_counters"

    def __init__(self, store: BudgetStore) -> None:
        self.store = store

    async def collect(self, footprint: Footprint) -> Found:
        theirs = scope_ids(footprint)
        records = []
        for key, usage in (await self.store.counters()).items():
            rule, scope, start = split_key(key)
            if scope in theirs:
                records.append(
                    {
                        "rule": rule,
                        "scope_id": scope,
                        "period_start": start,
                        "usd": usage.nano / NANO,
                        "tokens": usage.tokens,
                        "turns": usage.turns,
                    }
                )
        return Found(self.name, tuple(records))

    async def erase(self, footprint: Footprint, now: float) -> Erased:
        removed = 0
        for scope in sorted(scope_ids(footprint)):
            removed += await self.store.forget(scope)
        return Erased(self.name, removed=removed)
