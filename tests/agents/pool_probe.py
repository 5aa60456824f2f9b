"""Run ``N`` concurrent litellm-agent turns against ``BASE`` in a fresh process; print a JSON line.

A fresh process because litellm reads its connection-pool bound once, at import: the test process
may have imported litellm before the agent's settings applied.
"""

from __future__ import annotations

import asyncio
import json
import sys

from chatgate.agents.litellm_agent import LiteLLMAgent
from chatgate.agents.litellm_import import import_litellm
from chatgate.config.agent_models import LiteLLMAgentConfig
from tests.agents.helpers import make_turn


async def main(base: str, calls: int) -> None:
    litellm = import_litellm()
    config = LiteLLMAgentConfig.model_validate(
        {"backend": "litellm", "model": "openai/fake-model", "api_base": base, "api_key": "sk-t"}
    )
    agent = LiteLLMAgent("probe", config, {})
    replies = await asyncio.gather(*(agent.run(make_turn(f"m{i}")) for i in range(calls)))
    print(
        json.dumps(
            {
                "answered": sum(r.text == f"echo: m{i}" for i, r in enumerate(replies)),
                "limit": litellm.constants.AIOHTTP_CONNECTOR_LIMIT,
                "limit_per_host": litellm.constants.AIOHTTP_CONNECTOR_LIMIT_PER_HOST,
            }
        )
    )


if __name__ == "__main__":
    asyncio.run(main(sys.argv[1], int(sys.argv[2])))
