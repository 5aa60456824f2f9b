"""Discord through the real discord.py against the fake Discord (REST + gateway over TLS)."""

from __future__ import annotations

from pathlib import Path

from tests.channels.discord.support import DM_CHANNEL, discord_config
from tests.fakes.discord_lite import FakeDiscord
from tests.fakes.llm import FakeLLM
from tests.harness import running

SEND = "POST /channels/{id}/messages"


async def test_a_dm_is_answered(
    tmp_path: Path, fake_discord: FakeDiscord, fake_llm: FakeLLM
) -> None:
    async with running(discord_config(tmp_path, fake_discord, fake_llm)):
        fake_discord.dm(3000, "hello bot")
        [call] = await fake_discord.wait_for(SEND)
    assert call.path == f"/channels/{DM_CHANNEL}/messages"
    assert call.json["content"] == "echo: hello bot"
    assert "message_reference" not in call.json  # DMs need no quote
    assert call.json["allowed_mentions"]["parse"] == []
    assert fake_llm.requests[0].last_user_text == "hello bot"
    [identify] = fake_discord.identifies
    assert identify["intents"] & (1 << 15)  # message content
