"""Cross-checks of agents' `tools:` against their models and the configured `mcp_servers:`.

A model whose provider has no native tool calling fails here, at config load, not at the
first message that needs a tool.
"""

from __future__ import annotations

from collections.abc import Collection

from chatgate.config.agent_models import LiteLLMAgentConfig
from chatgate.config.errors import ConfigIssue, KeyPath
from chatgate.config.models import GatewayConfig
from chatgate.config.source import YamlSource
from chatgate.config.tool_models import BUILTIN_SERVER, SCHEDULE_TOOLS, AgentToolsConfig
from chatgate.policies.tools import native_tool_calls

_GLOB_CHARS = frozenset("*?[")


def provider_of(model: str) -> str:
    """litellm's provider prefix of ``model`` (bare names are OpenAI's)."""
    return model.split("/", 1)[0] if "/" in model else "openai"


def tool_issues(
    config: GatewayConfig, src: YamlSource, channels: Collection[str] | None = None
) -> list[ConfigIssue]:
    issues: list[ConfigIssue] = []
    servers = set(config.mcp_servers)
    if BUILTIN_SERVER in servers:
        issues.append(
            src.issue(
                ("mcp_servers", BUILTIN_SERVER),
                f"'{BUILTIN_SERVER}' names chatgate's built-in tools; pick another server name",
            )
        )
    for name, agent in config.agents.items():
        if isinstance(agent, LiteLLMAgentConfig) and agent.tools is not None:
            issues += _model_issues(name, agent, src)
            issues += _approver_issues(name, agent.tools, src, channels)
            issues += _allow_issues(name, agent.tools, src, servers)
    return issues


def _model_issues(name: str, agent: LiteLLMAgentConfig, src: YamlSource) -> list[ConfigIssue]:
    """Each model of the agent (its fallbacks too) must call tools natively."""
    if agent.tools is None or agent.tools.native:
        return []
    models: list[tuple[KeyPath, str]] = [(("model",), agent.model)] + [
        (("fallbacks", i, "model"), f.model) for i, f in enumerate(agent.fallbacks)
    ]
    return [
        src.issue(
            ("agents", name, *key),
            f"provider '{provider_of(model)}' of model '{model}' has no native tool "
            "calling, which agents.{0}.tools needs; use a model that has it, "
            "remove `tools`, or set tools.native: true if this model does "
            "call tools natively".format(name),
        )
        for key, model in models
        if not native_tool_calls(provider_of(model))
    ]


def _approver_issues(
    name: str, tools: AgentToolsConfig, src: YamlSource, channels: Collection[str] | None
) -> list[ConfigIssue]:
    if tools.approver is None or channels is None:
        return []
    channel = tools.approver.split(":", 1)[0]
    if channel in channels:
        return []
    return [
        src.issue(
            ("agents", name, "tools", "approver"),
            f"'{tools.approver}' names channel '{channel}', which is not in channels",
        )
    ]


def _allow_issues(
    name: str, tools: AgentToolsConfig, src: YamlSource, servers: set[str]
) -> list[ConfigIssue]:
    """Each `allow` pattern names a configured server (or the built-in one)."""
    issues = []
    for index, pattern in enumerate(tools.allow):
        where = ("agents", name, "tools", "allow", index)
        if pattern in SCHEDULE_TOOLS and tools.schedule is None:
            issues.append(
                src.issue(
                    where,
                    f"'{pattern}' needs agents.{name}.tools.schedule "
                    "(`schedule: true` for the defaults)",
                )
            )
        server = pattern.split(".", 1)[0]
        if _GLOB_CHARS.isdisjoint(server) and server not in servers | {BUILTIN_SERVER}:
            listed = ", ".join(sorted(servers)) or "none configured"
            issues.append(
                src.issue(
                    where,
                    f"'{pattern}' names MCP server '{server}', which is not in "
                    f"mcp_servers ({listed})",
                )
            )
    return issues
