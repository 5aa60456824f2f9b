"""The Discord channel against the project's full fake Discord (tests/fakes/discord.py).

The rest of tests/channels/discord still drives tests/fakes/discord_lite.py (written before this fake
landed); these tests show the daemon reaches the full fake through the same public config
(`resolve` + `ca_file`) and behaves the same.
"""

from __future__ import annotations

from pathlib import Path

from tests.channels.discord.support import settled
from tests.fakes.discord import FakeDiscord
from tests.fakes.discord_payloads import (
    DISCORD_HOSTS,
    DM_CHANNEL_ID,
    GUILD_ID,
    TEXT_CHANNEL_ID,
    THREAD_ID,
    TOKEN,
)
from tests.fakes.llm import FakeLLM
from tests.fakes.tls import session_ca
from tests.harness import running, write_config

SEND = "POST /channels/{channel_id}/messages"


def config(tmp_path: Path, fake: FakeDiscord, llm: FakeLLM) -> Path:
    ca = tmp_path / "discord-ca.pem"
    session_ca().cert_pem.write_to_path(str(ca))
    resolve = ", ".join(f'"{host}": "127.0.0.1:{fake.port}"' for host in DISCORD_HOSTS)
    return write_config(
        tmp_path,
        f"""
agents:
  default: {{backend: litellm, model: openai/fake-model, api_base: "{llm.base_url}",
            api_key: sk-discord-test, timeout_s: 10}}
channels:
  discord:
    token: "{TOKEN}"
    ca_file: {ca}
    resolve: {{{resolve}}}
    guild_ready_timeout_s: 0.05
    dm_policy: open
""",
    )


async def test_dm_mention_and_thread_through_the_full_fake(
    tmp_path: Path, fake_llm: FakeLLM
) -> None:
    async with FakeDiscord() as fake, running(config(tmp_path, fake, fake_llm)) as gw:
        fake.message_create("hello bot")  # the default world's DM with USER_ID
        [dm] = await fake.wait_for(SEND, timeout=30)
        quiet = fake.message_create("just chatting", channel_id=TEXT_CHANNEL_ID, guild_id=GUILD_ID)
        asked = fake.message_create(
            "2+2?", channel_id=TEXT_CHANNEL_ID, guild_id=GUILD_ID, mention_bot=True
        )
        in_thread = fake.message_create("in a thread", channel_id=THREAD_ID, mention_bot=True)
        sent = await fake.wait_for(SEND, 3, timeout=30)
        dropped = await settled(gw, f"discord:{quiet['id']}")
        threaded = await settled(gw, f"discord:{in_thread['id']}")
    assert dm.params["channel_id"] == str(DM_CHANNEL_ID) and dm.json["content"] == "echo: hello bot"
    [reply] = [c for c in sent if c.params["channel_id"] == str(TEXT_CHANNEL_ID)]
    assert reply.json["content"] == "echo: 2+2?"
    assert int(reply.json["message_reference"]["message_id"]) == int(asked["id"])
    assert dropped.reason == "group_mention_only"
    assert threaded.session == f"default:discord:{TEXT_CHANNEL_ID}:{THREAD_ID}"
    assert len(fake_llm.requests) == 3
