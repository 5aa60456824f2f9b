"""What a turn writes beside the agent's reply: the user's message line (marked when its text
is untrusted), the turn's usage in the reply's metadata, and whether tool use is shown."""

from __future__ import annotations

import dataclasses
from typing import Any

from chatgate.config.agent_models import AgentConfig, LiteLLMAgentConfig
from chatgate.gateway.turn.job import Job
from chatgate.gateway.turn.record import TurnRecord
from chatgate.model.chat import ChatMessage
from chatgate.model.reasons import TaintSource
from chatgate.policies.taint import TAINT_META, UNTRUSTED_EXTRA

USAGE_META = "usage"  # journal reply / transcript meta key: the turn's tokens and cost


def shows_tools(config: AgentConfig | None) -> bool:
    """The agent runs tools and shows which (``show_tool_progress``)."""
    tools = config.tools if isinstance(config, LiteLLMAgentConfig) else None
    return tools is not None and tools.show_tool_progress


def user_message(job: Job, observed: bool = False) -> ChatMessage:
    """The transcript line of an inbound message; an untrusted one (an observed group message,
    a body from an untrusted route) is marked so later turns know their context is tainted."""
    taint = TaintSource.OBSERVED.value if observed else job.msg.extra.get(UNTRUSTED_EXTRA)
    meta = {TAINT_META: taint} if isinstance(taint, str) else None
    return ChatMessage("user", job.msg.text, job.msg.sender_name or None, job.msg.key, meta)


def turn_usage(record: TurnRecord) -> dict[str, Any]:
    """The turn's tokens and cost (the budgets' accounting) for the journal, also kept in
    the answer's transcript metadata; none for a turn that called no model (`chatgate why`
    and the dashboard skip a zero usage anyway)."""
    summary = record.metered.summary if record.metered is not None else None
    if summary is None:
        return {}
    usage = dict(summary())
    if not usage.get("calls"):  # no model call (echo, python, http agents): nothing spent
        return {}
    if record.reply is not None:
        meta = {**(record.reply.meta or {}), USAGE_META: usage}
        record.reply = dataclasses.replace(record.reply, meta=meta)
    return {USAGE_META: usage}
