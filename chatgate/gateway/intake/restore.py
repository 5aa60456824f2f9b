"""What a replica still holds when the shared store lost its data (Redis restarted without
persistence): its queued batches, its turns in flight and their answers not yet sent, the
messages whose turn failed while the store was away, the stored answers it is sending (taken up
from the journal), and what it handed off that no replica has claimed yet. The journal names its
data (`generation`); when the name changes, every entry this replica holds is journaled again,
as its own (a hand-off: handed off again, with its answer), before it goes on, so nothing it
held is lost and no other replica takes it."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Collection
from dataclasses import dataclass
from typing import Any

from chatgate.gateway.intake.session_queue import SessionScheduler
from chatgate.gateway.runtime import Runtime
from chatgate.gateway.turn.job import Job
from chatgate.model.errors import StateUnavailable
from chatgate.model.messages import InboundMessage
from chatgate.model.reasons import DeliveryStatus
from chatgate.model.results import Stage, TurnResult
from chatgate.state.records import JournalEntry, JournalMark, JournalState

log = logging.getLogger("chatgate.state")


@dataclass(frozen=True)
class _Kept:
    """A message out of this process's queues that it still answers for, with its stored answer
    (None: not answered yet)."""

    msg: InboundMessage
    session: str
    reply: dict[str, Any] | None


def _kept(job: Job) -> _Kept:
    return _Kept(job.msg, job.session, job.stored_reply)


def _handed_wins(handed: _Kept, here: _Kept | None) -> bool:
    """Whether a kept hand-off is restored as one rather than as the work here on the same
    message: only when it carries an answer the work here lacks."""
    return here is None or (handed.reply is not None and here.reply is None)


class HeldWork:
    def __init__(self, runtime: Runtime, scheduler: SessionScheduler) -> None:
        self.rt = runtime
        self.scheduler = scheduler
        self._held = scheduler.held
        self._generation: str | None = None
        self._stranded: dict[str, _Kept] = {}  # turns (and sends) the state outage cut short
        self._sending: dict[str, _Kept] = {}  # stored answers taken up here, being sent
        self._handed: dict[str, _Kept] = {}  # handed off, not yet claimed by any replica
        self._reading: set[asyncio.Future[None]] = set()  # handed-off answers being read
        self._lock = asyncio.Lock()
        self.locks = 0  # turn locks taken again by the last restore

    def stranded(self, batch: list[Job]) -> None:
        """``batch``'s turn failed on the state: the journal is meant to keep it (the guard's
        resume runs it), but only this process knows it if the store lost its data meanwhile."""
        for job in batch:
            self._stranded[job.msg.key] = _kept(job)

    def left(self, entry: JournalEntry) -> None:
        """``entry`` was taken up from the journal and its intake failed on the state: the journal
        keeps it for the next probe, but only this process knows it if the store loses its data
        before that probe."""
        self._stranded[entry.key] = _Kept(entry.message, entry.session or "", entry.reply)

    async def resumed(self, taken: Collection[str], left: Collection[str]) -> None:
        """The guard's resume took ``taken`` up from the journal: those stranded messages are the
        journal's again. Those in ``left`` (their intake failed on the state again) stay, and so
        does any other whose entry is gone: the store lost its data after the resume's check and
        before it read the journal, and only the next check can journal it again."""
        forget = set()
        for key in list(self._stranded):
            if key in taken:
                forget.add(key)
            elif key not in left:
                try:
                    if await self.rt.journal.get(key) is not None:  # settled, or under way
                        forget.add(key)
                except StateUnavailable:  # not known: kept for the next resume to ask again
                    pass
        self._stranded = {k: v for k, v in self._stranded.items() if k not in forget}

    async def sending(self, job: Job, send: Awaitable[None]) -> None:
        """Run ``send``, the sending of ``job``'s stored answer, held here meanwhile (and kept
        as stranded when it fails: the guard's resume takes it up from the journal)."""
        kept = self._sending[job.msg.key] = _kept(job)
        try:
            await send
        except Exception:
            self._stranded[job.msg.key] = kept
            raise
        finally:
            self._sending.pop(job.msg.key, None)

    async def check(self) -> int:
        """Re-journal what this process holds if the store lost its data since the last check;
        how many entries were restored (0: nothing lost). The first check only learns the name."""
        async with self._lock:
            generation = await self.rt.journal.generation()
            if self._generation is None or generation == self._generation:
                self._generation = generation
                await self.rt.turn_lock.retry_pending()  # locks of turns the outage cut short
                return 0
            restored = await self._restore()
            self._generation = generation
            await self.rt.turn_lock.retry_pending()
        log.warning(
            "the store lost its data; re-journaled the messages this replica holds",
            extra={
                "count": restored,
                "stranded": len(self._stranded),
                "sending": len(self._sending),
                "handed_off": len(self._handed),
                "locks": self.locks,
            },
        )
        return restored

    async def forget_claimed(self) -> None:
        """Forget the hand-offs another replica has claimed since (asked after each adoption
        check, so a replica woken by a hand-off claims it first)."""
        async with self._lock:
            if self._handed:
                still = await self.rt.journal.unclaimed(self._handed)
                self._handed = {k: v for k, v in self._handed.items() if k in still}

    async def _restore(self) -> int:
        held = {job.msg.key: _kept(job) for job in self._held()}
        # what this replica still works on wins over a kept hand-off of the same message, but
        # for an answer handed off that the work here has not got (a turn that just ended)
        mine = {**self._stranded, **self._sending, **held}
        self._handed = {k: v for k, v in self._handed.items() if _handed_wins(v, mine.get(k))}
        mine = {k: v for k, v in mine.items() if k not in self._handed}
        # the turn locks went with the data: taken again first (a later message of these
        # sessions waits for them), then the entries, oldest first (an adopter takes them so)
        everything = sorted({**self._handed, **mine}.items(), key=lambda kv: kv[1].msg.received_at)
        ttl = self.rt.config.gateway.turn_lock.ttl_s
        self.locks = await self.rt.turn_lock.restore(self._passed(everything, held), ttl)
        journal, now = self.rt.journal, self.rt.clock.time()
        restored = 0
        for key, kept in everything:
            if key in self._handed:  # a window reaching back to the epoch: never overwritten
                new, _ = await journal.record(kept.msg, now, now, kept.session)
            else:  # and one another replica's intake took in again since is made ours
                new = await journal.restore(kept.msg, now, kept.session)
            restored += new
            if new and kept.reply is not None:
                mark = JournalMark(
                    JournalState.ANSWERED,
                    now,
                    stage=Stage.TURN.value,
                    session=kept.session,
                    reply=kept.reply,
                )
                await journal.settle(key, mark)
            if new and key in self._handed:  # the channel's holder claims it and sends it
                await journal.hand_off(key)
        return restored

    def _passed(
        self, everything: list[tuple[str, _Kept]], held: dict[str, _Kept]
    ) -> dict[str, str]:
        """Session → its oldest message handed off (taken up by another replica) or cut short
        by the outage (taken up by this one's resume): the lock passed on with it."""
        passed: dict[str, str] = {}
        for key, kept in everything:
            if kept.session and key not in held and (key in self._handed or key in self._stranded):
                passed.setdefault(kept.session, key)
        return passed

    def _keep_handed(self, job: Job) -> None:
        """Keep ``job``'s handed-off answer until a replica claims it. Its journal entry is read
        beside the turn, which passes its lock on meanwhile: the holder sends without waiting."""
        task = asyncio.ensure_future(self._handed_answer(job))
        self._reading.add(task)
        task.add_done_callback(self._reading.discard)

    async def _handed_answer(self, job: Job) -> None:
        try:
            entry = await self.rt.journal.get(job.msg.key)
        except Exception as exc:  # not kept: lost only if the store also loses its data now
            log.warning("handed-off answer not kept", extra={"error": type(exc).__name__})
            return
        if entry is not None:
            self._handed[job.msg.key] = _Kept(job.msg, job.session, entry.reply)

    async def hand_off_waiting(self, job: Job) -> int:
        """``job``'s answer was handed off (its channel is served by another replica now): the
        session's messages waiting here go the same way, behind it, so that replica answers
        them in order instead of this one racing its later turns. How many went. Each is kept
        here until a replica claims it (a store that loses its data meanwhile gets it again)."""
        self._keep_handed(job)
        waiting = self.scheduler.take_waiting(job.session)
        kept: list[Job] = []
        handed = DeliveryStatus.HANDED_OFF.value
        left = list(waiting)
        try:
            while left:
                queued = left[0]
                if not await self.rt.journal.hand_off(queued.msg.key):
                    kept.append(queued)
                else:
                    self._handed[queued.msg.key] = _Kept(queued.msg, queued.session, None)
                    if not queued.future.done():
                        result = TurnResult(
                            queued.msg.key, Stage.TURN.value, handed, None, queued.session, handed
                        )
                        queued.future.set_result(result)
                left.pop(0)
        finally:  # what was not handed off (or not reached before an error) runs here
            self.scheduler.put_back(kept + left)
        if len(waiting) > len(kept):
            log.info(
                "handed the session's waiting messages off behind its answer",
                extra={"session": job.session, "count": len(waiting) - len(kept)},
            )
        return len(waiting) - len(kept)
