"""Configured secrets masked out of what a turn writes: the answer, its transcript lines and the
journal entry (tool trail included), before any of it is stored or sent.

The secrets are every configured credential (model keys, MCP ``env`` and ``headers`` values,
channel tokens): a model that passes one to a tool, or a tool that hands one back, must not get it
into the chat, the journal or the state dir.
"""

from __future__ import annotations

from chatgate.agents.base import AgentReply
from chatgate.config.masking import masked, masker_for
from chatgate.gateway.runtime import Runtime

__all__ = ["masked", "masked_reply", "turn_secrets"]


def turn_secrets(runtime: Runtime) -> frozenset[str]:
    """The configured secrets, and MCP variables passed through whose names look secret."""
    if runtime.tools is None:
        return runtime.loaded.secrets
    return runtime.loaded.secrets | frozenset(runtime.tools.hub.secrets())


def masked_reply(reply: AgentReply, secrets: frozenset[str]) -> AgentReply:
    """The agent's answer (text, blocks and the tool steps kept in ``meta``) with secrets masked."""
    result: AgentReply = masked(reply, masker_for(secrets))
    return result
