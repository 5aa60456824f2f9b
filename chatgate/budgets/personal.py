"""A person's usage counters, for `chatgate people` show, export and erase: those kept for them
(user scope: every address of theirs and their principal) and for their direct chats (chat
scope). An erase removes them; the agent, channel and global counters keep the spend, so the
accounting still adds up."""

from __future__ import annotations

from collections.abc import Callable

from chatgate.budgets.store import BudgetStore
from chatgate.policies.budgets import NANO, split_key
from chatgate.state.personal import Erased, Footprint, Found


def _same(address: str) -> str:
    return address


class UsageCounters:
    name = "usage_counters"

    def __init__(self, store: BudgetStore, principal_of: Callable[[str], str] = _same) -> None:
        self.store = store
        self.principal_of = principal_of

    def scope_ids(self, footprint: Footprint) -> frozenset[str]:
        """The scope ids that are the person's alone: their addresses and their direct chats."""
        address = footprint.person.address
        return frozenset({address, self.principal_of(address), *footprint.also, *footprint.chats})

    async def collect(self, footprint: Footprint) -> Found:
        theirs = self.scope_ids(footprint)
        records = []
        for key, usage in sorted((await self.store.counters()).items()):
            rule, scope, start = split_key(key)
            if scope in theirs:
                records.append({"rule": rule, "scope_id": scope, "period_start": start,
                                "usd": usage.nano / NANO, "tokens": usage.tokens,
                                "turns": usage.turns})  # fmt: skip
        return Found(self.name, tuple(records))

    async def erase(self, footprint: Footprint, now: float) -> Erased:
        removed = 0
        for scope in sorted(self.scope_ids(footprint)):
            removed += await self.store.forget(scope)
            removed += await self.store.forget_flags(scope)  # "refused once an hour" in a group
        if removed:
            await self.store.compact()
        return Erased(self.name, removed=removed)
