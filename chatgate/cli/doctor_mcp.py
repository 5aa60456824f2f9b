"""`doctor` checks for MCP servers: each one starts, answers the handshake and lists its tools."""

from __future__ import annotations

import asyncio
from collections.abc import Mapping

from chatgate.agents.mcp.server import McpServer, ServerState
from chatgate.clock import SystemClock
from chatgate.config.findings import Finding, Level
from chatgate.config.tool_models import McpServerConfig

SHOWN_TOOLS = 12


async def check_mcp_servers(servers: Mapping[str, McpServerConfig], offline: bool) -> list[Finding]:
    if not servers:
        return [Finding("mcp", Level.SKIP, "no mcp_servers configured")]
    if offline:
        return [Finding(f"mcp.{name}", Level.SKIP, "--offline: not started") for name in servers]
    return list(await asyncio.gather(*(_check(name, cfg) for name, cfg in servers.items())))


async def _check(name: str, config: McpServerConfig) -> Finding:
    # One attempt: the restart ladder is the daemon's business, not the doctor's.
    server = McpServer(
        name, config.model_copy(update={"restart_budget_per_hour": 1}), SystemClock()
    )
    key = f"mcp_servers.{name}"
    try:
        tools = await server.tools()
        if server.state is ServerState.READY:
            names = [t.name for t in tools]
            listed = ", ".join(names[:SHOWN_TOOLS]) + (" …" if len(names) > SHOWN_TOOLS else "")
            detail = f"{config.transport} server ready, {len(names)} tools: {listed or 'none'}"
            return Finding(f"mcp.{name}", Level.OK, detail, key=key)
        where = "command, args and cwd" if config.transport == "stdio" else "url and headers"
        return Finding(
            f"mcp.{name}",
            Level.FAIL,
            f"{config.transport} server did not start: {server.error or server.state.value}",
            f"check {key} ({where}); run the server by hand to see its own error",
            key=key,
        )
    finally:
        await server.stop()
