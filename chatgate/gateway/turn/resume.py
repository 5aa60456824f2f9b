"""The two ways a turn ends at its open step without an agent call: resumed messages another
replica answered meanwhile, and a turn lock that cannot be taken."""

from __future__ import annotations

import logging

from chatgate.channels.outcome import Stage, TurnResult
from chatgate.gateway.runtime import Runtime
from chatgate.gateway.session_queue import Job
from chatgate.gateway.turn.handover import Handover
from chatgate.policies.failure import failure_reply
from chatgate.policies.reasons import FailureReason, OutcomeKind
from chatgate.presentation.model import OutboundMessage
from chatgate.state.protocols import StateUnavailable
from chatgate.state.records import JournalState
from chatgate.texts.voice import Voice

log = logging.getLogger("chatgate.turn")


async def still_open(rt: Runtime, batch: list[Job]) -> list[Job]:
    """Drop resumed messages another replica answered meanwhile (it was only stalled, not
    dead, when this one adopted them; the session lock made this turn wait for it)."""
    keep = []
    for job in batch:
        entry = await rt.journal.get(job.msg.key) if job.resumed else None
        if entry is None or entry.state is JournalState.PENDING:
            keep.append(job)
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


async def lock_unavailable(
    rt: Runtime, handover: Handover, batch: list[Job], exc: StateUnavailable, voice: Voice
) -> None:
    """The turn lock cannot be taken: answer `unavailable` rather than risk a second turn."""
    last = batch[-1]
    reason = FailureReason.UNAVAILABLE
    message = OutboundMessage.from_text(voice.failure(failure_reply(reason)))
    log.warning(
        "turn lock unavailable; answered unavailable",
        extra={"session": last.session, "key": last.msg.key, "error": str(exc)},
    )
    rt.metrics.turns.labels(
        agent=last.agent, outcome=OutcomeKind.FAILURE.value, reason=reason.value
    ).inc()
    report = await handover.deliver(last, message, 0.0)
    await handover.finish(batch, Stage.TURN, reason.value, message, report)
