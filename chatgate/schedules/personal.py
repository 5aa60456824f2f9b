"""The jobs a person owns (asked for in chat), for `chatgate people`: shown with their run
history, exported, and removed on erase."""

from __future__ import annotations

from collections.abc import Callable

from chatgate.schedules.jobs import ScheduledJob
from chatgate.schedules.runner import Scheduler
from chatgate.state.personal import Erased, Footprint, Found

HISTORY = 100


class OwnedJobs:
    name = "jobs"

    def __init__(self, scheduler: Scheduler, principal_of: Callable[[str], str]) -> None:
        self.scheduler = scheduler
        self.principal_of = principal_of

    def _theirs(self, footprint: Footprint) -> list[ScheduledJob]:
        address = footprint.person.address
        owners = {address, self.principal_of(address)}
        return [j for j in self.scheduler.jobs() if j.owner in owners]

    async def collect(self, footprint: Footprint) -> Found:
        records = []
        for job in self._theirs(footprint):
            runs = await self.scheduler.store.runs(job.id, HISTORY)
            records.append({**job.to_dict(), "runs": [r.to_dict() for r in runs]})
        return Found(self.name, tuple(records))

    async def erase(self, footprint: Footprint, now: float) -> Erased:
        removed = 0
        for job in self._theirs(footprint):
            removed += await self.scheduler.remove(job.id)
        if removed:
            await self.scheduler.store.compact()
        return Erased(self.name, removed=removed)
