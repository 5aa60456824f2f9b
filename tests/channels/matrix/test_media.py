"""Files both ways through Synapse's media repository: an image in reaches the model with its
exact bytes (authenticated download), files out are uploaded and sent as the right msgtype."""

from __future__ import annotations

import base64
from pathlib import Path

import pytest

from tests.channels.discord.support import python_agent
from tests.channels.matrix.support import Person, matrix_config
from tests.fakes.llm import FakeLLM
from tests.harness import running
from tests.media.samples import png
from tests.support.synapse import MatrixUser, Synapse

AGENT = """
from chatgate.model.outbound import File, OutboundMessage, Text

OGG = b"OggS" + b"\\0" * 60


def agent(turn):
    return OutboundMessage((
        Text("Here are the notes."),
        File("notes.txt", "text/plain", data=b"line one\\nline two\\n"),
        File("hello.ogg", "audio/ogg", "voice", data=OGG),
    ))
"""


async def _download(alice: Person, mxc: str) -> bytes:
    server, _, media_id = mxc.removeprefix("mxc://").partition("/")
    url = f"{alice.synapse.base_url}/_matrix/client/v1/media/download/{server}/{media_id}"
    headers = {"Authorization": f"Bearer {alice.user.access_token}"}
    async with alice.client.api.session.get(url, headers=headers) as resp:
        assert resp.status == 200
        return await resp.read()


async def test_an_image_reaches_the_model_with_identical_bytes(
    tmp_path: Path, synapse: Synapse, bot: MatrixUser, alice: Person, fake_llm: FakeLLM
) -> None:
    image = png()
    config = matrix_config(tmp_path, synapse, bot, fake_llm, channel="    dm_policy: open")
    text = config.read_text().replace(
        "    timeout_s: 10\n", "    timeout_s: 10\n    media:\n      vision: true\n", 1
    )
    config.write_text(text)
    async with running(config):
        room = await alice.dm(bot.user_id)
        await alice.wait_joined(room, bot.user_id)
        mxc = await alice.client.upload_media(image, mime_type="image/png", filename="red.png")
        content = {
            "msgtype": "m.image",
            "body": "red.png",
            "url": str(mxc),
            "info": {"mimetype": "image/png", "size": len(image), "w": 32, "h": 24},
        }
        await alice.send_raw(room, "m.room.message", content)
        await alice.answers(bot.user_id, room, timeout=40)
    [request] = fake_llm.requests
    parts = request.messages[-1]["content"]
    urls = [p["image_url"]["url"] for p in parts if p.get("type") == "image_url"]
    assert urls == ["data:image/png;base64," + base64.b64encode(image).decode()]


async def test_files_out_are_uploaded_as_file_and_voice_messages(
    tmp_path: Path,
    synapse: Synapse,
    bot: MatrixUser,
    alice: Person,
    fake_llm: FakeLLM,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    agents = python_agent(tmp_path, monkeypatch, "mx_files_agent", AGENT)
    config = matrix_config(
        tmp_path, synapse, bot, fake_llm, channel="    dm_policy: open\n    agent: scripted"
    )
    config.write_text(config.read_text().replace("channels:\n", agents + "channels:\n", 1))
    async with running(config):
        room = await alice.dm(bot.user_id)
        await alice.wait_joined(room, bot.user_id)
        await alice.send(room, "send me the files")
        answers = await alice.answers(bot.user_id, room, count=3)
    text, document, voice = (a["content"] for a in answers)
    assert text["body"] == "Here are the notes."
    assert document["msgtype"] == "m.file" and document["filename"] == "notes.txt"
    assert await _download(alice, document["url"]) == b"line one\nline two\n"
    assert voice["msgtype"] == "m.audio" and "org.matrix.msc3245.voice" in voice
    assert voice["info"]["mimetype"] == "audio/ogg"
