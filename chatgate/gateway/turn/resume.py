"""The ways a turn ends at its open step without an agent call: resumed messages another
replica answered meanwhile (sent from the journal when not sent yet), messages another replica
adopted while this one stalled, and a turn lock that cannot be taken."""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable
from dataclasses import replace

from chatgate.gateway.runtime import Runtime
from chatgate.gateway.turn.answering import Answering
from chatgate.gateway.turn.job import Job, JobKind
from chatgate.model.errors import StateUnavailable
from chatgate.model.outbound import OutboundMessage
from chatgate.model.reasons import DeliveryStatus, FailureReason, OutcomeKind
from chatgate.model.results import Stage, TurnResult
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


async def lock_unavailable(
    runtime: Runtime, answering: Answering, batch: list[Job], exc: StateUnavailable, voice: Voice
) -> None:
    """The turn lock cannot be taken: answer `unavailable` rather than risk a second turn."""
    last = batch[-1]
    reason = FailureReason.UNAVAILABLE
    message = OutboundMessage.from_text(voice.failure(failure_reply(reason)))
    log.warning(
        "turn lock unavailable; answered unavailable",
        extra={"session": last.session, "key": last.msg.key, "error": str(exc)},
    )
    runtime.metrics.turns.labels(
        agent=last.agent, outcome=OutcomeKind.FAILURE.value, reason=reason.value
    ).inc()
    report = await answering.deliver(last, message, 0.0)
    answering.handed_off(last.msg.key)  # no turn lock to pass on with it
    await answering.finish(batch, Stage.TURN, reason.value, message, report)


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
