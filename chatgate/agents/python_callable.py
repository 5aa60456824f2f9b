"""Python agent: calls `module:function(turn)`, sync (in a thread) or async."""

from __future__ import annotations

import asyncio
import dataclasses
import importlib
import inspect
from collections.abc import Callable, Mapping
from typing import Any

from chatgate.agents.base import AgentError, AgentReply, Turn, recent
from chatgate.config.agent_models import PythonAgentConfig
from chatgate.model.outbound import OutboundMessage, message_from_dict
from chatgate.model.reasons import FailureReason


def import_callable(spec: str) -> Callable[..., Any]:
    """Resolve "package.module:function"; ImportError/AttributeError carry a readable message."""
    module_name, _, attr = spec.partition(":")
    module = importlib.import_module(module_name)
    target = getattr(module, attr, None)
    if not callable(target):
        raise AttributeError(f"{spec}: {attr!r} is not a callable in {module_name}")
    fn: Callable[..., Any] = target
    return fn


class PythonAgent:
    def __init__(self, name: str, config: PythonAgentConfig) -> None:
        self.name = name
        self._fn = import_callable(config.function)
        self._is_async = inspect.iscoroutinefunction(self._fn)
        self._max_history = config.max_history

    async def run(self, turn: Turn) -> AgentReply:
        turn = dataclasses.replace(turn, history=recent(turn.history, self._max_history))
        if self._is_async:
            result = await self._fn(turn)
        else:
            result = await asyncio.to_thread(self._fn, turn)
            if inspect.isawaitable(result):  # e.g. an object with an async __call__
                result = await result
        return coerce_reply(result)

    async def aclose(self) -> None:
        return None

    def provider_id(self) -> str | None:
        return None


def coerce_reply(result: Any) -> AgentReply:
    """Accept str, None, AgentReply, OutboundMessage or a {"text"|"reply"|"blocks"} mapping."""
    if isinstance(result, AgentReply):
        return result
    if result is None:
        return AgentReply(text="")
    if isinstance(result, str):
        return AgentReply(text=result)
    if isinstance(result, OutboundMessage):
        return AgentReply(text=result.plain_text, message=result)
    if isinstance(result, Mapping):
        if "blocks" in result:
            try:
                message = message_from_dict(result)
            except ValueError as exc:
                raise AgentError(
                    FailureReason.FORMAT_ERROR, f"agent returned bad blocks: {exc}"
                ) from None
            return AgentReply(text=message.plain_text, message=message)
        text = result.get("reply", result.get("text"))
        if text is None or isinstance(text, str):
            return AgentReply(text=text or "")
    raise AgentError(FailureReason.FORMAT_ERROR, f"agent returned {type(result).__name__}")
