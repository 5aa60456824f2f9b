"""Privacy requests over every store: show, export and erase what is kept about one person.

The backend's footprint (read from the journal) says where the person's data sits; every part
(the backend's own stores, the protocol-level ones, each channel's and each feature's) then
collects or erases its share. Erasing runs the parts that find their data through the journal
first, the journal last, compacts the files, drops warm transcripts, and audits the request.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import AsyncGenerator, Awaitable, Callable, Collection, Sequence
from dataclasses import dataclass
from pathlib import Path

from chatgate.clock import Clock
from chatgate.media.outgoing import OutgoingFiles
from chatgate.model.reasons import PrivacyReason
from chatgate.people import archive
from chatgate.people.parts import protocol_parts
from chatgate.state.factory import State
from chatgate.state.personal import (
    AuditRecord,
    Erased,
    Footprint,
    Found,
    Person,
    PersonalData,
    PersonalStores,
)

log = logging.getLogger("chatgate.privacy")
Forget = Callable[[Collection[str]], Awaitable[None]]
Extra = Callable[[Person], Awaitable[Sequence[PersonalData]]]


class PrivacyUnsupported(Exception):
    """The state backend keeps no per-person index (it offers no `PersonalStores`)."""


@dataclass(frozen=True)
class Shown:
    footprint: Footprint
    found: tuple[Found, ...]


class PrivacyDesk:
    def __init__(
        self,
        state: State,
        clock: Clock,
        *,
        files: OutgoingFiles | None = None,
        extra: Extra | None = None,
        spill: Path | None = None,
        aliases: Callable[[Person], Sequence[Person]] | None = None,
        forget: Forget | None = None,
    ) -> None:
        self.state = state
        self.clock = clock
        self.files = files
        self.extra = extra
        self.spill = spill
        self.aliases = aliases
        self.forget = forget
        self._erasing = asyncio.Lock()

    @property
    def backend(self) -> PersonalStores:
        personal = self.state.stores.personal
        if personal is None:
            raise PrivacyUnsupported("this state backend cannot look people up")
        return personal

    async def parts(self, person: Person) -> list[PersonalData]:
        """Extra (channel, feature) parts first, then the protocol-level, then the backend's,
        whose journal goes last: the others find their data through it."""
        extra = await self.extra(person) if self.extra is not None else ()
        common = protocol_parts(self.state, self.files, self.spill)
        return [*extra, *common, *self.backend.parts()]

    def _people(self, person: Person) -> list[Person]:
        """The person and the other addresses configured as the same principal."""
        others = [p for p in (self.aliases(person) if self.aliases else ()) if p != person]
        return [person, *others]

    async def _gather(self, person: Person) -> tuple[Footprint, tuple[Found, ...]]:
        footprint, found = Footprint(person), dict[str, Found]()
        for one in self._people(person):
            theirs = await self.backend.footprint(one)
            footprint = footprint.union(theirs)
            for part in await self.parts(one):
                got = await part.collect(theirs)
                found[got.store] = found[got.store].union(got) if got.store in found else got
        return footprint, tuple(found.values())

    async def show(self, person: Person, by: str) -> Shown:
        footprint, found = await self._gather(person)
        await self._audit(PrivacyReason.SHOWN, person, by, {f.store: f.count for f in found})
        return Shown(footprint, found)

    async def export(self, person: Person, by: str) -> tuple[AsyncGenerator[bytes, None], Shown]:
        """The archive's bytes as they are made (audited as handed out before the first)."""
        footprint, found = await self._gather(person)
        chunks = archive.stream(footprint, found, self.clock.time())
        await self._audit(PrivacyReason.EXPORTED, person, by, {f.store: f.count for f in found})
        return chunks, Shown(footprint, found)

    async def erase(self, person: Person, by: str) -> tuple[Footprint, list[Erased]]:
        async with self._erasing:  # one at a time: each compacts the whole database
            footprint, done = Footprint(person), dict[str, Erased]()
            for one in self._people(person):
                theirs = await self.backend.footprint(one)
                footprint = footprint.union(theirs)
                now = self.clock.time()
                for part in await self.parts(one):
                    e = await part.erase(theirs, now)
                    done[e.store] = done[e.store].plus(e) if e.store in done else e
            if self.forget is not None:
                await self.forget(footprint.sessions | footprint.own_sessions)
            await self.backend.compact()
            counts = {e.store: e.removed + e.tombstones for e in done.values()}
            await self._audit(PrivacyReason.ERASED, person, by, counts)
            return footprint, list(done.values())

    async def _audit(
        self, action: PrivacyReason, person: Person, by: str, counts: dict[str, int]
    ) -> None:
        record = AuditRecord(self.clock.time(), action.value, person.address, by, counts)
        await self.backend.audit(record)
        log.info(
            "privacy request",
            extra={"action": action.value, "person": person.address, "by": by, "counts": counts},
        )

    async def audit_log(self, limit: int) -> list[AuditRecord]:
        return await self.backend.audit_log(limit)
