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
from chatgate.config.tool_models import BUILTIN_SERVER, SCHEDULE_TOOLS
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
        if not isinstance(agent, LiteLLMAgentConfig) or agent.tools is None:
            continue
        tools = agent.tools
        base = ("agents", name)
        if not tools.native:
            models: list[tuple[KeyPath, str]] = [(("model",), agent.model)] + [
                (("fallbacks", i, "model"), f.model) for i, f in enumerate(agent.fallbacks)
            ]
            for key, model in models:
                provider = provider_of(model)
                if not native_tool_calls(provider):
                    issues.append(
                        src.issue(
                            (*base, *key),
                            f"provider '{provider}' of model '{model}' has no native tool "
                            "calling, which agents.{0}.tools needs; use a model that has it, "
                            "remove `tools`, or set tools.native: true if this model does "
                            "call tools natively".format(name),
                        )
                    )
        if tools.approver is not None and channels is not None:
            channel = tools.approver.split(":", 1)[0]
            if channel not in channels:
                issues.append(
                    src.issue(
                        (*base, "tools", "approver"),
                        f"'{tools.approver}' names channel '{channel}', which is not in channels",
                    )
                )
        for index, pattern in enumerate(tools.allow):
            if pattern in SCHEDULE_TOOLS and tools.schedule is None:
                issues.append(
                    src.issue(
                        (*base, "tools", "allow", index),
                        f"'{pattern}' needs agents.{name}.tools.schedule "
                        "(`schedule: true` for the defaults)",
                    )
                )
            server = pattern.split(".", 1)[0]
            if _GLOB_CHARS.isdisjoint(server) and server not in servers | {BUILTIN_SERVER}:
                listed = ", ".join(sorted(servers)) or "none configured"
                issues.append(
                    src.issue(
                        (*base, "tools", "allow", index),
                        f"'{pattern}' names MCP server '{server}', which is not in "
                        f"mcp_servers ({listed})",
                    )
                )
    return issues
