"""Transcription and speech are model calls of the turn: a voice note's transcription and the
spoken answer are charged (litellm's cost of the audio, the seconds the endpoint reports at the
cost map's price per second) into the turn's totals and the budget; once the budget is spent,
no transcription or speech call is made."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

from chatgate.agents.litellm_import import import_litellm
from tests.channels.telegram.helpers_b import key_of, settled
from tests.channels.telegram.support import telegram_config
from tests.fakes.llm import FakeLLM
from tests.fakes.telegram import FakeTelegram
from tests.harness import running
from tests.media.samples import OGG_OPUS

USER = 4343
SECONDS = 3  # what the fake transcription endpoint reports it heard
BUDGET = """budgets:
  - name: audio
    scope: user
    limit_usd: 0.001
    warn_at: null
    agents: [talker]
"""


def talker(llm: FakeLLM) -> str:
    return f"""  talker:
    backend: litellm
    model: openai/fake-model
    api_base: {llm.base_url}
    api_key: sk-voice-test
    timeout_s: 10
    price: {{input_per_mtok: 0, output_per_mtok: 0}}
    voice_reply: when_user_sent_voice
    voice_model: openai/tts-1
    voice: nova
"""


def voice_note(tg: FakeTelegram, message_id: int) -> dict[str, Any]:
    chat = {"id": USER, "first_name": "Alice", "type": "private"}
    sender = {"id": USER, "is_bot": False, "first_name": "Alice"}
    voice = {"file_id": "VOICE1", "file_unique_id": "U1", "duration": 2, "mime_type": "audio/ogg"}
    message = {"message_id": message_id, "date": int(time.time()), "chat": chat,
               "from": sender, "voice": voice}  # fmt: skip
    return tg.enqueue({"message": message})


async def test_transcription_and_speech_are_charged_then_refused(
    tmp_path: Path, fake_tg: FakeTelegram, fake_llm: FakeLLM
) -> None:
    fake_tg.files.add("VOICE1", OGG_OPUS, ext="oga")
    channel = "    dm_policy: open\n    agent: talker\n"
    config = telegram_config(
        tmp_path, fake_tg, fake_llm, channel=channel, gateway=BUDGET, agent=talker(fake_llm)
    )
    async with running(config) as gw:
        first = await settled(gw, key_of(voice_note(fake_tg, 901)), timeout=30)
        second = await settled(gw, key_of(voice_note(fake_tg, 902)), timeout=30)
    usage = first.reply["usage"] if first.reply else {}
    [said] = fake_llm.speech_requests
    whisper = import_litellm().model_cost["whisper-1"]["input_cost_per_second"]
    speech = import_litellm().model_cost["tts-1"]["input_cost_per_character"] * len(said["input"])
    assert usage["calls"] == 3  # transcription, answer, speech
    assert usage["cost_usd"] > SECONDS * whisper  # the chat model is free here
    assert abs(usage["cost_usd"] - SECONDS * whisper - speech) <= speech / 2  # litellm's rounding
    assert second.reason == "budget_exhausted"
    assert len(fake_llm.audio.requests) == 1  # nothing transcribed once the budget was spent
