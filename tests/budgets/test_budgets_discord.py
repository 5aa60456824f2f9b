"""Budget notices in a Discord guild channel: Discord has ephemerals only for interactions, so
a refused button press is told to the presser alone (an ephemeral follow-up), while the
warning and the refusal of a plain message go as replies to it (the refusal once an hour)."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from tests.channels.discord.support import discord_config, python_agent, settled
from tests.fakes.discord_lite import FakeDiscord
from tests.fakes.llm import FakeLLM
from tests.harness import running

SEND = "POST /channels/{id}/messages"
FOLLOWUP = "POST /webhooks/{id}/{token}"
BUDGET = """budgets:
  - name: two-a-day
    scope: user
    limit_turns: 2
    warn_at: 0.5
"""


@pytest.fixture
async def fake_discord() -> AsyncIterator[FakeDiscord]:
    async with FakeDiscord() as fake:  # the Discord tests' fake: one guild, channel 4000
        fake.add_guild(5000, 4000, 4001)
        yield fake


async def test_guild_warning_and_refusal_reply_to_the_sender(
    tmp_path: Path, fake_discord: FakeDiscord, fake_llm: FakeLLM
) -> None:
    config = discord_config(tmp_path, fake_discord, fake_llm)
    config.write_text(config.read_text().replace("channels:\n", BUDGET + "channels:\n", 1))
    async with running(config) as gw:
        first = fake_discord.post(4000, "one", guild_id=5000, mention=True)
        await fake_discord.wait_for(SEND)
        second = fake_discord.post(4000, "two", guild_id=5000, mention=True)
        await fake_discord.wait_for(SEND, 3)  # the warning, then the answer
        third = fake_discord.post(4000, "three", guild_id=5000, mention=True)
        await fake_discord.wait_for(SEND, 4)
        fourth = fake_discord.post(4000, "four", guild_id=5000, mention=True)
        refused = await settled(gw, f"discord:{fourth['id']}")
        sent = fake_discord.calls_to(SEND)
    assert refused.reason == "budget_exhausted"
    replied = [c.json["message_reference"]["message_id"] for c in sent]
    assert replied == [int(first["id"]), int(second["id"]), int(second["id"]), int(third["id"])]
    assert "50" in sent[1].json["content"]  # the warning names the share used
    assert "used up your allowance" in sent[3].json["content"]
    assert all(c.path == "/channels/4000/messages" for c in sent)  # nothing sent privately


MENU_AGENT = """
def agent(turn):
    return {"blocks": [{"type": "buttons", "buttons": [{"label": "Yes", "value": "yes"}]}]}
"""
SPENT = """budgets:
  - name: none-left
    scope: user
    limit_turns: 0
    exempt_users: ["discord:3001"]
"""


async def test_a_refused_press_is_told_to_the_presser_alone(
    tmp_path: Path, fake_discord: FakeDiscord, fake_llm: FakeLLM, monkeypatch: pytest.MonkeyPatch
) -> None:
    agents = python_agent(tmp_path, monkeypatch, "dc_budget_menu", MENU_AGENT)
    channel = "    dm_policy: open\n    agent: scripted\n"
    config = discord_config(tmp_path, fake_discord, fake_llm, channel=channel, agents=agents)
    config.write_text(config.read_text().replace("channels:\n", SPENT + "channels:\n", 1))
    async with running(config) as gw:
        fake_discord.post(4000, "menu", guild_id=5000, user_id=3001, mention=True)
        [menu] = await fake_discord.wait_for(SEND)
        button = menu.json["components"][0]["components"][0]
        press = fake_discord.press(int(fake_discord.created[0]["id"]), button["custom_id"])
        [told] = await fake_discord.wait_for(FOLLOWUP)
        refused = await settled(gw, f"discord:ix:{press['id']}")
    assert refused.reason == "budget_exhausted"
    assert told.json["flags"] == 64  # ephemeral: the presser alone sees it
    assert "used up your allowance" in told.json["content"]
    assert len(fake_discord.calls_to(SEND)) == 1  # nothing about the budget in the channel
