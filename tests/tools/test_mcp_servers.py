"""MCP servers under supervision: crash mid-call, restart, parking, streamable HTTP with headers."""

from __future__ import annotations

import asyncio
import sys
from collections.abc import AsyncIterator

import pytest
import pytest_asyncio

from chatgate.agents.base import AgentError
from chatgate.agents.mcp.hub import McpHub
from chatgate.agents.mcp.server import McpServer, ServerState
from chatgate.clock import SystemClock
from chatgate.config.tool_models import AgentToolsConfig, McpServerConfig
from chatgate.model.reasons import FailureReason
from tests.agents.helpers import make_turn
from tests.fakes.clock import ManualClock
from tests.fakes.llm import FakeLLM, ToolCall, ToolCalls
from tests.support.waiting import eventually
from tests.tools.conftest import ROOT, stdio_server, tool_agent

pytestmark = pytest.mark.asyncio(loop_scope="module")
HTTP_TOKEN = "mcp-header-canary-5150"


@pytest_asyncio.fixture(loop_scope="module")
async def http_port() -> AsyncIterator[int]:
    """The fake MCP server over streamable HTTP on 127.0.0.1, requiring a bearer token."""
    proc = await asyncio.create_subprocess_exec(
        sys.executable,
        "-m",
        "tests.fakes.mcp_server",
        "http",
        "--token",
        HTTP_TOKEN,
        cwd=ROOT,
        stdout=asyncio.subprocess.PIPE,
    )
    assert proc.stdout is not None
    line = await asyncio.wait_for(proc.stdout.readline(), 30)
    try:
        yield int(line.split()[1])
    finally:
        proc.terminate()
        await proc.wait()


async def test_crash_mid_call_fails_the_turn_and_the_server_restarts(fake: FakeLLM) -> None:
    hub = McpHub({"fake": stdio_server(env={"FAKE_MCP_TAG": "first"})}, SystemClock())
    server = hub.servers["fake"]
    try:
        fake.script(ToolCalls.of(ToolCall("fake__crash", {})))
        with pytest.raises(AgentError) as caught:
            await tool_agent(fake.base_url, hub).run(make_turn())
        assert caught.value.reason is FailureReason.TOOL_FAILED
        assert server.status().tools == ()  # withdrawn at once, with the reason
        assert "connection closed" in server.status().error

        await eventually(lambda: server.state is ServerState.READY, 30, "restart")
        assert server.restarts == 1
        fake.script(ToolCalls.of(ToolCall("fake__whoami", {})), "back")
        reply = await tool_agent(fake.base_url, hub).run(make_turn())
        assert reply.text == "back"
        assert "tag=first" in fake.requests[-1].messages[-1]["content"]
    finally:
        await hub.stop()


async def test_a_stdio_server_gets_the_safe_default_env_and_only_the_names_passed_through(
    fake: FakeLLM, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("CHATGATE_TEST_PASSED", "passed-value")
    monkeypatch.setenv("CHATGATE_TEST_HIDDEN", "hidden-value")
    config = stdio_server(env_passthrough=["CHATGATE_TEST_PASSED", "CHATGATE_TEST_ABSENT"])
    hub = McpHub({"fake": config}, SystemClock())
    try:
        fake.script(
            ToolCalls.of(
                ToolCall("fake__whoami", {"variable": "CHATGATE_TEST_PASSED"}, id="a"),
                ToolCall("fake__whoami", {"variable": "CHATGATE_TEST_HIDDEN"}, id="b"),
                ToolCall("fake__whoami", {"variable": "PATH"}, id="c"),
            ),
            "ok",
        )
        await tool_agent(fake.base_url, hub).run(make_turn())
        passed, hidden, path = (m["content"] for m in fake.requests[-1].messages[-3:])
        assert "CHATGATE_TEST_PASSED=passed-value" in passed
        assert "CHATGATE_TEST_HIDDEN=<unset>" in hidden  # the daemon's env is not inherited
        assert "PATH=<unset>" not in path  # the SDK's safe default set is
    finally:
        await hub.stop()


DIES = "import sys; sys.stderr.write('boom: GITHUB_TOKEN is not set\\n'); sys.exit(3)"


async def test_a_server_that_dies_at_start_releases_the_waiting_turn_and_says_why() -> None:
    """The waiting call ends with the first failed attempt, not after startup_timeout_s (the
    restart backoff sleeps on a manual clock that never moves: no second attempt happens)."""
    config = McpServerConfig(command=sys.executable, args=["-c", DIES], startup_timeout_s=600)
    server = McpServer("dead", config, ManualClock())
    waiting = asyncio.ensure_future(server.tools())
    try:
        await eventually(lambda: server.state is ServerState.RESTARTING, 30, "the first attempt")
        for _ in range(5):
            await asyncio.sleep(0)
        assert waiting.done() and waiting.result() == ()
        assert server.restarts == 1
        error = server.status().error
        assert "exited (exit status 3)" in error and "boom: GITHUB_TOKEN is not set" in error
        assert await server.tools() == ()  # a later turn does not wait either
    finally:
        waiting.cancel()
        await server.stop()


async def test_unstartable_server_is_parked_and_the_agent_keeps_answering(
    fake: FakeLLM,
) -> None:
    broken = McpServerConfig(command="/nonexistent/mcp-server", restart_budget_per_hour=1)
    hub = McpHub({"fake": broken}, SystemClock())
    try:
        reply = await tool_agent(fake.base_url, hub).run(make_turn("hi"))
        assert reply.text == "echo: hi"
        assert "tools" not in fake.requests[0].body  # nothing offered while the server is down
        server = hub.servers["fake"]
        await eventually(lambda: server.state is ServerState.PARKED, 30, "parked")
        status = server.status()
        assert status.tools == ()
        assert "command not found" in status.error and "budget" in status.error
    finally:
        await hub.stop()


async def test_streamable_http_server_gets_headers_from_config(
    fake: FakeLLM, http_port: int
) -> None:
    server = McpServerConfig.model_validate(
        {
            "url": f"http://127.0.0.1:{http_port}/mcp",
            "headers": {"Authorization": f"Bearer {HTTP_TOKEN}"},
        }
    )
    hub = McpHub({"web": server}, SystemClock())
    try:
        fake.script(ToolCalls.of(ToolCall("web__add", {"a": 1, "b": 1})), "two")
        reply = await tool_agent(fake.base_url, hub, allow=["web.add"]).run(make_turn())
        assert reply.text == "two"
        assert fake.requests[1].messages[-1]["content"] == "2"
        assert [t["function"]["name"] for t in fake.requests[0].body["tools"]] == ["web__add"]
        assert hub.statuses()[0].to_dict()["state"] == "ready"
    finally:
        await hub.stop()


async def test_wrong_header_parks_without_leaking_it(http_port: int) -> None:
    server = McpServerConfig.model_validate(
        {
            "url": f"http://127.0.0.1:{http_port}/mcp",
            "headers": {"Authorization": "Bearer wrong-canary-777"},
            "restart_budget_per_hour": 1,
        }
    )
    hub = McpHub({"web": server}, SystemClock())
    try:
        tools = await hub.source_for("a", AgentToolsConfig(allow=["web.*"])).tools()
        assert tools == []
        parked = hub.servers["web"]
        await eventually(lambda: parked.state is ServerState.PARKED, 30, "parked")
        status = hub.statuses()[0].to_dict()
        assert status["state"] == "parked"
        assert "wrong-canary-777" not in str(status)
    finally:
        await hub.stop()


async def test_passed_through_variables_that_look_secret_are_masked_like_env(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("CHATGATE_TEST_API_KEY", "passed-key-6d1e")
    monkeypatch.setenv("CHATGATE_TEST_REGION", "eu-west")
    config = stdio_server(
        env={"OWN_TOKEN": "own-token-2b7c"},
        env_passthrough=["CHATGATE_TEST_API_KEY", "CHATGATE_TEST_REGION"],
    )
    hub = McpHub({"fake": config}, SystemClock())
    assert sorted(hub.secrets()) == ["own-token-2b7c", "passed-key-6d1e"]
