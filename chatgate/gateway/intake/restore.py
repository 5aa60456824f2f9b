"""What a replica still holds when the shared store lost its data (Redis restarted without
persistence): its queued batches, its turns in flight and their answers not yet sent, and the
messages whose turn failed while the store was away. The journal names its data (`generation`);
when the name changes, every entry this replica holds is journaled again, as its own, before it
goes on, so nothing it held is lost and no other replica takes it."""

from __future__ import annotations

import asyncio
import logging

from chatgate.gateway.intake.session_queue import SessionScheduler
from chatgate.gateway.runtime import Runtime
from chatgate.gateway.turn.job import Job
from chatgate.model.messages import InboundMessage
from chatgate.model.reasons import DeliveryStatus
from chatgate.model.results import Stage, TurnResult

log = logging.getLogger("chatgate.state")


class HeldWork:
    def __init__(self, runtime: Runtime, scheduler: SessionScheduler) -> None:
        self.rt = runtime
        self.scheduler = scheduler
        self._held = scheduler.held
        self._generation: str | None = None
        self._stranded: dict[str, InboundMessage] = {}  # turns the state outage cut short
        self._lock = asyncio.Lock()

    def stranded(self, batch: list[Job]) -> None:
        """``batch``'s turn failed on the state: the journal is meant to keep it (the guard's
        resume runs it), but only this process knows it if the store lost its data meanwhile."""
        for job in batch:
            self._stranded[job.msg.key] = job.msg

    def resumed(self) -> None:
        """The guard resumed what the journal keeps: the stranded turns are the journal's again."""
        self._stranded.clear()

    async def check(self) -> int:
        """Re-journal what this process holds if the store lost its data since the last check;
        how many entries were restored (0: nothing lost). The first check only learns the name."""
        async with self._lock:
            generation = await self.rt.journal.generation()
            if self._generation is None or generation == self._generation:
                self._generation = generation
                return 0
            restored = await self._restore()
            self._generation = generation
        log.warning(
            "the store lost its data; re-journaled the messages this replica holds",
            extra={"count": restored, "stranded": len(self._stranded)},
        )
        return restored

    async def _restore(self) -> int:
        messages = {job.msg.key: job.msg for job in self._held()}
        messages.update(self._stranded)
        journal, now = self.rt.journal, self.rt.clock.time()
        restored = 0
        for msg in messages.values():
            # a window reaching back to the epoch: an entry that survived is never overwritten
            new, _ = await journal.record(msg, now, now)
            restored += new
        return restored

    async def hand_off_waiting(self, job: Job) -> int:
        """``job``'s answer was handed off (its channel is served by another replica now): the
        session's messages waiting here go the same way, behind it, so that replica answers
        them in order instead of this one racing its later turns. How many went."""
        waiting = self.scheduler.take_waiting(job.session)
        kept: list[Job] = []
        handed = DeliveryStatus.HANDED_OFF.value
        left = list(waiting)
        try:
            while left:
                queued = left[0]
                if not await self.rt.journal.hand_off(queued.msg.key):
                    kept.append(queued)
                elif not queued.future.done():
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
