"""One turn of an ``openai/`` model in a process where litellm cannot be imported; prints JSON.

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


async def main(base: str, client: str) -> None:
    sys.modules["litellm"] = None  # type: ignore[assignment]  # `import litellm` now fails
    raw = {"backend": "litellm", "model": "openai/fake-model", "api_base": base, "api_key": "sk"}
    agent = LiteLLMAgent("probe", LiteLLMAgentConfig.model_validate({**raw, "client": client}), {})
    try:
        reply = await agent.run(make_turn("ping"))
        print(json.dumps({"text": reply.text, "usage": dict(reply.usage or {})}))
    except AgentError as exc:
        print(json.dumps({"error": exc.reason.value}))
    finally:
        await agent.aclose()


if __name__ == "__main__":
    asyncio.run(main(sys.argv[1], sys.argv[2]))
