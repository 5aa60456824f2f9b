"""Build agent instances from the `agents:` section."""

from __future__ import annotations

from collections.abc import Mapping

from chatgate.agents.base import Agent
from chatgate.agents.echo import EchoAgent
from chatgate.agents.http_agent import HttpAgent
from chatgate.agents.litellm_agent import LiteLLMAgent
from chatgate.agents.mcp.hub import McpHub
from chatgate.agents.python_callable import PythonAgent
from chatgate.config.agent_models import (
    EchoAgentConfig,
    HttpAgentConfig,
    LiteLLMAgentConfig,
    PythonAgentConfig,
)
from chatgate.config.errors import ConfigError, ConfigIssue
from chatgate.config.models import GatewayConfig


def build_agents(
    config: GatewayConfig, env: Mapping[str, str] | None = None, tools: McpHub | None = None
) -> dict[str, Agent]:
    """One Agent per configured name; a python agent that cannot import is a config error.

    A litellm agent with `tools:` gets its filtered view of ``tools`` (the MCP servers).
    """
    agents: dict[str, Agent] = {}
    issues: list[ConfigIssue] = []
    for name, cfg in config.agents.items():
        if isinstance(cfg, LiteLLMAgentConfig):
            source = tools.source_for(name, cfg.tools) if tools and cfg.tools else None
            agents[name] = LiteLLMAgent(name, cfg, env, source)
        elif isinstance(cfg, EchoAgentConfig):
            agents[name] = EchoAgent(name, cfg)
        elif isinstance(cfg, HttpAgentConfig):
            agents[name] = HttpAgent(name, cfg)
        elif isinstance(cfg, PythonAgentConfig):
            try:
                agents[name] = PythonAgent(name, cfg)
            except Exception as exc:  # anything raised while importing the module
                issues.append(ConfigIssue(("agents", name, "function"), f"cannot load: {exc}"))
    if issues:
        raise ConfigError(issues)
    return agents
