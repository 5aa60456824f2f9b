"""What a finished agent call means: the outcome, the reply shown, and what the transcript keeps.

No I/O here: the conclude step turns this into one journal write and the deliver step into a
delivery.
"""

from __future__ import annotations

from typing import Any

from chatgate.agents.base import AgentError, AgentReply
from chatgate.config.models import GatewaySection
from chatgate.model.chat import ChatMessage
from chatgate.model.frozen import record
from chatgate.model.outbound import OutboundMessage, message_to_dict
from chatgate.model.reasons import DeliveryStatus, FailureReason, OutcomeKind
from chatgate.model.text_ids import TextId
from chatgate.policies.failure import FailureReply, failure_reply
from chatgate.policies.final_reply import classify_final
from chatgate.texts.voice import Voice


@record(slots=True)
class Outcome:
    """The turn's outcome and the message it shows (None: nothing to show)."""

    kind: OutcomeKind
    message: OutboundMessage | None
    reason: str
    stopped: bool = False  # /stop cancelled the agent call: show nothing new
    final: bool = False  # nothing to deliver: the answer is also the DONE mark

    @property
    def suppressed(self) -> bool:
        return self.stopped or self.kind is OutcomeKind.SILENCE

    @property
    def shown(self) -> OutboundMessage | None:
        """What delivery sends: nothing after /stop or a deliberate silence."""
        return None if self.suppressed else self.message

    @property
    def unsent(self) -> DeliveryStatus:
        """The delivery status of a final answer (one nobody delivers)."""
        if self.suppressed or self.message is None:
            return DeliveryStatus.SUPPRESSED
        return DeliveryStatus.NO_TARGET


def failure_of(reply: AgentReply | None, failure: AgentError | None) -> FailureReply | None:
    """The failure of an agent call that did not answer (None when it did)."""
    if failure is None and reply is not None:
        return None
    reason = failure.reason if failure is not None else FailureReason.UNKNOWN
    return failure_reply(reason, retry_after_s=failure.retry_after_s if failure else None)


def decide(
    reply: AgentReply | None, failure: AgentError | None, gateway: GatewaySection, voice: Voice
) -> tuple[OutcomeKind, OutboundMessage | None, str]:
    """Outcome kind, message and reason code of an agent call that returned or failed; a
    failure shows the user's text in ``voice`` (the operator detail goes elsewhere)."""
    failed = failure_of(reply, failure)
    if failure is not None and failure.notice is not None:  # words written for this failure
        notice = OutboundMessage.from_text(failure.notice) if failure.notice else None
        return OutcomeKind.FAILURE, notice, failure.reason.value
    if failed is not None or reply is None:
        fr = failed or failure_reply(FailureReason.UNKNOWN)
        return OutcomeKind.FAILURE, OutboundMessage.from_text(voice.failure(fr)), fr.reason.value
    kind = classify_final(reply.text, frozenset(gateway.silence_markers))
    if kind is OutcomeKind.SILENCE:
        return kind, None, kind.value
    if kind is OutcomeKind.EMPTY:  # also blocks with nothing visible: no answer is no answer
        text = gateway.empty_reply_text or voice.text(TextId.EMPTY_REPLY)
        return kind, OutboundMessage.from_text(text), kind.value
    return (
        OutcomeKind.TEXT,
        reply.message or OutboundMessage.from_text(reply.text),
        OutcomeKind.TEXT.value,
    )


def to_persist(
    new: list[ChatMessage],
    kind: OutcomeKind,
    reply: AgentReply | None,
    failure: AgentError | None,
) -> list[ChatMessage]:
    """Transcript lines the turn adds: nothing after /stop; the reply only when it was one."""
    if failure is not None and failure.reason is FailureReason.CANCELLED:
        return []
    out = list(new)
    if reply is not None and kind in (OutcomeKind.TEXT, OutcomeKind.SILENCE):
        out.append(ChatMessage("assistant", reply.text, None, new[-1].source, reply.meta))
    return out


def answered(outcome: Outcome, persist: list[ChatMessage]) -> dict[str, Any]:
    """The reply as the journal keeps it, so a restart re-sends instead of re-running the agent."""
    return {
        "outcome": outcome.kind.value,
        "reason": outcome.reason,
        "message": message_to_dict(outcome.message) if outcome.message else None,
        "persist": [m.to_dict() for m in persist],
        "stopped": outcome.stopped,
    }
