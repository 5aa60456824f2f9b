"""Where a message ended (its stage) and what the sink answers an adapter: an accepted submission
and, later, the turn's result."""

from __future__ import annotations

import asyncio
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any

from chatgate.model.frozen import record
from chatgate.model.messages import Target
from chatgate.model.outbound import File, OutboundMessage
from chatgate.model.reasons import DeliveryStatus, SendErrorKind


class Stage(StrEnum):
    """The step of the message path that settled a message (see the decision trail)."""

    DEDUPE = "dedupe"
    ADMISSION = "admission"
    LOOP_GUARD = "loop_guard"
    RATE_LIMIT = "rate_limit"
    STALE = "stale"
    EDIT = "edit"
    MEMORY = "memory"
    DEGRADED = "degraded"
    QUEUE = "queue"
    COMMAND = "command"
    APPROVAL = "approval"  # a press (or yes/no reply) answering a tool approval prompt
    OBSERVE = "observe"
    FILTER = "filter"
    TURN = "turn"
    DELIVERY = "delivery"


@record
class TurnResult:
    """Final result of handling one inbound message (also stored in the journal)."""

    key: str
    stage: str
    reason: str
    reply: str | None = None
    session: str | None = None
    delivery: str | None = None
    files: tuple[File, ...] = ()  # stored files the answer carries (sync callers get links)

    def to_dict(self) -> dict[str, Any]:
        return {
            "key": self.key,
            "stage": self.stage,
            "reason": self.reason,
            "reply": self.reply,
            "session": self.session,
            "delivery": self.delivery,
        }


@dataclass
class Submission:
    """Returned once the message is durably journaled (safe to ack the platform)."""

    key: str
    duplicate: bool
    result: asyncio.Future[TurnResult]


def files_of(message: OutboundMessage | None) -> tuple[File, ...]:
    """The file blocks of an answer, in order."""
    return tuple(b for b in message.blocks if isinstance(b, File)) if message is not None else ()


def press_notice(submission: Submission) -> str | None:
    """What only the person who pressed a button should see, once its press is settled before
    the queue: e.g. an approval that is not theirs to answer; None when there is nothing."""
    result = submission.result
    if submission.duplicate or not result.done() or result.cancelled():
        return None
    if result.exception() is not None:
        return None
    settled = result.result()
    return settled.reply if settled.stage == Stage.APPROVAL and settled.reply else None


@dataclass
class DeliveryReport:
    """How one delivery ended: sent (with the platform's message ids), dead-lettered, or dropped."""

    status: DeliveryStatus
    message_ids: list[str] = field(default_factory=list)
    kind: SendErrorKind | None = None
    error: str = ""
    attempts: int = 0
    degraded: tuple[str, ...] = ()
    target: Target | None = None
