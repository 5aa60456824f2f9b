"""Tool approval in the chat: Approve on Telegram (real python-telegram-bot, fake Bot API), Deny
on Slack (real slack-bolt, fake Web API), a press by another user ignored, and `chatgate why`
showing who decided."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from chatgate.cli.state_cmds import tool_line
from chatgate.state import admin
from tests.fakes.clock import eventually
from tests.fakes.llm import FakeLLM, ToolCall, ToolCalls
from tests.fakes.slack import FakeSlack
from tests.fakes.telegram import FakeTelegram
from tests.harness import running
from tests.slack.support import events_url, slack_config
from tests.telegram.helpers_b import settled
from tests.tools.conftest import SERVERS, telegram_tools_config

TIMEOUT = 60
ASK_ADD = """    tools:
      allow: [fake.add]
      approval: {"fake.*": ask}
"""


def keyboard(params: dict[str, Any]) -> list[dict[str, str]]:
    markup = params["reply_markup"]
    return [button for row in markup["inline_keyboard"] for button in row]


async def test_telegram_approve_press_runs_the_tool_and_others_presses_are_ignored(
    tmp_path: Path, fake_tg: FakeTelegram, fake_llm: FakeLLM
) -> None:
    config = telegram_tools_config(tmp_path, fake_tg, fake_llm, ASK_ADD, "    dm_policy: open")
    fake_llm.script(ToolCalls.of(ToolCall("fake__add", {"a": 2, "b": 3})), "It is 5.")
    async with running(config) as gw:
        fake_tg.dm(42, "what is 2+3?")
        [prompt] = await fake_tg.wait_for("sendMessage", timeout=TIMEOUT)
        approve, deny = keyboard(prompt.params)
        assert (approve["text"], deny["text"]) == ("Approve", "Deny")
        assert "fake.add" in prompt.params["text"] and '"a": 2' in prompt.params["text"]
        prompt_id = fake_tg.sent[0]["message_id"]

        fake_tg.callback(77, 42, prompt_id, approve["callback_data"])  # not the session's user
        await fake_tg.wait_for("answerCallbackQuery", timeout=TIMEOUT)
        other = await settled(gw, "telegram:cb:cbq-1")
        assert (other.stage, other.reason) == ("approval", "approval_not_approver")
        assert len(fake_llm.requests) == 1, "an ignored press resumed the turn"

        fake_tg.callback(42, 42, prompt_id, approve["callback_data"])
        # once approved the tool's status line goes out, and the answer takes its place
        [_, status] = await fake_tg.wait_for("sendMessage", count=2, timeout=TIMEOUT)
        assert status.params["text"] == "using fake.add…"
        await eventually(
            lambda: any(
                c.params["text"] == "It is 5." for c in fake_tg.calls_of("editMessageText")
            ),
            TIMEOUT,
            "the answer in place of the status line",
        )
        fake_tg.callback(42, 42, prompt_id, deny["callback_data"])  # too late: decided
        late = await settled(gw, "telegram:cb:cbq-3")
        metrics = gw.rt.metrics.render().decode()
        trails = (await admin.why(gw.rt.state, "telegram", None, "42"))["trails"]

    assert late.reason == "approval_already_decided"
    edits = [c.params["text"] for c in fake_tg.calls_of("editMessageText")]
    assert any("approved by" in t and "fake.add" in t for t in edits)
    second = fake_llm.requests[1]
    assert second.messages[-1]["role"] == "tool" and second.messages[-1]["content"] == "5"
    turn = next(t for t in trails if t.get("tools"))
    [call] = turn["tools"]["trail"]
    assert call["status"] == "ok" and call["approval"] == "approved"
    assert call["approver"] == "telegram:42"
    assert tool_line(call).endswith("; approved by telegram:42")
    assert 'chatgate_tool_approvals_total{agent="default",reason="approved"} 1.0' in metrics
    assert (
        'chatgate_tool_approvals_total{agent="default",reason="approval_not_approver"} 1.0'
        in metrics
    )


async def test_slack_deny_press_tells_the_model_and_the_tool_never_runs(
    tmp_path: Path, fake_slack: FakeSlack, fake_llm: FakeLLM
) -> None:
    agents = ""
    config = slack_config(tmp_path, fake_slack, fake_llm, gateway=SERVERS, agents=agents)
    text = config.read_text().replace("timeout_s: 10\n", "timeout_s: 60\n" + ASK_ADD, 1)
    config.write_text(text)
    fake_llm.script(
        ToolCalls.of(ToolCall("fake__add", {"a": 1, "b": 1})), "Okay, I won't add them."
    )
    async with running(config) as gw:
        url = events_url(gw)
        mention = fake_slack.app_mention_event("add 1 and 1")
        await fake_slack.post_event(url, mention)
        [prompt] = await fake_slack.wait_posts(1, timeout=TIMEOUT)
        elements = [e for b in prompt["blocks"] if b["type"] == "actions" for e in b["elements"]]
        approve, deny = elements
        assert approve["text"]["text"] == "Approve" and deny["text"]["text"] == "Deny"
        assert prompt["thread_ts"] == mention["ts"]
        press = fake_slack.block_actions_payload(
            deny["action_id"], deny["value"], message_ts=prompt["ts"]
        )
        assert (await fake_slack.post_interactive(url, press))[0] == 200
        posts = await fake_slack.wait_posts(2, timeout=TIMEOUT)
        await eventually(lambda: bool(fake_slack.updates()), timeout=TIMEOUT, what="prompt edit")
        trails = (await admin.why(gw.rt.state, "slack", None, "U42"))["trails"]

    assert posts[1]["text"] == "Okay, I won't add them."
    result = fake_llm.requests[1].messages[-1]
    assert result["role"] == "tool" and "did not allow" in result["content"]
    assert any("denied by" in u.get("text", "") for u in fake_slack.updates())
    turn = next(t for t in trails if t.get("tools"))
    [call] = turn["tools"]["trail"]
    assert (call["status"], call["approval"], call["approver"]) == ("denied", "denied", "slack:U42")
    assert json.dumps(call["arguments"]) == '{"a": 1, "b": 1}'
