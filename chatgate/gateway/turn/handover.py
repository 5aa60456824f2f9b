"""The end of every job: deliver the answer (or hand it to the replica holding the channel), mark
the journal DONE and resolve the waiting futures."""

from __future__ import annotations

import logging
from collections.abc import Sequence

from chatgate.channels.outcome import Stage, TurnResult, files_of
from chatgate.gateway.delivery import DeliveryReport
from chatgate.gateway.runtime import Runtime
from chatgate.gateway.session_queue import Job
from chatgate.gateway.streaming import StreamingReply
from chatgate.gateway.voices import Voices
from chatgate.policies.reasons import DeliveryStatus
from chatgate.presentation.model import OutboundMessage

log = logging.getLogger("chatgate.turn")


class Handover:
    def __init__(self, rt: Runtime) -> None:
        self.rt = rt
        self.voices = Voices(rt)

    async def deliver(
        self,
        job: Job,
        message: OutboundMessage | None,
        agent_s: float,
        stream: StreamingReply | None = None,
    ) -> DeliveryReport:
        """Send ``message`` to the job's target (finishing a streamed draft in place)."""
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
        rt = self.rt

        def first_send() -> None:
            overhead = rt.clock.monotonic() - job.accepted_at - agent_s
            rt.metrics.overhead_seconds.observe(max(0.0, overhead))

        return await rt.delivery.deliver(
            job.target,
            message,
            inbound_key=job.msg.key,
            session=job.session,
            on_first_send=first_send,
            edit_ids=edit_ids,
            still_mine=lambda: rt.journal.owns(job.msg.key),
            describe=self.voices.for_message(job.msg, job.agent).degrade_note,
            may_send=lambda: rt.journal.claim_send(job.msg.key),
        )

    async def hand_off(self, job: Job) -> bool:
        """The reply's channel is held by another replica now (this one lost the lease while
        the turn ran, or stalled): leave the answered entry to that replica, not the DLQ."""
        rt, target = self.rt, job.target
        if target is None or await rt.channels.ready_adapter(target.channel) is not None:
            return False  # (waits out a restart of the channel)
        if not await rt.channels.held_elsewhere(target.channel):
            return False
        if not await rt.journal.hand_off(job.msg.key):
            return False
        log.warning(
            "channel held by another replica; answer handed off",
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
        rt = self.rt
        now = rt.clock.time()
        failed = report.kind is not None
        for job in () if journaled else batch:  # nothing downstream waits for the DONE mark
            if report.status is DeliveryStatus.HANDED_OFF and job is batch[-1]:
                continue  # the replica holding the channel finishes it
            await rt.journal.finish(
                job.msg.key,
                now,
                stage=Stage.DELIVERY if failed else stage,
                reason=report.kind.value if report.kind is not None else reason,
                delivery=report.status.value,
                delivery_ids=report.message_ids,
            )
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
