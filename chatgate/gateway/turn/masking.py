"""Configured secrets masked out of what a turn writes: the answer, its transcript lines and the
journal entry (tool trail included), before any of it is stored or sent.

The secrets are every configured credential (model keys, MCP ``env`` and ``headers`` values,
channel tokens): a model that passes one to a tool, or a tool that hands one back, must not get it
into the chat, the journal or the state dir.
"""

from __future__ import annotations

from dataclasses import fields, is_dataclass, replace
from typing import Any

from chatgate.agents.base import AgentReply
from chatgate.config.masking import Masker, masker_for
from chatgate.gateway.runtime import Runtime


def turn_secrets(runtime: Runtime) -> frozenset[str]:
    """The configured secrets, and MCP variables passed through whose names look secret."""
    if runtime.tools is None:
        return runtime.loaded.secrets
    return runtime.loaded.secrets | frozenset(runtime.tools.hub.secrets())


def masked(value: Any, mask: Masker) -> Any:
    """``value`` with every string in it masked: plain data and frozen dataclasses (bytes kept).
    What holds no secret comes back as the same object (most replies: nothing is rebuilt)."""
    if isinstance(value, str):
        return mask.mask(value)
    if isinstance(value, dict):
        return _masked_dict(value, mask)
    if isinstance(value, list | tuple):
        return _masked_items(value, mask)
    if is_dataclass(value) and not isinstance(value, type):
        return _masked_dataclass(value, mask)
    return value


def _masked_dict(value: dict[Any, Any], mask: Masker) -> dict[Any, Any]:
    pairs = {k: masked(v, mask) for k, v in value.items()}
    return value if all(pairs[k] is v for k, v in value.items()) else pairs


def _masked_items(value: list[Any] | tuple[Any, ...], mask: Masker) -> Any:
    items = [masked(v, mask) for v in value]
    if all(a is b for a, b in zip(items, value, strict=True)):
        return value
    return items if isinstance(value, list) else tuple(items)


def _masked_dataclass(value: Any, mask: Masker) -> Any:
    names = [f.name for f in fields(value) if f.init]
    changes = {n: masked(getattr(value, n), mask) for n in names}
    if all(changes[n] is getattr(value, n) for n in names):
        return value
    return replace(value, **changes)


def masked_reply(reply: AgentReply, secrets: frozenset[str]) -> AgentReply:
    """The agent's answer (text, blocks and the tool steps kept in ``meta``) with secrets masked."""
    result: AgentReply = masked(reply, masker_for(secrets))
    return result
