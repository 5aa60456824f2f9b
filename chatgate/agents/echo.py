"""Echo agent: answers with the user's own text. Offline demos, tests and benchmarks."""

from __future__ import annotations

import asyncio

from chatgate.agents.base import AgentReply, Turn
from chatgate.config.agent_models import EchoAgentConfig


class EchoAgent:
    def __init__(self, name: str, config: EchoAgentConfig) -> None:
        self.name = name
        self._prefix = config.prefix
        self._delay = config.delay_s

    async def run(self, turn: Turn) -> AgentReply:
        if self._delay:
            await asyncio.sleep(self._delay)
        text = self._prefix + turn.text
        if turn.on_delta is not None:
            for piece in _pieces(text):
                await turn.on_delta(piece)
        return AgentReply(text=text, model="echo")

    async def aclose(self) -> None:
        return None

    def provider_id(self) -> str | None:
        return None


def _pieces(text: str) -> list[str]:
    """Word-sized deltas that concatenate back to exactly ``text``."""
    words = text.split(" ")
    return [w + " " for w in words[:-1]] + ([words[-1]] if words[-1] else [])
