"""Approvals as a feature: the desk turns ask, and the intake gate that takes the answers."""

from __future__ import annotations

from collections.abc import Awaitable, Mapping, Sequence

from chatgate.approvals.desk import ApprovalDesk
from chatgate.feature.base import Feature
from chatgate.feature.context import FeatureContext
from chatgate.feature.intake import GateSlot, Inbound, StageFn, Verdict
from chatgate.feature.turns import ToolApprover
from chatgate.model.reasons import ApprovalReason
from chatgate.model.results import Stage
from chatgate.model.text_ids import TextId
from chatgate.state.records import JournalState


class Approvals(Feature):
    name = "approvals"

    def __init__(self, context: FeatureContext) -> None:
        self.desk = ApprovalDesk(context)
        self.voices = context.voices

    def gates(self) -> Mapping[GateSlot, Sequence[StageFn]]:
        return {GateSlot.BEFORE_ADMISSION: (self.answer,)}

    def tool_approver(self) -> ToolApprover:
        return self.desk

    def answer(self, message: Inbound) -> Awaitable[Verdict | None] | None:
        """An approval press (or a yes/no reply to a pending prompt) is answered here, before
        the session queue: the session's turn is busy waiting for exactly this answer."""
        desk = self.desk
        if message.observe or not desk.wants(message.msg, message.command is not None):
            return None
        return self._answer(message)

    async def _answer(self, message: Inbound) -> Verdict | None:
        reason = await self.desk.answer(message.msg)
        if reason is None:
            return None
        if reason in (ApprovalReason.APPROVED, ApprovalReason.DENIED):
            return Verdict(Stage.APPROVAL, reason, state=JournalState.DONE, counted=False)
        if reason is ApprovalReason.NOT_APPROVER:  # the adapter shows it to the presser only
            notice = self.voices.for_message(message.msg).text(TextId.APPROVAL_NOT_YOURS)
            return Verdict(Stage.APPROVAL, reason, reply=notice)
        return Verdict(Stage.APPROVAL, reason)
