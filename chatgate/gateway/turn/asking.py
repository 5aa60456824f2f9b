"""How a turn asks its chat before a tool call: the `Approve` callback handed to the agent,
bound to the message, its sender and the approval feature (when one is plugged in)."""

from __future__ import annotations

from chatgate.agents.tools.types import ApprovalAnswer, ApprovalAsk, Approve
from chatgate.config.agent_models import AgentConfig, LiteLLMAgentConfig
from chatgate.feature.turns import AskContext, ToolApprover
from chatgate.feature.voices import USER_LANGUAGE_KEY
from chatgate.gateway.turn.record import TurnRecord


def chat_approver(
    config: AgentConfig | None, desk: ToolApprover | None, record: TurnRecord
) -> Approve | None:
    """The turn's way to ask the chat before a tool call whose rule is `ask` (and before a
    `write` tool in a tainted turn, whatever its rule); None for an agent without tools."""
    last = record.last
    tools = config.tools if isinstance(config, LiteLLMAgentConfig) else None
    if desk is None or tools is None:
        return None
    language = last.msg.extra.get(USER_LANGUAGE_KEY)
    ctx = AskContext(
        key=last.msg.key,
        session=last.session,
        agent=last.agent,
        channel=last.msg.channel,
        chat_id=last.msg.chat_id,
        sender_id=last.msg.sender_id,
        target=last.target,
        language=language if isinstance(language, str) else None,
        timeout_s=tools.approval_timeout_s,
        approver=tools.approver,
        control=record.control,
    )

    async def approve(ask: ApprovalAsk) -> ApprovalAnswer:
        ctx.deadline.timeout = record.deadline
        return await desk.ask(ctx, ask)

    return approve
