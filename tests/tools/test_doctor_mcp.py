"""`chatgate doctor` starts each MCP server once and lists its tools, or says how to fix it."""

from __future__ import annotations

from chatgate.cli.doctor_mcp import check_mcp_servers
from chatgate.config.findings import Level
from chatgate.config.tool_models import McpServerConfig
from tests.tools.conftest import stdio_server


async def test_doctor_lists_tools_and_names_the_broken_server() -> None:
    servers = {
        "fake": stdio_server(),
        "gone": McpServerConfig(command="/nonexistent/mcp-server", env={"T": "doctor-canary-1"}),
    }
    good, bad = await check_mcp_servers(servers, offline=False)

    assert good.level is Level.OK and good.check == "mcp.fake"
    assert "7 tools" in good.detail and "fake.lookup_order" in good.detail
    assert bad.level is Level.FAIL and bad.key == "mcp_servers.gone"
    assert "command not found" in bad.detail and "command, args and cwd" in (bad.fix or "")
    assert "doctor-canary-1" not in bad.detail + (bad.fix or "")


async def test_doctor_offline_and_unconfigured() -> None:
    [offline] = await check_mcp_servers({"fake": stdio_server()}, offline=True)
    assert offline.level is Level.SKIP
    [none] = await check_mcp_servers({}, offline=False)
    assert none.level is Level.SKIP
