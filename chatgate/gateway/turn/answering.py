"""The end of every job: deliver the answer (or hand it off to the replica holding the channel), mark
the journal DONE and resolve the waiting futures."""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable, Sequence

from chatgate.feature.voices import Voices
from chatgate.gateway.delivery.streaming import StreamingReply
from chatgate.gateway.runtime import Runtime
from chatgate.gateway.turn.job import Job
from chatgate.gateway.turn.unsaved import UnrecordedDeliveries
from chatgate.model.errors import StateUnavailable
from chatgate.model.outbound import OutboundMessage
from chatgate.model.reasons import DeliveryStatus
from chatgate.model.results import DeliveryReport, Stage, TurnResult, files_of
from chatgate.state.records import JournalState
from chatgate.texts.voice import Voice

log = logging.getLogger("chatgate.turn")


class Answering:
    def __init__(self, runtime: Runtime) -> None:
        self.rt = runtime
        self.voices = Voices(runtime)
        self.unrecorded = UnrecordedDeliveries()
        # Re-journals what this process holds if the store lost its data; how many it restored.
        self.restore: Callable[[], Awaitable[int]] | None = None
        self._handed: set[str] = set()  # answers this process handed off, not yet passed on
        self._adopted: set[str] = set()  # answers not sent here: another replica adopted them
        # Hands the session's waiting messages off behind its answer; how many.
        self.hand_off_waiting: Callable[[Job], Awaitable[int]] | None = None

    def handed_off(self, key: str) -> bool:
        """Whether this process handed ``key``'s answer off (asked once, as its turn's lock is
        left: that lock goes on with the answer). Not so when another replica had adopted it."""
        if key in self._handed:
            self._handed.discard(key)
            return True
        return False

    def adopted_elsewhere(self, key: str) -> bool:
        """Whether ``key``'s answer was not sent here because another replica adopted the
        message meanwhile (asked once, as its turn's lock is left: that lock goes on to the
        adopter, not to a later message of this replica's, which would be answered first)."""
        if key in self._adopted:
            self._adopted.discard(key)
            return True
        return False

    async def still_mine(self, key: str) -> bool:
        """`journal.owns`, asked again after a restore when the entry is gone with the store's
        data (nobody adopted it: this process still holds it)."""
        if await self.rt.journal.owns(key):
            return True
        if await self._restored() and await self.rt.journal.owns(key):
            return True
        await self._note_adopted(key)
        return False

    async def may_send(self, key: str) -> bool:
        """`journal.claim_send`, asked again after a restore like `still_mine`."""
        if await self.rt.journal.claim_send(key):
            return True
        if await self._restored() and await self.rt.journal.claim_send(key):
            return True
        await self._note_adopted(key)
        return False

    async def _note_adopted(self, key: str) -> None:
        """Remember ``key`` when another replica owns it and has not finished it: its turn (or
        send) there takes this session's lock next."""
        entry = await self.rt.journal.get(key)
        open_ = entry is not None and entry.state is not JournalState.DONE
        if open_ and not await self.rt.journal.owns(key):
            self._adopted.add(key)

    async def _restored(self) -> bool:
        """Whether the entry may be back: the store's data is checked (and, when lost, what this
        process holds re-journaled) before the answer is given up. Asked again even when another
        turn did the restoring: one that asked while it ran is among what it restored."""
        if self.restore is None:
            return False
        await self.restore()
        return True

    async def deliver(
        self,
        job: Job,
        message: OutboundMessage | None,
        agent_s: float,
        stream: StreamingReply | None = None,
        voice: Voice | None = None,
    ) -> DeliveryReport:
        """Send ``message`` to the job's target (finishing a streamed draft in place); a
        delivery this process made but could not record is recorded, not made again.
        ``voice``: the answer's, when the caller has it (else looked up)."""
        done = self.unrecorded.take(job.msg.key)
        if done is not None:
            return done
        edit_ids: list[str] = []
        if stream is not None and stream.started:
            await stream.settle()
            edit_ids = stream.message_ids
            if message is None:  # stopped or silent after a visible draft: keep what was shown
                message = OutboundMessage.from_text(stream.text or "…")
        if message is None:
            return DeliveryReport(DeliveryStatus.SUPPRESSED)
        if job.target is None:
            return DeliveryReport(DeliveryStatus.NO_TARGET)
        runtime = self.rt

        def first_send() -> None:
            overhead = runtime.clock.monotonic() - job.accepted_at - agent_s
            runtime.metrics.overhead_seconds.observe(max(0.0, overhead))

        return await runtime.delivery.deliver(
            job.target,
            message,
            inbound_key=job.msg.key,
            session=job.session,
            on_first_send=first_send,
            edit_ids=edit_ids,
            still_mine=lambda: self.still_mine(job.msg.key),
            describe=(voice or self.voices.for_message(job.msg, job.agent)).degrade_note,
            may_send=lambda: self.may_send(job.msg.key),
            hand_off=lambda: self.hand_off(job),
        )

    async def hand_off(self, job: Job) -> bool:
        """The reply's channel is no longer served here (this one lost the lease while the turn
        ran or while sending, or stalled): leave the answered entry to the replica serving it
        next, not the DLQ. Not one this process sent already (its mark failed): that send is
        recorded here, the holder would send it again."""
        runtime, target = self.rt, job.target
        if target is None or job.msg.key in self.unrecorded:
            return False
        if not await runtime.channels.connection_left(target.channel):
            return False
        if not await runtime.journal.hand_off(job.msg.key):
            return False
        self._handed.add(job.msg.key)
        if self.hand_off_waiting is not None:  # they follow it, in order, to the same replica
            await self.hand_off_waiting(job)
        log.warning(
            "channel no longer served here; answer handed off",
            extra={"channel": target.channel, "key": job.msg.key, "session": job.session},
        )
        return True

    async def finish(
        self,
        batch: Sequence[Job],
        stage: Stage,
        reason: str,
        message: OutboundMessage | None,
        report: DeliveryReport,
        *,
        journaled: bool = False,
    ) -> None:
        """Mark ``batch`` DONE (unless the answer already was, ``journaled``) and resolve it."""
        runtime = self.rt
        now = runtime.clock.time()
        failed = report.kind is not None
        for index, job in enumerate(() if journaled else batch):
            if report.status is DeliveryStatus.HANDED_OFF and job is batch[-1]:
                continue  # the replica holding the channel finishes it
            try:  # nothing downstream waits for the DONE mark
                await runtime.journal.finish(
                    job.msg.key,
                    now,
                    stage=Stage.DELIVERY if failed else stage,
                    reason=report.kind.value if report.kind is not None else reason,
                    delivery=report.status.value,
                    delivery_ids=report.message_ids,
                )
            except StateUnavailable:  # the resume records this delivery instead of repeating it
                self.unrecorded.keep([j.msg.key for j in batch[index:]], report)
                raise
        text = message.plain_text if message is not None else None
        for job in batch:
            if not job.future.done():
                job.future.set_result(
                    TurnResult(
                        job.msg.key,
                        stage.value,
                        reason,
                        text,
                        job.session,
                        report.status.value,
                        files_of(message),
                    )
                )
