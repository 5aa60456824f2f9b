"""Tools through the whole gateway: a GitHub webhook → an agent using the fake MCP server,
the trail in `chatgate why`, the servers in status, per-tool metrics."""

from __future__ import annotations

import json
import sys
import time
from pathlib import Path

from chatgate.channels.signatures import sign
from chatgate.cli.state_cmds import tool_line
from chatgate.state import admin
from tests.fakes.llm import FakeLLM, ToolCall, ToolCalls
from tests.harness import http, memory, running, url, write_config
from tests.tools.conftest import ROOT

SECRET = "whsec-tools-test-secret"
API_KEY = "sk-tools-canary-31337"


def config(tmp_path: Path, fake: FakeLLM) -> Path:
    return write_config(
        tmp_path,
        f"""
mcp_servers:
  fake:
    command: {sys.executable}
    args: [-m, tests.fakes.mcp_server, stdio]
    cwd: {ROOT}
agents:
  default:
    backend: litellm
    model: openai/fake-model
    api_base: {fake.base_url}
    api_key: {API_KEY}
    timeout_s: 20
    tools:
      allow: [fake.*, gateway.send_message]
      deny: [fake.crash]
      max_steps: 1
      send_to: {{ops: "memory:ops-room"}}
channels:
  memory: {{dm_policy: open}}
  webhook:
    routes:
      gh:
        path: /hooks/gh
        secret: {SECRET}
        signature: github
        prompt: "Look up order {{payload.order}} for issue: {{payload.issue.title}}"
""",
    )


async def test_webhook_agent_uses_mcp_tool_and_why_shows_the_trail(
    tmp_path: Path, fake_llm: FakeLLM
) -> None:
    fake_llm.script(
        ToolCalls.of(ToolCall("fake__lookup_order", {"order_id": "A-7", "api_token": "tok-zz-99"})),
        "Order A-7 has shipped.",
    )
    body = json.dumps({"order": "A-7", "issue": {"title": "Where is my order?"}}).encode()
    headers = {"X-GitHub-Event": "issues", "X-GitHub-Delivery": "d-tools-1"}
    headers.update(sign("github", SECRET, body, time.time()))
    async with running(config(tmp_path, fake_llm)) as gw, http() as client:
        async with client.post(url(gw, "/hooks/gh"), data=body, headers=headers) as resp:
            assert resp.status == 200
            data = await resp.json()
        status = await gw.status()
        trails = (await admin.why(gw.rt.state, "webhook", "gh:id-d-tools-1", None))["trails"]
        metrics = gw.rt.metrics.render().decode()

        # A reload that changes the agent keeps it on the running MCP servers.
        path = gw.rt.loaded.path
        path.write_text(
            path.read_text().replace("deny: [fake.crash]", "deny: [fake.crash, fake.slow]")
        )
        reloaded = await gw.reload()
        fake_llm.script("plain answer")
        headers2 = {"X-GitHub-Event": "issues", "X-GitHub-Delivery": "d-tools-2"}
        headers2.update(sign("github", SECRET, body, time.time()))
        async with client.post(url(gw, "/hooks/gh"), data=body, headers=headers2) as resp:
            assert (await resp.json())["reply"] == "plain answer"

        # A model that keeps asking for tools ends with the coded, visible tool_limit reply.
        echo = ToolCalls.of(ToolCall("fake__echo", {"text": "again"}))
        fake_llm.script(echo, echo)
        headers3 = {"X-GitHub-Event": "issues", "X-GitHub-Delivery": "d-tools-3"}
        headers3.update(sign("github", SECRET, body, time.time()))
        async with client.post(url(gw, "/hooks/gh"), data=body, headers=headers3) as resp:
            limited = await resp.json()
        [limited_trail] = (await admin.why(gw.rt.state, "webhook", "gh:id-d-tools-3", None))[
            "trails"
        ]

        # The built-in send_message tool goes out through the normal delivery path.
        send = ToolCall("gateway__send_message", {"target": "ops", "text": "order A-7 is late"})
        fake_llm.script(ToolCalls.of(send), "told ops")
        headers4 = {"X-GitHub-Event": "issues", "X-GitHub-Delivery": "d-tools-4"}
        headers4.update(sign("github", SECRET, body, time.time()))
        async with client.post(url(gw, "/hooks/gh"), data=body, headers=headers4) as resp:
            told = await resp.json()
        [sent] = await memory(gw).wait_sent(1)

    assert data["reply"] == "Order A-7 has shipped."
    assert reloaded["ok"] and reloaded["needs_process_restart"] == []
    assert told["reply"] == "told ops"
    assert (sent.target.chat_id, sent.text) == ("ops-room", "order A-7 is late")
    assert fake_llm.requests[-1].messages[-1]["content"] == "sent: message to ops"
    assert limited["reason_code"] == "tool_limit" and "`tools.max_steps`" in limited["reply"]
    assert (
        "(tool_limit)" in limited_trail["summary"]
        and "1 tool call (1 ok)" in limited_trail["summary"]
    )
    offered = {t["function"]["name"] for t in fake_llm.requests[-1].body["tools"]}
    assert "fake__lookup_order" in offered and "fake__slow" not in offered
    assert fake_llm.requests[0].last_user_text == "Look up order A-7 for issue: Where is my order?"
    assert "shipped (token ok: True)" in fake_llm.requests[1].messages[-1]["content"]
    [server] = status["mcp_servers"]
    assert server["name"] == "fake" and server["state"] == "ready"
    assert "fake.lookup_order" in server["tools"]
    [trail] = trails
    assert "1 tool call (1 ok)" in trail["summary"]
    [call] = trail["tools"]["trail"]
    assert call["tool"] == "fake.lookup_order" and call["arguments"]["api_token"] == "***"
    assert "tok-zz-99" not in json.dumps(trails)
    line = tool_line(call)
    assert line.startswith("step 1: fake.lookup_order(") and "→ ok in" in line
    assert (
        'chatgate_tool_calls_total{agent="default",status="ok",tool="fake.lookup_order"} 1.0'
        in metrics
    )
