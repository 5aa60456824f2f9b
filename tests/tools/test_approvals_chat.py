"""Tool approval in the chat: Approve on Telegram (real python-telegram-bot, fake Bot API), Deny
on Slack (real slack-bolt, fake Web API), a press by another user ignored, and `chatgate why`
showing who decided."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from chatgate.cli.state_cmds import tool_line
from chatgate.state import admin
from tests.channels.slack.support import events_url, slack_config
from tests.channels.telegram.helpers_b import settled
from tests.fakes.llm import FakeLLM, ToolCall, ToolCalls
from tests.fakes.slack import FakeSlack
from tests.fakes.telegram import FakeTelegram, FaultSpec
from tests.harness import running
from tests.support.waiting import eventually
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
        [told] = await fake_tg.wait_for("answerCallbackQuery", timeout=TIMEOUT)
        assert told.params["text"] == "Only the person who asked can answer this."
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
    answers = fake_tg.calls_of("answerCallbackQuery")
    assert [bool(c.params.get("text")) for c in answers] == [True, False, False]  # asker: none
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
        stranger = fake_slack.block_actions_payload(
            approve["action_id"], approve["value"], user="U77", message_ts=prompt["ts"]
        )
        assert (await fake_slack.post_interactive(url, stranger))[0] == 200
        await eventually(lambda: bool(fake_slack.ephemerals), TIMEOUT, "the stranger's notice")
        [told] = fake_slack.ephemerals
        assert (told["user"], told["thread_ts"]) == ("U77", mention["ts"])
        assert told["text"] == "Only the person who asked can answer this."
        assert len(fake_llm.requests) == 1 and not fake_slack.updates()
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
    assert len(fake_slack.ephemerals) == 1  # the asker's press needs no notice
    turn = next(t for t in trails if t.get("tools"))
    [call] = turn["tools"]["trail"]
    assert (call["status"], call["approval"], call["approver"]) == ("denied", "denied", "slack:U42")
    assert json.dumps(call["arguments"]) == '{"a": 1, "b": 1}'


async def test_a_streamed_draft_shows_the_status_line_only_once_approved(
    tmp_path: Path, fake_tg: FakeTelegram, fake_llm: FakeLLM
) -> None:
    config = telegram_tools_config(
        tmp_path,
        fake_tg,
        fake_llm,
        agent="    stream: true\n" + ASK_ADD,
        channel="    dm_policy: open\n    stream: {enabled: true, min_edit_interval_s: 0.2}",
    )
    fake_llm.script(
        ToolCalls.of(ToolCall("fake__add", {"a": 2, "b": 3}), content="Let me add that. "),
        "It is 5.",
    )

    def shown() -> list[str]:
        calls = fake_tg.calls_of("sendMessage") + fake_tg.calls_of("editMessageText")
        return [c.params["text"] for c in calls]

    async with running(config):
        fake_tg.dm(42, "what is 2+3?")

        def prompts() -> list[Any]:
            return [c for c in fake_tg.calls_of("sendMessage") if "reply_markup" in c.params]

        await eventually(lambda: bool(prompts()), TIMEOUT, "the prompt")
        [prompt] = prompts()
        assert not any("using fake.add" in t for t in shown()), "status line before approval"
        [approve, _] = keyboard(prompt.params)
        prompt_id = next(m["message_id"] for m in fake_tg.sent if "reply_markup" in m)
        fake_tg.callback(42, 42, prompt_id, approve["callback_data"])
        await eventually(lambda: any("It is 5." in t for t in shown()), TIMEOUT, "the answer")
        await eventually(lambda: any("approved by" in t for t in shown()), TIMEOUT, "closed")
    texts = shown()
    assert any("using fake.add…" in t for t in texts)  # the draft's status line, once approved
    assert "Let me add that." in " ".join(texts)
    assert "using" not in [t for t in texts if "It is 5." in t][-1]
    assert fake_llm.requests[1].messages[-1]["content"] == "5"


async def test_slack_approve_shows_the_status_line_in_the_thread_then_the_answer(
    tmp_path: Path, fake_slack: FakeSlack, fake_llm: FakeLLM
) -> None:
    config = slack_config(tmp_path, fake_slack, fake_llm, gateway=SERVERS, agents="")
    text = config.read_text().replace("timeout_s: 10\n", "timeout_s: 60\n" + ASK_ADD, 1)
    config.write_text(text)
    fake_llm.script(ToolCalls.of(ToolCall("fake__add", {"a": 2, "b": 3})), "It is 5.")
    async with running(config) as gw:
        url = events_url(gw)
        mention = fake_slack.app_mention_event("add 2 and 3")
        await fake_slack.post_event(url, mention)
        [prompt] = await fake_slack.wait_posts(1, timeout=TIMEOUT)
        approve = next(e for b in prompt["blocks"] if b["type"] == "actions" for e in b["elements"])
        press = fake_slack.block_actions_payload(
            approve["action_id"], approve["value"], message_ts=prompt["ts"]
        )
        assert (await fake_slack.post_interactive(url, press))[0] == 200
        [_, status] = await fake_slack.wait_posts(2, timeout=TIMEOUT)
        await eventually(
            lambda: any(u.get("text") == "It is 5." for u in fake_slack.updates()),
            TIMEOUT,
            "the answer in place of the status line",
        )
        updates = fake_slack.updates()
    assert status["text"] == "using fake.add…" and status["thread_ts"] == mention["ts"]
    assert [u["text"] for u in updates if u["ts"] == status["ts"]][-1] == "It is 5."
    assert any("approved by" in u["text"] for u in updates if u["ts"] == prompt["ts"])
    assert not fake_slack.ephemerals
    assert fake_llm.requests[1].messages[-1]["content"] == "5"


async def test_a_prompt_nobody_can_see_denies_the_call_at_once(
    tmp_path: Path, fake_tg: FakeTelegram, fake_llm: FakeLLM
) -> None:
    config = telegram_tools_config(
        tmp_path,
        fake_tg,
        fake_llm,
        agent=ASK_ADD,
        channel="    dm_policy: open",
    )
    fake_llm.script(ToolCalls.of(ToolCall("fake__add", {"a": 2, "b": 3})), "I could not ask.")
    fake_tg.fail("sendMessage", FaultSpec(403, "Forbidden: bot was blocked by the user"))
    async with running(config) as gw:
        update = fake_tg.dm(42, "what is 2+3?")
        await fake_llm.wait_for_requests(2, timeout=TIMEOUT)  # not after approval_timeout_s
        key = f"telegram:42:{update['message']['message_id']}"
        entry = await settled(gw, key, TIMEOUT)
        metrics = gw.rt.metrics.render().decode()
    told = fake_llm.requests[1].messages[-1]
    assert told["role"] == "tool" and "did not allow" in told["content"]
    assert entry.reply is not None
    [call] = entry.reply["tools"]["trail"]
    assert (call["status"], call["approval"]) == ("denied", "approval_no_approver")
    assert 'reason="approval_no_approver"} 1.0' in metrics
    assert 'reason="approval_asked"' not in metrics
