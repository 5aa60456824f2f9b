"""Photos, voice notes and documents on Telegram: getFile + download through python-telegram-bot,
understood by the media step, seen by the fake model (image parts, transcripts, document text)."""

from __future__ import annotations

import asyncio
import base64
from pathlib import Path
from typing import Any

from chatgate.gateway.app import Gateway
from chatgate.policies.bursts import ALBUM_WINDOW_S
from chatgate.state import admin
from tests.channels.telegram.support import telegram_config
from tests.fakes.clock import ManualClock
from tests.fakes.llm import FakeLLM
from tests.fakes.telegram import FakeTelegram
from tests.harness import running
from tests.media.samples import OGG_OPUS, pdf, png

MEDIA = """    media:
      vision: true
      echo_transcript: true"""


def _config(tmp_path: Path, tg: FakeTelegram, llm: FakeLLM) -> Path:
    return telegram_config(tmp_path, tg, llm, channel="    dm_policy: open", agent=MEDIA)


def _photo(file_id: str, size: int) -> list[dict[str, object]]:
    return [
        {"file_id": f"{file_id}-small", "file_unique_id": "s", "width": 9, "height": 9},
        {"file_id": file_id, "file_unique_id": "b", "width": 32, "height": 24, "file_size": size},
    ]


async def test_a_photo_reaches_the_model_as_an_image_part_with_its_caption(
    tmp_path: Path, fake_tg: FakeTelegram, fake_llm: FakeLLM
) -> None:
    image = png()
    fake_tg.files.add("ph-1", image, ext="png")
    async with running(_config(tmp_path, fake_tg, fake_llm)):
        fake_tg.media_message(42, "photo", _photo("ph-1", len(image)), caption="what is this?")
        [call] = await fake_tg.wait_for("sendMessage", timeout=30)
    [request] = fake_llm.requests
    content = request.messages[-1]["content"]
    assert content[0] == {"type": "text", "text": "what is this?\n\n[image: photo, 32x24]"}
    url = content[1]["image_url"]["url"]
    assert url == "data:image/png;base64," + base64.b64encode(image).decode()  # not re-encoded
    assert fake_tg.token not in str(request.body)  # bytes, never the Bot API file URL
    assert fake_tg.files.downloads == ["files/ph-1.png"]  # the largest size only
    assert "what is this?" in call.params["text"]
    tmp = tmp_path / "state" / "media-tmp"
    assert tmp.is_dir() and not list(tmp.iterdir())  # the turn's temp files are gone


async def test_a_voice_note_is_transcribed_retried_once_and_echoed(
    tmp_path: Path, fake_tg: FakeTelegram, fake_llm: FakeLLM
) -> None:
    fake_tg.files.add("vo-1", OGG_OPUS, ext="oga")
    fake_llm.audio.fail_next(1)  # the transcriber fails once, then answers
    fake_llm.audio.script("remind me to water the plants")
    voice = {"file_id": "vo-1", "file_unique_id": "v", "duration": 3, "mime_type": "audio/ogg"}
    async with running(_config(tmp_path, fake_tg, fake_llm)):
        fake_tg.media_message(42, "voice", voice | {"file_size": len(OGG_OPUS)})
        [call] = await fake_tg.wait_for("sendMessage", timeout=30)
    assert [r.data for r in fake_llm.audio.requests] == [OGG_OPUS, OGG_OPUS]
    assert fake_llm.audio.requests[-1].model == "whisper-1"
    text = fake_llm.requests[0].last_user_text
    assert text == "[voice message transcript] remind me to water the plants"
    assert "Heard: remind me to water the plants" in call.params["text"]


async def test_pdf_text_and_refused_oversize_file_are_explained(
    tmp_path: Path, fake_tg: FakeTelegram, fake_llm: FakeLLM
) -> None:
    report = pdf("Invoice total 42 EUR")
    fake_tg.files.add("doc-1", report, ext="pdf")
    big = 21 * 1024 * 1024
    fake_tg.files.add("doc-2", b"x", ext="zip", size=big)
    async with running(_config(tmp_path, fake_tg, fake_llm)) as gw:
        fake_tg.media_message(
            42,
            "document",
            {
                "file_id": "doc-1",
                "file_unique_id": "d1",
                "file_name": "invoice.png",  # a lying name and type: the bytes are a PDF
                "mime_type": "image/png",
                "file_size": len(report),
            },
            caption="sum it up",
        )
        [first] = await fake_tg.wait_for("sendMessage", timeout=30)
        fake_tg.media_message(
            42,
            "document",
            {"file_id": "doc-2", "file_unique_id": "d2", "file_name": "dump.zip", "file_size": big},
        )
        calls = await fake_tg.wait_for("sendMessage", count=2, timeout=30)
        trails = (await admin.why(gw.rt.state, "telegram", None, "42"))["trails"]
        metrics = gw.rt.metrics.render().decode()
    assert "[document: invoice.png]\nInvoice total 42 EUR" in str(
        fake_llm.requests[0].last_user_text
    )
    assert "sum it up" in first.params["text"]
    assert not [c for c in fake_tg.calls_of("getFile") if c.params.get("file_id") == "doc-2"]
    assert "dump.zip is larger than 20 MB" in calls[1].params["text"]
    assert "Telegram lets bots download files of up to 20 MB" in calls[1].params["text"]
    assert "media_too_large" in str(fake_llm.requests[1].last_user_text)
    summaries = sorted(t["summary"] for t in trails)
    assert any("files: invoice.png → document_text;" in s for s in summaries), summaries
    assert any("files: dump.zip → media_too_large;" in s for s in summaries), summaries
    assert 'reason="media_too_large"' in metrics


def _album_part(tg: FakeTelegram, file_id: str, data: bytes, caption: str = "") -> dict[str, Any]:
    """A photo of album ``album-7``, in the next getUpdates answer."""
    tg.files.add(file_id, data, ext="png")
    tg.stall_get_updates = True  # the album id is set before any poll can take the update
    update = tg.media_message(42, "photo", _photo(file_id, len(data)), caption=caption)
    update["message"]["media_group_id"] = "album-7"
    tg.stall_get_updates = False
    return update


async def _journaled(gw: Gateway, count: int) -> None:
    for _ in range(3000):
        if len(await gw.rt.journal.find("telegram", sender_id="42", limit=10)) >= count:
            return
        await asyncio.sleep(0.01)
    raise AssertionError(f"{count} messages not journaled")


async def test_an_album_in_one_batch_of_updates_is_one_turn(
    tmp_path: Path, fake_tg: FakeTelegram, fake_llm: FakeLLM
) -> None:
    red, blue = png(color=(255, 0, 0)), png(color=(0, 0, 255))
    clock = ManualClock()
    async with running(_config(tmp_path, fake_tg, fake_llm), clock=clock) as gw:
        await fake_tg.wait_for("getUpdates")
        fake_tg.stall_get_updates = True  # both parts land in one getUpdates answer
        first = fake_tg.media_message(42, "photo", _photo("al-1", len(red)), caption="compare")
        second = fake_tg.media_message(42, "photo", _photo("al-2", len(blue)))
        fake_tg.files.add("al-1", red, ext="png")
        fake_tg.files.add("al-2", blue, ext="png")
        for update in (first, second):
            update["message"]["media_group_id"] = "album-7"
        fake_tg.stall_get_updates = False
        await _journaled(gw, 1)
        assert fake_llm.requests == []  # a later part may still come: the album window
        clock.advance(ALBUM_WINDOW_S)
        await fake_tg.wait_for("sendMessage", timeout=30)
        await fake_llm.wait_for_requests(1)
    [request] = fake_llm.requests
    text, *images = request.messages[-1]["content"]
    assert text["text"] == "compare\n\n[image: photo, 32x24]\n\n[image: photo, 32x24]"
    assert len(images) == 2
    assert len(fake_tg.calls_of("sendMessage")) == 1


async def test_an_album_split_across_two_polls_is_one_turn_and_each_part_is_journaled(
    tmp_path: Path, fake_tg: FakeTelegram, fake_llm: FakeLLM
) -> None:
    red, blue = png(color=(255, 0, 0)), png(color=(0, 0, 255))
    clock = ManualClock()
    async with running(_config(tmp_path, fake_tg, fake_llm), clock=clock) as gw:
        await fake_tg.wait_for("getUpdates")
        _album_part(fake_tg, "al-1", red, caption="compare")
        await _journaled(gw, 1)  # taken by one poll and journaled
        clock.advance(ALBUM_WINDOW_S * 0.6)
        _album_part(fake_tg, "al-2", blue)
        await _journaled(gw, 2)  # the next poll: the window starts again from this part
        clock.advance(ALBUM_WINDOW_S * 0.6)  # past the first part's window, not the second's
        await asyncio.sleep(0.2)
        assert fake_llm.requests == []
        clock.advance(ALBUM_WINDOW_S * 0.5)
        await fake_tg.wait_for("sendMessage", timeout=30)
        await fake_llm.wait_for_requests(1)
        entries = await gw.rt.journal.find("telegram", sender_id="42", limit=10)
    assert len(entries) == 2  # each part journaled as it came
    [request] = fake_llm.requests
    users = [m["content"] for m in request.messages if m["role"] == "user"]
    assert [[p["type"] for p in u] for u in users] == [["text", "image_url"]] * 2
    assert users[0][0]["text"] == "compare\n\n[image: photo, 32x24]"
    assert users[1][0]["text"] == "[image: photo, 32x24]"
    assert len(fake_tg.calls_of("sendMessage")) == 1


async def test_a_refused_file_is_explained_in_the_chats_language(
    tmp_path: Path, fake_tg: FakeTelegram, fake_llm: FakeLLM
) -> None:
    channel = "    dm_policy: open\n    language: de"
    config = telegram_config(tmp_path, fake_tg, fake_llm, channel=channel, agent=MEDIA)
    big = 21 * 1024 * 1024
    async with running(config):
        fake_tg.media_message(
            42,
            "video",
            {"file_id": "v-1", "file_unique_id": "v", "width": 640, "height": 360, "duration": 9,
             "file_size": big},
        )  # fmt: skip
        [call] = await fake_tg.wait_for("sendMessage", timeout=30)
    assert (
        "<i>Video ist größer als 20 MB, das Maximum für diesen Bot (Telegram lässt Bots nur "
        "Dateien bis 20 MB herunterladen); bitte schicke eine kleinere Datei.</i>"
    ) in call.params["text"]
    assert not fake_tg.calls_of("getFile")  # refused from the announced size


async def test_voice_notes_of_many_chats_reach_the_transcriber_a_bounded_few_at_once(
    tmp_path: Path, fake_tg: FakeTelegram, fake_llm: FakeLLM
) -> None:
    fake_tg.files.add("vo-1", OGG_OPUS, ext="oga")
    fake_llm.audio.latency_s = 0.2
    voice = {"file_id": "vo-1", "file_unique_id": "v", "duration": 3, "mime_type": "audio/ogg"}
    agent = MEDIA + "\n      max_concurrent_transcriptions: 2"
    path = telegram_config(tmp_path, fake_tg, fake_llm, channel="    dm_policy: open", agent=agent)
    async with running(path):
        for user in range(1, 7):
            fake_tg.media_message(user, "voice", voice | {"file_size": len(OGG_OPUS)})
        await fake_tg.wait_for("sendMessage", count=6, timeout=30)
    assert len(fake_llm.audio.requests) == 6
    assert fake_llm.audio.max_in_flight == 2  # each upload holds its file in memory
