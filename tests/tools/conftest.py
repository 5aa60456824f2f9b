"""Fixtures for tool tests: a FakeLLM and an MCP hub with the SDK-built fake server over stdio."""

from __future__ import annotations

import sys
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest_asyncio

from chatgate.agents.litellm_agent import LiteLLMAgent
from chatgate.agents.mcp.hub import McpHub
from chatgate.clock import SystemClock
from chatgate.config.agent_models import LiteLLMAgentConfig
from chatgate.config.tool_models import McpServerConfig
from tests.channels.telegram.support import telegram_config
from tests.fakes.llm import FakeLLM
from tests.fakes.telegram import FakeTelegram

ROOT = Path(__file__).resolve().parents[2]


# The fake MCP server (as `stdio_server` below) as the `mcp_servers:` section of a gateway.yaml.
SERVERS = f"""mcp_servers:
  fake:
    command: {sys.executable}
    args: [-m, tests.fakes.mcp_server, stdio]
    cwd: {ROOT}
    startup_timeout_s: 60
"""


def telegram_tools_config(
    tmp_path: Path, tg: FakeTelegram, llm: FakeLLM, agent: str, channel: str
) -> Path:
    """A Telegram gateway.yaml with the fake MCP server and the agent lines `agent`; the model
    call may take 60 s (tool turns on a loaded machine)."""
    config = telegram_config(tmp_path, tg, llm, gateway=SERVERS, agent=agent, channel=channel)
    config.write_text(config.read_text().replace("timeout_s: 10\n", "timeout_s: 60\n", 1))
    return config


def stdio_server(**extra: Any) -> McpServerConfig:
    """The fake MCP server (tests/fakes/mcp_server.py) as a stdio `mcp_servers:` entry."""
    raw: dict[str, Any] = {
        "command": sys.executable,
        "args": ["-m", "tests.fakes.mcp_server", "stdio"],
        "cwd": str(ROOT),
        "startup_timeout_s": 60,  # importing the SDK takes seconds on a loaded machine
    }
    raw.update(extra)
    return McpServerConfig.model_validate(raw)


def tool_agent(base: str, hub: McpHub, **tools: Any) -> LiteLLMAgent:
    """A litellm agent on the fake model whose `tools:` are ``tools`` (default: all of fake)."""
    settings: dict[str, Any] = {"allow": ["fake.*"], "tool_timeout_s": 10}
    settings.update(tools)
    stream = settings.pop("stream", False)
    client = settings.pop("client", "auto")  # auto: the openai SDK route; litellm
    config = LiteLLMAgentConfig.model_validate(
        {
            "backend": "litellm",
            "model": "openai/fake-model",
            "api_base": base,
            "api_key": "sk-test-canary-4711",
            "timeout_s": 10,
            "stream": stream,
            "client": client,
            "tools": settings,
        }
    )
    assert config.tools is not None
    return LiteLLMAgent("llm", config, {}, hub.source_for("llm", config.tools))


# One event loop per module: the MCP server subprocess (seconds to import the SDK) is shared by
# a module's tests; each test gets a fresh FakeLLM.
@pytest_asyncio.fixture(loop_scope="module")
async def fake() -> AsyncIterator[FakeLLM]:
    async with FakeLLM() as server:
        yield server


@pytest_asyncio.fixture(loop_scope="module", scope="module")
async def hub() -> AsyncIterator[McpHub]:
    mcp = McpHub({"fake": stdio_server()}, SystemClock())
    try:
        yield mcp
    finally:
        await mcp.stop()
