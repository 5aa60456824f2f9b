"""All configured MCP servers, and each agent's filtered view of their tools."""

from __future__ import annotations

import asyncio
from collections.abc import Mapping, Sequence
from fnmatch import fnmatchcase
from typing import Any

from chatgate.agents.mcp.server import McpServer, ServerStatus
from chatgate.agents.tools.builtin import Sender, builtin_specs, call_builtin
from chatgate.agents.tools.schedule import JobBackend, call_schedule_tool, schedule_specs
from chatgate.agents.tools.types import ToolContext, ToolOutcome, ToolSpec, ToolUnavailable
from chatgate.clock import Clock
from chatgate.config.tool_models import (
    BUILTIN_SERVER,
    SCHEDULE_TOOLS,
    AgentToolsConfig,
    McpServerConfig,
)
from chatgate.policies.tools import tool_allowed


class McpHub:
    """Owns one `McpServer` per `mcp_servers:` entry; none starts before an agent needs it."""

    def __init__(self, servers: Mapping[str, McpServerConfig], clock: Clock) -> None:
        self.servers = {name: McpServer(name, cfg, clock) for name, cfg in servers.items()}
        self.clock = clock
        self.sender: Sender | None = None  # the gateway's delivery, for gateway.send_message
        self.jobs: JobBackend | None = None  # the gateway's scheduler, for gateway.schedule

    def source_for(self, agent: str, config: AgentToolsConfig) -> AgentTools:
        return AgentTools(self, config)

    def statuses(self) -> list[ServerStatus]:
        return [server.status() for server in self.servers.values()]

    def secrets(self) -> list[str]:
        return [s for server in self.servers.values() for s in server.secrets()]

    async def stop(self) -> None:
        await asyncio.gather(*(server.stop() for server in self.servers.values()))


class AgentTools:
    """The tools one agent may see: servers its allow globs name, filtered by allow and deny.

    The schedule tools need the turn they run in: ``bound(ctx)`` gives a turn's view.
    """

    def __init__(
        self, hub: McpHub, config: AgentToolsConfig, ctx: ToolContext | None = None
    ) -> None:
        self._hub = hub
        self._config = config
        self._ctx = ctx
        self._allow = tuple(config.allow)
        self._deny = tuple(config.deny)
        self._send_to = dict(config.send_to)
        self._builtins = [
            spec
            for spec in builtin_specs(self._send_to)
            if tool_allowed(spec.name, self._allow, self._deny)
        ]
        self._scheduling = config.schedule is not None and any(
            tool_allowed(name, self._allow, self._deny) for name in SCHEDULE_TOOLS
        )
        self._servers = [
            server
            for name, server in hub.servers.items()
            if any(fnmatchcase(name, pattern.split(".", 1)[0]) for pattern in self._allow)
        ]

    def secrets(self) -> list[str]:
        return self._hub.secrets()

    def bound(self, ctx: ToolContext) -> AgentTools:
        """These tools for one turn (whose chat the schedule tools act on)."""
        return AgentTools(self._hub, self._config, ctx) if self._scheduling else self

    def _schedule_specs(self) -> list[ToolSpec]:
        schedule = self._config.schedule
        if not self._scheduling or schedule is None or self._ctx is None:
            return []
        specs = schedule_specs(schedule, self._hub.clock.time())
        return [s for s in specs if tool_allowed(s.name, self._allow, self._deny)]

    async def tools(self) -> Sequence[ToolSpec]:
        """Live tools only: a server that is down contributes none (its status says why)."""
        listed = await asyncio.gather(*(server.tools() for server in self._servers))
        return (
            self._builtins
            + self._schedule_specs()
            + [
                spec
                for specs in listed
                for spec in specs
                if tool_allowed(spec.name, self._allow, self._deny)
            ]
        )

    async def call(self, name: str, arguments: Mapping[str, Any]) -> ToolOutcome:
        server_name, _, tool = name.partition(".")
        schedule = self._config.schedule
        if name in SCHEDULE_TOOLS and schedule is not None and self._ctx is not None:
            if not tool_allowed(name, self._allow, self._deny):
                return ToolOutcome(f"error: no built-in tool {name!r}", is_error=True)
            now = self._hub.clock.time()
            return await call_schedule_tool(
                name, arguments, self._ctx, schedule, self._hub.jobs, now
            )
        if server_name == BUILTIN_SERVER:
            return await call_builtin(name, arguments, self._send_to, self._hub.sender)
        server = self._hub.servers.get(server_name)
        if server is None or server not in self._servers or not tool:
            raise ToolUnavailable(f"no MCP server for {name}")
        return await server.call(tool, arguments)
