"""Discord attachments end to end: discord.py downloads them from the (fake) CDN; an image goes
to a vision model as bytes, never as the CDN URL."""

from __future__ import annotations

import base64
import os
from pathlib import Path

import pytest

from chatgate.channels.discord.adapter import DiscordChannel
from chatgate.model.errors import FetchError
from chatgate.model.messages import Attachment
from chatgate.model.reasons import MediaReason
from tests.channels.discord.support import discord_config
from tests.channels.discord.test_basic import SEND
from tests.fakes.discord_lite import FakeDiscord
from tests.fakes.llm import FakeLLM
from tests.harness import running
from tests.media.samples import png

VISION = "    media:\n      vision: true\n"


async def test_an_image_and_a_text_file_of_one_message_reach_the_model(
    tmp_path: Path, fake_discord: FakeDiscord, fake_llm: FakeLLM
) -> None:
    image = png(40, 30)
    files = [("shot.png", image, "image/png"), ("log.txt", b"ERROR disk full\n", "text/plain")]
    async with running(discord_config(tmp_path, fake_discord, fake_llm, agents=VISION)):
        fake_discord.dm(3000, "why does it fail?", files=files)
        [call] = await fake_discord.wait_for(SEND, timeout=30)
    [request] = fake_llm.requests
    text, part = request.messages[-1]["content"]
    assert text["text"] == (
        "why does it fail?\n\n[image: shot.png, 40x30]\n\n[document: log.txt]\nERROR disk full"
    )
    assert part["image_url"]["url"] == "data:image/png;base64," + base64.b64encode(image).decode()
    assert "cdn.discordapp.com" not in str(request.body)
    assert len(fake_discord.cdn_downloads) == 2
    assert "why does it fail?" in str(call)


async def test_an_adapter_not_running_here_streams_a_cdn_file_to_disk(
    tmp_path: Path, fake_discord: FakeDiscord, fake_llm: FakeLLM
) -> None:
    """As on a replica where another holds the gateway connection: never started (no shard),
    the adapter fetches through its own files session, built with the channel's `resolve`."""
    blob = os.urandom(300_000)
    async with running(discord_config(tmp_path, fake_discord, fake_llm, agents=VISION)) as gw:
        fake_discord.dm(3000, "keep this", files=[("dump.bin", blob, "application/octet-stream")])
        await fake_discord.wait_for(SEND, timeout=30)
        [path] = list(fake_discord.cdn_files)
        url = f"https://cdn.discordapp.com{path}?ex=1&is=2&hm=3"
        standby = DiscordChannel(gw.channels.channels["discord"].adapter.ctx)
        try:
            size = await standby.fetch(
                Attachment("document", None, "dump.bin", None, None, url),
                tmp_path / "dump.bin",
                len(blob),
            )
            with pytest.raises(FetchError) as refused:  # streamed past the cap: cut off
                await standby.fetch(
                    Attachment("document", None, "dump.bin", None, None, url),
                    tmp_path / "cut.bin",
                    len(blob) - 1,
                )
        finally:
            await standby.stop()
    assert size == len(blob) and (tmp_path / "dump.bin").read_bytes() == blob
    assert refused.value.reason is MediaReason.TOO_LARGE
    assert len(fake_discord.cdn_downloads) == 3
