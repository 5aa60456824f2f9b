"""Taking a journaled message up again (a restart, a state outage, a dead or departed replica):
its own trace linked to the one its intake began, and, for an answer already stored, the job
that only sends it."""

from __future__ import annotations

import asyncio

from chatgate import tracing
from chatgate.gateway.turn.job import Job, JobKind
from chatgate.model.messages import InboundMessage
from chatgate.model.results import TurnResult
from chatgate.state.records import JournalEntry, JournalState


def trace_resumed(owner: str, msg: InboundMessage) -> None:
    """Start the message's resumed root span, linked to its first trace (kept in the journal)."""
    tracing.start_message(
        tracing.keyed(owner, msg.key),
        f"{msg.platform} message",
        link=msg.extra.get(tracing.TRACE_PARENT),
        chatgate__channel=msg.channel,
        chatgate__resumed=True,
        messaging__system=msg.platform,
        messaging__message__id=msg.message_id,
    )


def redelivery(
    entry: JournalEntry,
    future: asyncio.Future[TurnResult],
    agent: str,
    ephemeral: bool,
    now: float,
) -> Job | None:
    """The job that sends ``entry``'s stored answer (no agent call); None when it has none."""
    if entry.state is not JournalState.ANSWERED or entry.reply is None or not entry.session:
        return None
    msg = entry.message
    return Job(
        JobKind.REDELIVER,
        msg,
        future,
        entry.session,
        agent,
        msg.reply_target,
        now,
        stored_reply=entry.reply,
        ephemeral=ephemeral,
    )
