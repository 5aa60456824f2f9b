"""The gateway's side of tools: the MCP hub, per-tool metrics and the one object a turn calls.

``TurnTools`` is the turn's hook: it sees the agent's ``tool_call`` events (metrics, a log line,
the trail the journal keeps for ``chatgate why``) and gives the turn its outer deadline.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping
from typing import Any

from prometheus_client import CollectorRegistry, Counter, Histogram

from chatgate.agents.base import EventCallback, ProgressCallback
from chatgate.agents.mcp.hub import McpHub
from chatgate.agents.tools.loop import loop_deadline_s
from chatgate.agents.tools.types import TOOL_CALL_EVENT, TOOL_STARTED_EVENT
from chatgate.config.agent_models import AgentConfig, LiteLLMAgentConfig

log = logging.getLogger(__name__)

TRAIL_MAX_CALLS = 50  # calls kept per turn in the journal (the count says how many ran)
_TOOL_BUCKETS = (0.01, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120)


class ToolMetrics:
    """``chatgate_tool_calls_total{agent,tool,status}``, ``chatgate_tool_seconds{tool}`` and
    ``chatgate_tool_approvals_total{agent,reason}``, ``chatgate_tool_tainted_total{agent,decision}``."""

    def __init__(self, registry: CollectorRegistry) -> None:
        self.calls = Counter(
            "chatgate_tool_calls_total",
            "Tool calls by how they ended",
            ["agent", "tool", "status"],
            registry=registry,
        )
        self.seconds = Histogram(
            "chatgate_tool_seconds",
            "Tool call duration",
            ["tool"],
            buckets=_TOOL_BUCKETS,
            registry=registry,
        )
        self.approvals = Counter(
            "chatgate_tool_approvals_total",
            "Tool approval prompts, answers and ignored presses by reason code",
            ["agent", "reason"],
            registry=registry,
        )
        self.tainted = Counter(
            "chatgate_tool_tainted_total",
            "Write tool calls of tainted turns (untrusted content in context) by decision",
            ["agent", "decision"],
            registry=registry,
        )
        self._children: dict[tuple[str, str, str], tuple[Any, Any]] = {}

    def observe(self, agent: str, tool: str, status: str, seconds: float) -> None:
        """Count one call; label children are looked up once per (agent, tool, status)."""
        key = (agent, tool, status)
        children = self._children.get(key)
        if children is None:
            counted = self.calls.labels(agent=agent, tool=tool, status=status)
            children = self._children[key] = (counted, self.seconds.labels(tool=tool))
        children[0].inc()
        children[1].observe(seconds)


class ToolRuntime:
    """What the gateway holds for tools: the MCP hub and the tool metrics."""

    def __init__(self, hub: McpHub, registry: CollectorRegistry) -> None:
        self.hub = hub
        self.metrics = ToolMetrics(registry)

    def status(self) -> list[dict[str, Any]]:
        return [s.to_dict() for s in self.hub.statuses()]

    async def stop(self) -> None:
        await self.hub.stop()


class TurnTools:
    """One turn's tool hook: forwards other agent events, collects the tool trail."""

    def __init__(
        self,
        runtime: ToolRuntime | None,
        forward: EventCallback,
        progress: ProgressCallback | None = None,
    ) -> None:
        self._runtime = runtime
        self._forward = forward
        self.on_progress = progress  # the status line (draft or status message), if shown
        self.trail: list[dict[str, Any]] = []
        self.calls = 0

    @staticmethod
    def deadline_s(config: AgentConfig) -> float:
        """Outer bound of the agent call: the whole tool loop when the agent has tools."""
        tools = config.tools if isinstance(config, LiteLLMAgentConfig) else None
        return loop_deadline_s(config.timeout_s, tools)

    def on_event(self, name: str, data: Mapping[str, Any]) -> None:
        if name == TOOL_CALL_EVENT:
            self._called(data)
        elif name != TOOL_STARTED_EVENT:
            self._forward(name, data)

    def _called(self, data: Mapping[str, Any]) -> None:
        self.calls += 1
        if len(self.trail) < TRAIL_MAX_CALLS:
            self.trail.append(dict(data))
        log.info("tool call", extra=dict(data))  # arguments arrive masked
        if self._runtime is not None:
            self._runtime.metrics.observe(
                str(data.get("agent")),
                str(data.get("tool")),
                str(data.get("status")),
                float(data.get("duration_ms", 0)) / 1000,
            )
            if data.get("taint"):  # asked (or refused) because untrusted content was in context
                decision = str(data.get("approval") or data.get("status"))
                self._runtime.metrics.tainted.labels(
                    agent=str(data.get("agent")), decision=decision
                ).inc()

    def record(self, answered: dict[str, Any]) -> None:
        """Put the trail into the journaled answer (read back by ``chatgate why``)."""
        if self.calls:
            answered["tools"] = {"calls": self.calls, "trail": self.trail}
