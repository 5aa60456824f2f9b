"""Spoken replies end to end: the real litellm `aspeech` against the fake model server, the voice
note uploaded with sendVoice after the text; the text alone when speech fails or is not asked."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

import pytest

from chatgate.model.reasons import DeliveryStatus
from tests.channels.telegram.helpers_b import key_of, settled
from tests.channels.telegram.support import telegram_config
from tests.fakes.llm import FakeLLM, Fault
from tests.fakes.telegram import FakeTelegram
from tests.harness import running
from tests.media.samples import OGG_OPUS

USER = 4242
CHANNEL = "    dm_policy: open\n    agent: talker\n"


def talker(llm: FakeLLM, mode: str) -> str:
    return f"""  talker:
    backend: litellm
    model: openai/fake-model
    api_base: {llm.base_url}
    api_key: sk-voice-test
    timeout_s: 10
    voice_reply: {mode}
    voice_model: openai/tts-1
    voice: nova
"""


def voice_note(tg: FakeTelegram, caption: str) -> dict[str, Any]:
    """A private voice message with a caption (what the agent reads as the user's words)."""
    chat = {"id": USER, "first_name": "Alice", "type": "private"}
    sender = {"id": USER, "is_bot": False, "first_name": "Alice"}
    voice = {"file_id": "VOICE1", "file_unique_id": "U1", "duration": 2, "mime_type": "audio/ogg"}
    message = {
        "message_id": 900,
        "date": int(time.time()),
        "chat": chat,
        "from": sender,
        "voice": voice,
        "caption": caption,
    }
    return tg.enqueue({"message": message})


def config(tmp_path: Path, tg: FakeTelegram, llm: FakeLLM, mode: str) -> Path:
    return telegram_config(tmp_path, tg, llm, channel=CHANNEL, agent=talker(llm, mode))


async def test_a_voice_note_is_answered_with_text_and_a_spoken_voice_note(
    tmp_path: Path, fake_tg: FakeTelegram, fake_llm: FakeLLM
) -> None:
    fake_tg.files.add("VOICE1", OGG_OPUS, ext="oga")  # the media step transcribes it
    fake_llm.audio.script("and this")
    async with running(config(tmp_path, fake_tg, fake_llm, "when_user_sent_voice")) as gw:
        entry = await settled(gw, key_of(voice_note(fake_tg, "read me this")), timeout=30)
        transcript = entry.reply
    assert entry.delivery == DeliveryStatus.SENT
    answer = "echo: read me this\n\n[voice message transcript] and this"
    [said] = fake_llm.speech_requests
    assert said["model"] == "tts-1" and said["voice"] == "nova"
    assert said["response_format"] == "opus" and said["input"] == answer
    assert [m["text"] for m in fake_tg.sent] == [answer]
    [voice] = fake_tg.calls_of("sendVoice")
    assert voice.params["voice"]["data"] == b"OggS" + answer.encode()
    blocks = transcript["message"]["blocks"] if transcript else []
    assert [b["type"] for b in blocks] == ["text", "file"] and blocks[1]["kind"] == "voice"


async def test_a_typed_message_gets_text_only_when_voice_answers_voice(
    tmp_path: Path, fake_tg: FakeTelegram, fake_llm: FakeLLM
) -> None:
    async with running(config(tmp_path, fake_tg, fake_llm, "when_user_sent_voice")) as gw:
        await settled(gw, key_of(fake_tg.dm(USER, "typed")), timeout=30)
    assert fake_llm.speech_requests == [] and not fake_tg.calls_of("sendVoice")
    assert [m["text"] for m in fake_tg.sent] == ["echo: typed"]


async def test_a_failed_speech_keeps_the_text_answer_and_counts_why(
    tmp_path: Path, fake_tg: FakeTelegram, fake_llm: FakeLLM, caplog: pytest.LogCaptureFixture
) -> None:
    fake_llm.speech_faults["tts-1"] = Fault.server_error()
    async with running(config(tmp_path, fake_tg, fake_llm, "always")) as gw:
        entry = await settled(gw, key_of(fake_tg.dm(USER, "hello")), timeout=30)
        metrics = gw.rt.metrics.render().decode()
    assert entry.delivery == DeliveryStatus.SENT
    assert [m["text"] for m in fake_tg.sent] == ["echo: hello"]
    assert fake_llm.speech_requests and not fake_tg.calls_of("sendVoice")
    assert 'metric="tts_failed"' in metrics
    assert "tts_failed" in caplog.text and "sk-voice-test" not in caplog.text
