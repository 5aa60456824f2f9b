"""kill -9 after a photo was journaled, before its file was downloaded: the next start fetches it
again (the journal keeps the handle, not the bytes) and answers it exactly once."""

from __future__ import annotations

import asyncio
import base64
from pathlib import Path

import pytest

from tests.channels.telegram.support import telegram_config
from tests.daemon import Daemon
from tests.fakes.llm import FakeLLM
from tests.fakes.telegram import FakeTelegram, FaultSpec
from tests.media.samples import png

MEDIA = "    media:\n      vision: true"


@pytest.mark.slow
async def test_kill9_between_journaling_and_download_fetches_again_and_answers_once(
    tmp_path: Path, fake_tg: FakeTelegram, fake_llm: FakeLLM
) -> None:
    image = png()
    fake_tg.files.add("ph-9", image, ext="png")
    photo = {"file_id": "ph-9", "file_unique_id": "u9", "width": 32, "height": 24}
    config = telegram_config(
        tmp_path, fake_tg, fake_llm, channel="    dm_policy: open", agent=MEDIA
    )
    fake_tg.fail("getFile", FaultSpec(200, "", delay_s=60))  # the first getFile hangs
    first = await Daemon(config).start()
    await fake_tg.wait_for("getUpdates", timeout=20)
    fake_tg.media_message(7, "photo", [photo | {"file_size": len(image)}], caption="what is it?")
    await fake_tg.wait_for("getFile", timeout=30)  # journaled; the turn is fetching the file
    first.kill9()
    await first.wait()
    assert fake_tg.files.downloads == [] and fake_tg.calls_of("sendMessage") == []

    second = await Daemon(config, log_name="daemon2.log").start()
    try:
        await fake_tg.wait_for("sendMessage", timeout=30)
        await asyncio.sleep(1.5)  # room for a duplicate to show up if there were one
        sent = fake_tg.calls_of("sendMessage")
    finally:
        assert await second.terminate() == 0
    assert len(sent) == 1 and sent[0].params["chat_id"] == 7
    assert len(fake_tg.calls_of("getFile")) == 2  # asked again after the restart
    assert fake_tg.files.downloads == ["files/ph-9.png"]
    [request] = fake_llm.requests
    content = request.messages[-1]["content"]
    assert content[0]["text"].startswith("what is it?")
    assert content[1]["image_url"]["url"] == (
        "data:image/png;base64," + base64.b64encode(image).decode()
    )
    tmp = tmp_path / "state" / "media-tmp"
    assert not tmp.is_dir() or not list(tmp.iterdir())  # the killed turn's directory swept
