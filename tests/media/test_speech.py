"""Spoken replies without a provider: what is left alone, and why."""

from __future__ import annotations

from chatgate.agents.base import AgentReply
from chatgate.config.agent_models import LiteLLMAgentConfig
from chatgate.media.speech import with_voice
from chatgate.model.outbound import File, OutboundMessage, Text
from chatgate.policies.voice_reply import SpeechReason


def agent(mode: str) -> LiteLLMAgentConfig:
    return LiteLLMAgentConfig.model_validate(
        {"backend": "litellm", "model": "openai/m", "voice_reply": mode, "voice_model": "openai/t"}
    )


async def test_a_typed_turn_is_not_spoken_when_voice_answers_voice() -> None:
    reply = AgentReply("hello")
    got, reason = await with_voice(reply, agent("when_user_sent_voice"), user_sent_voice=False)
    assert got is reply and reason is SpeechReason.USER_DID_NOT_SPEAK


async def test_a_reply_with_its_own_voice_note_is_not_spoken_again() -> None:
    voice = File("v.ogg", "audio/ogg", "voice", data=b"OggS")
    reply = AgentReply("hello", OutboundMessage((Text("hello"), voice)))
    got, reason = await with_voice(reply, agent("always"), user_sent_voice=True)
    assert got is reply and reason is SpeechReason.HAS_VOICE


async def test_blank_text_is_no_text_to_speak() -> None:
    got, reason = await with_voice(AgentReply(" \n "), agent("always"), user_sent_voice=True)
    assert reason is SpeechReason.NO_TEXT and got.message is None
