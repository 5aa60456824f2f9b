"""Replies with files on Discord: multipart uploads through discord.py, and the 10 MB limit."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.channels.discord.support import DM_CHANNEL, discord_config, python_agent
from tests.fakes.discord_lite import FakeDiscord
from tests.fakes.llm import FakeLLM
from tests.harness import running

SEND = "POST /channels/{id}/messages"
AGENT = """
from chatgate.model.outbound import File, OutboundMessage, Text

def agent(turn):
    return OutboundMessage((
        Text("Your files"),
        File("plot.png", "image/png", "image", caption="The plot", data=b"PNGDATA"),
        File("movie.mp4", "video/mp4", "video", data=b"v" * (11 << 20)),
    ))
"""


async def test_files_are_attachments_and_one_over_the_limit_is_named(
    tmp_path: Path, fake_discord: FakeDiscord, fake_llm: FakeLLM, monkeypatch: pytest.MonkeyPatch
) -> None:
    agents = python_agent(tmp_path, monkeypatch, "discord_files_agent", AGENT)
    channel = "    dm_policy: open\n    agent: scripted\n"
    config = discord_config(tmp_path, fake_discord, fake_llm, channel=channel, agents=agents)
    async with running(config):
        fake_discord.dm(3000, "files")
        text, upload = await fake_discord.wait_for(SEND, count=2, timeout=20)
    assert text.path == upload.path == f"/channels/{DM_CHANNEL}/messages"
    assert text.json["content"].startswith("Your files")
    assert "movie.mp4 (11 MB) is over this chat's 10 MB file limit" in text.json["content"]
    assert "1 file over the size limit not attached" in text.json["content"]
    assert upload.json["content"] == "The plot"
    assert upload.files == [{"filename": "plot.png", "data": b"PNGDATA"}]
