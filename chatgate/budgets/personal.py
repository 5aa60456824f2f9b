"""A person's usage counters, for `chatgate people`: those kept for them (user scope, by their
address or principal) and for their direct chats (chat scope). An erase removes them; the
agent, channel and global counters keep the spend, so the accounting still adds up."""

from __future__ import annotations

from collections.abc import Callable

from chatgate.budgets.store import BudgetStore
from chatgate.policies.budgets import split_key
from chatgate.state.personal import Erased, Footprint, Found


class UsageCounters:
    name = "usage_counters"

    def __init__(self, store: BudgetStore, principal_of: Callable[[str], str]) -> None:
        self.store = store
        self.principal_of = principal_of

    def _scopes(self, footprint: Footprint) -> set[str]:
        address = footprint.person.address
        return {address, self.principal_of(address), *footprint.chats}

    async def collect(self, footprint: Footprint) -> Found:
        scopes = self._scopes(footprint)
        records = []
        for key, usage in sorted((await self.store.counters()).items()):
            rule, scope, start = split_key(key)
            if scope in scopes:
                records.append({"rule": rule, "scope": scope, "period": start,
                                "turns": usage.turns, "tokens": usage.tokens,
                                "cost_nano_usd": usage.nano})  # fmt: skip
        return Found(self.name, tuple(records))

    async def erase(self, footprint: Footprint, now: float) -> Erased:
        removed = 0
        for scope in sorted(self._scopes(footprint)):
            removed += await self.store.forget(scope)
        if removed:
            await self.store.compact()
        return Erased(self.name, removed=removed)
