"""`tools:` and `mcp_servers:` in gateway.yaml: shapes, cross-checks, exit 78 naming the key."""

from __future__ import annotations

import textwrap
from pathlib import Path

from chatgate.config.agent_models import LiteLLMAgentConfig
from chatgate.policies.tools import Approval
from tests.config.support import assert_issue, load, load_error, yaml_text

GOOD = """
mcp_servers:
  github:
    command: npx
    args: [-y, "@modelcontextprotocol/server-github"]
    env: {GITHUB_TOKEN: "${GITHUB_TOKEN}"}
    cwd: /srv/mcp
  search:
    url: http://127.0.0.1:9000/mcp
    headers: {Authorization: "Bearer ${SEARCH_TOKEN}"}
agents:
  ops:
    backend: litellm
    model: openai/gpt-4o
    tools: [github.*, search.web]
  careful:
    backend: litellm
    model: anthropic/claude-sonnet-4
    tools:
      allow: ["github.*"]
      deny: ["github.delete_*"]
      approval: {"github.create_*": deny}
      max_steps: 3
      budget_tokens: 20000
"""


def ops_tools(tools: str, before: str = "", after: str = "") -> str:
    """gateway.yaml with agent `ops` (litellm, openai/gpt-4o) whose `tools:` block is `tools`,
    between the sections `before` and `after`."""
    agent = "agents:\n  ops:\n    backend: litellm\n    model: openai/gpt-4o\n    tools:\n"
    return yaml_text(before) + agent + textwrap.indent(yaml_text(tools), " " * 6) + yaml_text(after)


def test_good_config_loads(tmp_path: Path) -> None:
    env = {"GITHUB_TOKEN": "ghp_secret_value", "SEARCH_TOKEN": "s3cr3t-search"}
    config = load(tmp_path, GOOD, env).config
    ops, careful = config.agents["ops"], config.agents["careful"]
    assert isinstance(ops, LiteLLMAgentConfig) and ops.tools is not None
    assert ops.tools.allow == ["github.*", "search.web"]  # the list shorthand
    assert isinstance(careful, LiteLLMAgentConfig) and careful.tools is not None
    assert careful.tools.approval == {"github.create_*": Approval.DENY}
    assert config.mcp_servers["github"].transport == "stdio"
    assert config.mcp_servers["search"].transport == "http"


def test_provider_without_native_tool_calls_fails_at_load(tmp_path: Path) -> None:
    text = """
    agents:
      local:
        backend: litellm
        model: ollama/llama3
        tools: ["*"]
    """
    error = load_error(tmp_path, text)
    assert_issue(error, "agents.local.model", 4, "provider 'ollama' of model 'ollama/llama3'")


def test_fallback_without_native_tool_calls_is_named(tmp_path: Path) -> None:
    text = """
    agents:
      mixed:
        backend: litellm
        model: openai/gpt-4o
        fallbacks: [huggingface/zephyr]
        tools: ["*"]
    """
    error = load_error(tmp_path, text)
    assert_issue(error, "agents.mixed.fallbacks[0].model", 5, "no native tool calling")


def test_native_assertion_lets_an_unknown_provider_through(tmp_path: Path) -> None:
    text = """
    agents:
      local:
        backend: litellm
        model: ollama/llama3
        tools: {allow: ["*"], native: true}
    """
    assert load(tmp_path, text).config.agents["local"].backend == "litellm"


def test_allow_naming_an_unknown_server(tmp_path: Path) -> None:
    text = ops_tools(
        "allow: [github.*, jira.search]", before="mcp_servers:\n  github: {command: npx}\n"
    )
    error = load_error(tmp_path, text)
    assert_issue(error, "agents.ops.tools.allow[1]", 8, "MCP server 'jira'")


def test_server_needs_exactly_one_transport(tmp_path: Path) -> None:
    text = """
    mcp_servers:
      both:
        command: npx
        url: http://127.0.0.1:1/mcp
    """
    error = load_error(tmp_path, text)
    assert_issue(error, "mcp_servers.both", 2, "exactly one of `command`")


def test_secret_env_and_headers_stay_out_of_errors(tmp_path: Path) -> None:
    text = """
    mcp_servers:
      web:
        url: http://127.0.0.1:1/mcp
        headers: {Authorization: "Bearer ${TOKEN}"}
        cwd: /tmp
    """
    error = load_error(tmp_path, text, {"TOKEN": "tok-canary-98765"})
    assert "tok-canary-98765" not in error.render()
    assert_issue(error, "mcp_servers.web", 2, "apply to a stdio `command`")


def test_status_render_lists_servers_tools_and_why() -> None:
    from chatgate.cli.status_cmd import mcp_lines

    lines = mcp_lines(
        [
            {"name": "github", "transport": "stdio", "state": "ready", "tools": ["github.a"]},
            {
                "name": "search",
                "transport": "http",
                "state": "parked",
                "tools": [],
                "restarts": 10,
                "error": "ConnectError; restart budget spent",
            },
        ]
    )
    assert lines == [
        "mcp server github (stdio): ready, 1 tools",
        "    tools: github.a",
        "mcp server search (http): parked, 0 tools, 10 restarts",
        "    why: ConnectError; restart budget spent",
    ]


def test_changed_mcp_servers_need_a_restart() -> None:
    from chatgate.config.hot import restart_only_changes
    from chatgate.config.models import GatewayConfig

    old = GatewayConfig.model_validate({"mcp_servers": {"a": {"command": "x"}}})
    new = GatewayConfig.model_validate({"mcp_servers": {"a": {"command": "y"}}})
    assert restart_only_changes(old, new) == ["mcp_servers"]
    assert restart_only_changes(old, old) == []


def test_gateway_is_reserved_and_send_to_takes_addresses(tmp_path: Path) -> None:
    text = ops_tools(
        'allow: [gateway.send_message]\nsend_to: {ops: "not an address"}\n',
        before="mcp_servers:\n  gateway: {command: npx}\n",
    )
    error = load_error(tmp_path, text)
    assert_issue(error, "agents.ops.tools.send_to.ops", 9, "has the wrong format")


def test_gateway_server_name_is_refused(tmp_path: Path) -> None:
    text = """
    mcp_servers:
      gateway: {command: npx}
    """
    error = load_error(tmp_path, text)
    assert_issue(error, "mcp_servers.gateway", 2, "built-in tools")


def test_ask_approval_with_timeout_and_an_approver_chat(tmp_path: Path) -> None:
    tools = """
    allow: ["gateway.*"]
    approval: {"gateway.send_message": ask, "*": auto}
    approval_timeout_s: 120
    approver: "webhook:ops-room"
    """
    text = ops_tools(tools, after="channels:\n  webhook: {routes: {}}\n")
    ops = load(tmp_path, text).config.agents["ops"]
    assert isinstance(ops, LiteLLMAgentConfig) and ops.tools is not None
    assert ops.tools.approval["gateway.send_message"] is Approval.ASK
    assert (ops.tools.approval_timeout_s, ops.tools.approver) == (120, "webhook:ops-room")
    assert (
        LiteLLMAgentConfig.model_validate(
            {"backend": "litellm", "model": "openai/x", "tools": {"approval": {"*": "ask"}}}
        ).tools.approval_timeout_s
        == 300
    )  # type: ignore[union-attr]


def test_approver_must_name_a_configured_channel(tmp_path: Path) -> None:
    text = ops_tools('allow: ["gateway.*"]\napproval: {"*": ask}\napprover: "slack:COPS"\n')
    error = load_error(tmp_path, text)
    assert_issue(error, "agents.ops.tools.approver", 8, "channel 'slack'")


def test_unknown_approval_and_bad_approver_are_refused(tmp_path: Path) -> None:
    text = ops_tools('approval: {"*": maybe}')
    assert_issue(
        load_error(tmp_path, text), "agents.ops.tools.approval.*", 6, "'auto', 'ask' or 'deny'"
    )


def test_schedule_tools_need_the_schedule_section(tmp_path: Path) -> None:
    text = ops_tools("allow: [gateway.send_message, gateway.schedule]\n")
    error = load_error(tmp_path, text)
    assert_issue(error, "agents.ops.tools.allow[1]", 6, "needs agents.ops.tools.schedule")
    enabled = ops_tools("allow: [gateway.send_message, gateway.schedule]\nschedule: true\n")
    agent = load(tmp_path, enabled).config.agents["ops"]
    assert isinstance(agent, LiteLLMAgentConfig) and agent.tools is not None
    assert agent.tools.schedule is not None and agent.tools.schedule.max_jobs == 5
