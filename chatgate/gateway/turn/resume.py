"""The ways a turn ends at its open step without an agent call: resumed messages another
replica answered meanwhile (sent from the journal when not sent yet), messages another replica
adopted while this one stalled, and a turn lock that cannot be taken (left to the journal)."""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable
from dataclasses import replace

from chatgate.gateway.runtime import Runtime
from chatgate.gateway.turn.answering import Answering
from chatgate.gateway.turn.job import Job, JobKind
from chatgate.model.errors import StateUnavailable
from chatgate.model.outbound import OutboundMessage
from chatgate.model.reasons import DeliveryStatus, FailureReason, OutcomeKind, RefusalReason
from chatgate.model.results import Stage, TurnResult
from chatgate.model.text_ids import TextId
from chatgate.policies.failure import failure_reply
from chatgate.state.records import JournalState
from chatgate.texts.voice import Voice

log = logging.getLogger("chatgate.turn")


async def still_open(
    runtime: Runtime,
    answering: Answering,
    batch: list[Job],
    redeliver: Callable[[Job], Awaitable[object]],
) -> list[Job]:
    """The jobs still to run. Resumed ones another replica answered meanwhile (it was only
    stalled when this one adopted them) are not run again: an answer not yet sent is sent from
    the journal by ``redeliver``. Jobs this replica accepted but another adopted while this one
    stalled are left to that replica."""
    keep = []
    for job in batch:
        if not job.resumed and await answering.still_mine(job.msg.key):
            keep.append(job)
            continue
        if not job.resumed:  # adopted by another replica while this one stalled
            discard(job)
            continue
        entry = await runtime.journal.get(job.msg.key)
        if entry is None or entry.state is JournalState.PENDING:
            keep.append(job)
            continue
        if entry.state is JournalState.ANSWERED and entry.reply is not None:
            log.warning(
                "adopted message was answered but not sent by its first replica; sending it",
                extra={"key": job.msg.key, "session": job.session},
            )
            session = entry.session or job.session
            await redeliver(
                replace(job, kind=JobKind.REDELIVER, session=session, stored_reply=entry.reply)
            )
            continue
        log.warning(
            "adopted message was answered by its first replica; not run again",
            extra={"key": job.msg.key, "session": job.session},
        )
        if not job.future.done():
            job.future.set_result(
                TurnResult(
                    job.msg.key,
                    entry.stage or Stage.TURN.value,
                    entry.reason or "",
                    None,
                    entry.session,
                    entry.delivery,
                )
            )
    return keep


def discard(job: Job) -> None:
    """Another replica adopted ``job`` while this one stalled: it answers; this one sends
    nothing and writes nothing more for it (the journal would refuse the write anyway)."""
    log.warning(
        "message adopted by another replica while this one stalled; not run here",
        extra={"key": job.msg.key, "session": job.session},
    )
    if not job.future.done():
        handed = DeliveryStatus.HANDED_OFF.value
        job.future.set_result(
            TurnResult(job.msg.key, Stage.TURN.value, handed, None, job.session, handed)
        )


class StateAway:
    """The turn lock cannot be taken (the state is away): no turn runs (never two of one
    session at once); the journal keeps the batch, and the guard's resume answers it once the
    state is back. The chat is told so, once per message (a resume that fails again is quiet);
    the notice is not the message's answer, so nothing records it as delivered."""

    KEEP = 4096  # messages remembered as told

    def __init__(self, runtime: Runtime) -> None:
        self.rt = runtime
        self._told: dict[str, None] = {}

    async def notify(self, batch: list[Job], voice: Voice) -> None:
        """Tell the chat (the turn's one coded line is the session worker's)."""
        last = batch[-1]
        target = last.target
        if target is None or last.msg.key in self._told:
            return  # a sync caller gets 503 + Retry-After instead
        if await self.rt.channels.ready_adapter(target.channel) is None:
            return  # served by another replica now: its resume of the message answers
        notice = OutboundMessage.from_text(voice.text(TextId.STATE_AWAY))
        try:
            report = await self.rt.delivery.deliver(target, notice, session=last.session)
        except StateUnavailable:  # the stores are away too: told at the next attempt
            return
        if report.status is DeliveryStatus.SENT:
            self._told[last.msg.key] = None
            if len(self._told) > self.KEEP:
                del self._told[next(iter(self._told))]
            log.info(
                "told the chat its answer waits for the state",
                extra={"key": last.msg.key, "reason": RefusalReason.STATE_UNAVAILABLE.value},
            )


async def turn_crashed(
    runtime: Runtime, answering: Answering, batch: list[Job], exc: Exception, voice: Voice
) -> None:
    """A step raised something no step expects (a bug, data a store cannot write): the user gets
    the failure reply and the messages are finished, so a resend is answered instead of waiting
    on a turn nobody runs."""
    last = batch[-1]
    reason = FailureReason.UNKNOWN
    log.error(
        "turn failed unexpectedly; answered with the failure reply",
        exc_info=exc,
        extra={"session": last.session, "key": last.msg.key, "error": type(exc).__name__},
    )
    runtime.metrics.turns.labels(
        agent=last.agent, outcome=OutcomeKind.FAILURE.value, reason=reason.value
    ).inc()
    message = OutboundMessage.from_text(voice.failure(failure_reply(reason)))
    try:
        report = await answering.deliver(last, message, 0.0)
        answering.handed_off(last.msg.key)  # the turn's lock is released already
        await answering.finish(batch, Stage.TURN, reason.value, message, report)
    except StateUnavailable:
        raise
    except Exception:
        log.exception("could not finish the failed turn", extra={"key": last.msg.key})
        for job in batch:
            if not job.future.done():
                job.future.set_result(
                    TurnResult(job.msg.key, Stage.TURN.value, reason.value, message.plain_text)
                )
