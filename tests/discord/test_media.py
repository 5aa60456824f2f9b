"""Discord attachments end to end: discord.py downloads them from the (fake) CDN; an image goes
to a vision model as bytes, never as the CDN URL."""

from __future__ import annotations

import base64
from pathlib import Path

from tests.discord.support import discord_config
from tests.discord.test_basic import SEND
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
