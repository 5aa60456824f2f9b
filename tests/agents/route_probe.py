"""An ``openai/`` model's warm-up and one turn in a process where litellm cannot be imported;
prints JSON.

Run in a fresh process: a test process may have imported litellm already.
"""

from __future__ import annotations

import asyncio
import json
import sys

from chatgate.agents.base import AgentError
from chatgate.agents.litellm_agent import LiteLLMAgent
from chatgate.config.agent_models import LiteLLMAgentConfig
from tests.agents.helpers import make_turn


async def main(base: str, client: str, *fallbacks: str) -> None:
    sys.modules["litellm"] = None  # type: ignore[assignment]  # `import litellm` now fails
    raw = {"backend": "litellm", "model": "openai/fake-model", "api_base": base, "api_key": "sk"}
    raw |= {"client": client, "fallbacks": [{"model": m} for m in fallbacks]}
    agent = LiteLLMAgent("probe", LiteLLMAgentConfig.model_validate(raw), {})
    try:
        warmed = await _prewarm(agent)
        reply = await agent.run(make_turn("ping"))
        print(json.dumps({"prewarm": warmed, "text": reply.text, "usage": dict(reply.usage or {})}))
    except AgentError as exc:
        print(json.dumps({"prewarm": warmed, "error": exc.reason.value}))
    finally:
        await agent.aclose()


async def _prewarm(agent: LiteLLMAgent) -> str:
    """The warm-up's outcome: "ok", or the error's class (ModuleNotFoundError: it wanted litellm)."""
    try:
        await agent.prewarm()
    except Exception as exc:
        return type(exc).__name__
    return "ok" if "openai" in sys.modules else "no openai SDK"


if __name__ == "__main__":
    asyncio.run(main(*sys.argv[1:]))
