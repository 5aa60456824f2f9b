"""Guild mention gating, replies, threads, edits, bot loops and components, end to end."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.channels.discord.support import discord_config, python_agent, section, settled
from tests.fakes.discord_lite import BOT_ID, FakeDiscord
from tests.fakes.llm import FakeLLM
from tests.harness import running

SEND = "POST /channels/{id}/messages"
CALLBACK = "POST /interactions/{id}/{token}/callback"


async def test_guild_messages_need_a_mention_or_a_reply_and_answers_quote_them(
    tmp_path: Path, fake_discord: FakeDiscord, fake_llm: FakeLLM
) -> None:
    async with running(discord_config(tmp_path, fake_discord, fake_llm)) as gw:
        quiet = fake_discord.post(4000, "just chatting", guild_id=5000)
        entry = await settled(gw, f"discord:{quiet['id']}")
        assert (entry.stage, entry.reason) == ("admission", "group_mention_only")
        asked = fake_discord.post(4000, "what is 2+2?", guild_id=5000, mention=True)
        [answer] = await fake_discord.wait_for(SEND)
        answer_id = int(fake_discord.created[0]["id"])
        followup = fake_discord.post(4000, "and 3+3?", guild_id=5000, reply_to=answer_id)
        replies = await fake_discord.wait_for(SEND, 2)
    assert answer.path == "/channels/4000/messages"
    assert answer.json["content"] == "echo: what is 2+2?"  # the bot's own mention is stripped
    assert answer.json["message_reference"]["message_id"] == int(asked["id"])
    assert answer.json["allowed_mentions"]["replied_user"] is True
    assert replies[1].json["message_reference"]["message_id"] == int(followup["id"])
    assert [r.last_user_text for r in fake_llm.requests] == ["what is 2+2?", "and 3+3?"]


async def test_respond_all_answers_unmentioned_guild_messages(
    tmp_path: Path, fake_discord: FakeDiscord, fake_llm: FakeLLM
) -> None:
    channel = "    group_policy: respond_all\n    allowed_channels: [4000]\n"
    async with running(discord_config(tmp_path, fake_discord, fake_llm, channel=channel)) as gw:
        fake_discord.post(4000, "anyone?", guild_id=5000)
        other = fake_discord.post(4001, "elsewhere", guild_id=5000, mention=True)
        [answer] = await fake_discord.wait_for(SEND)
        entry = await settled(gw, f"discord:{other['id']}")
    assert answer.json["content"] == "echo: anyone?"
    assert entry.reason == "chat_not_allowed"


async def test_a_thread_keeps_its_own_session_and_is_answered_inside_it(
    tmp_path: Path, fake_discord: FakeDiscord, fake_llm: FakeLLM
) -> None:
    fake_discord.add_thread(5000, 4000, 4100)
    fake_discord.add_thread(5000, 4500, 4600, forum=True)
    async with running(discord_config(tmp_path, fake_discord, fake_llm)) as gw:
        fake_discord.post(4000, "in the channel", guild_id=5000, mention=True)
        await fake_discord.wait_for(SEND)
        thread_msg = fake_discord.post(4100, "in the thread", guild_id=5000, mention=True)
        await fake_discord.wait_for(SEND, 2)
        forum_msg = fake_discord.post(4600, "a forum post", guild_id=5000, mention=True)
        sent = await fake_discord.wait_for(SEND, 3)
        thread_entry = await settled(gw, f"discord:{thread_msg['id']}")
        forum_entry = await settled(gw, f"discord:{forum_msg['id']}")
    assert [c.path for c in sent] == [
        "/channels/4000/messages",
        "/channels/4100/messages",
        "/channels/4600/messages",
    ]
    assert thread_entry.session == "default:discord:4000:4100"
    assert forum_entry.session == "default:discord:4500:4600"
    # the thread's turn saw none of the channel's conversation
    assert [m["content"] for m in fake_llm.requests[1].body["messages"] if m["role"] == "user"] == [
        "in the thread"
    ]


async def test_edits_are_ignored_with_a_reason_and_other_bots_pass_the_loop_guard(
    tmp_path: Path, fake_discord: FakeDiscord, fake_llm: FakeLLM
) -> None:
    gateway = "  loop_guard: {max_bot_turns: 2, window_s: 60}\n"
    config = discord_config(tmp_path, fake_discord, fake_llm, gateway=gateway)
    async with running(config) as gw:
        first = fake_discord.post(4000, "hi", guild_id=5000, mention=True)
        await fake_discord.wait_for(SEND)
        fake_discord.edit(first, f"<@{BOT_ID}> hi, edited")
        for n in range(4):
            fake_discord.post(
                4001, f"bot chatter {n}", guild_id=5000, user_id=9000, bot=True, mention=True
            )
        await fake_discord.wait_for(SEND, 3)
        assert await gw.pipeline.scheduler.wait_idle(10)  # every turn, and any duplicate, has run
        ignored = section(gw)["ignored"]
    to_bots = [c for c in fake_discord.sent() if c.path == "/channels/4001/messages"]
    assert len(to_bots) == 2
    assert ignored == {"edited_ignored": 1}
    assert len(fake_llm.requests) == 3


BUTTON_AGENT = f"""
def agent(turn):
    if turn.text == "menu":
        return {{"blocks": [
            {{"type": "text", "text": "Pick"}},
            {{"type": "buttons", "buttons": [
                {{"label": "Yes", "value": "yes"}},
                {{"label": "Long", "value": "{"x" * 150}"}},
            ]}},
            {{"type": "select", "action_id": "size", "options": [
                {{"label": "Small", "value": "s"}}, {{"label": "Large", "value": "l"}}]}},
        ]}}
    return "got " + str(len(turn.text)) + ": " + turn.text[:20]
"""


async def test_button_and_select_presses_reach_the_agent_and_are_acknowledged(
    tmp_path: Path, fake_discord: FakeDiscord, fake_llm: FakeLLM, monkeypatch: pytest.MonkeyPatch
) -> None:
    agents = python_agent(tmp_path, monkeypatch, "dc_button_agent", BUTTON_AGENT)
    channel = "    dm_policy: open\n    agent: scripted\n"
    config = discord_config(tmp_path, fake_discord, fake_llm, channel=channel, agents=agents)
    async with running(config) as gw:
        fake_discord.post(4000, "menu", guild_id=5000, mention=True)
        [menu] = await fake_discord.wait_for(SEND)
        rows = menu.json["components"]
        buttons, [select] = rows[0]["components"], rows[1]["components"]
        assert buttons[0]["custom_id"] == "b0:yes"
        assert buttons[1]["custom_id"].startswith("b1:ref:") and len(buttons[1]["custom_id"]) <= 100
        menu_id = int(fake_discord.created[0]["id"])
        press = fake_discord.press(menu_id, buttons[0]["custom_id"])
        await fake_discord.wait_for(CALLBACK)
        fake_discord.press(menu_id, buttons[1]["custom_id"])
        fake_discord.press(menu_id, select["custom_id"], values=["l"])
        replies = await fake_discord.wait_for(SEND, 4)
        entry = await settled(gw, f"discord:ix:{press['id']}")
    texts = {c.json["content"] for c in replies[1:]}
    assert texts == {"got 1: l", "got 150: " + "x" * 20, "got 3: yes"}
    callbacks = fake_discord.calls_to(CALLBACK)
    assert len(callbacks) == 3 and all(c.json["type"] == 6 for c in callbacks)  # deferred update
    assert entry.session == "scripted:discord:4000"
