"""Spoken replies: the reply's text as a voice note, through litellm's `aspeech`.

The voice note is asked for as OGG/Opus (`response_format="opus"`), the format Telegram and
WhatsApp show as a voice message, so nothing is transcoded here. It is appended to the reply
as a `File(kind="voice")` before the reply's files are stored, so it is as durable as any file;
the text stays the answer (and the transcript line). A failed or empty synthesis keeps the text
answer alone, logged and counted with its `SpeechReason`.
"""

from __future__ import annotations

import asyncio
import functools
import logging
from dataclasses import replace
from typing import Any

from chatgate.agents.base import AgentError, AgentReply, ModelMeter
from chatgate.agents.litellm_import import litellm_module
from chatgate.config.agent_models import LiteLLMAgentConfig
from chatgate.config.base import secret_value
from chatgate.media.metered import audio_usage, metered
from chatgate.model.outbound import File, OutboundMessage
from chatgate.policies.voice_reply import SpeechReason, decide_voice
from chatgate.presentation.markdown import markdown_to_plain

log = logging.getLogger("chatgate.speech")
VOICE_NAME = "reply.ogg"
VOICE_MIME = "audio/ogg"
SPEECH_TIMEOUT_S = 60.0


class SpeechFailed(Exception):
    def __init__(self, reason: SpeechReason, detail: str) -> None:
        super().__init__(f"{reason.value}: {detail}")
        self.reason = reason


def has_voice(message: OutboundMessage | None) -> bool:
    return message is not None and any(
        isinstance(b, File) and b.kind == "voice" for b in message.blocks
    )


def _provider(model: str | None) -> str:
    return (model or "").partition("/")[0]


async def synthesize(
    config: LiteLLMAgentConfig, text: str, meter: ModelMeter | None = None
) -> bytes:
    """OGG/Opus audio of `text` from the agent's `voice_model`; SpeechFailed otherwise. The
    agent's `api_base`/`api_key` go along when both models have the same provider. A model
    call of the turn: ``meter`` admits and charges it (a spent budget: the text goes alone)."""
    litellm = await litellm_module()
    kwargs: dict[str, Any] = {
        "model": config.voice_model,
        "input": text,
        "voice": config.voice,
        "response_format": "opus",
    }
    if _provider(config.voice_model) == _provider(config.model):  # else: the provider's env key
        kwargs["api_base"] = config.api_base
        kwargs["api_key"] = secret_value(config.api_key)
    model = str(config.voice_model)
    try:
        async with asyncio.timeout(min(config.timeout_s, SPEECH_TIMEOUT_S)):
            call = functools.partial(litellm.aspeech, **kwargs)
            response = await metered(meter, model, [], call, audio_usage(model))
            audio = await asyncio.to_thread(lambda: response.content)  # may read the body
    except AgentError as exc:
        raise SpeechFailed(SpeechReason.TTS_OVER_BUDGET, exc.reason.value) from None
    except TimeoutError:
        raise SpeechFailed(SpeechReason.TTS_TIMEOUT, "no audio in time") from None
    except Exception as exc:  # the provider's words can quote the request: keep the type only
        raise SpeechFailed(SpeechReason.TTS_FAILED, type(exc).__name__) from None
    if not isinstance(audio, bytes) or not audio:
        raise SpeechFailed(SpeechReason.TTS_EMPTY, "the provider answered no audio")
    return bytes(audio)


async def with_voice(
    reply: AgentReply,
    config: LiteLLMAgentConfig,
    *,
    user_sent_voice: bool,
    meter: ModelMeter | None = None,
) -> tuple[AgentReply, SpeechReason | None]:
    """The reply with its voice note appended when `voice_reply` asks for one; else the reply as
    it was and why not (None when a voice note was added)."""
    text = markdown_to_plain(reply.text).strip()
    decision = decide_voice(
        config.voice_reply,
        user_sent_voice=user_sent_voice,
        text=text,
        reply_has_voice=has_voice(reply.message),
    )
    if not decision.speak:
        return reply, decision.reason
    try:
        audio = await synthesize(config, text, meter)
    except SpeechFailed as exc:
        log.warning(
            "spoken reply failed (%s); the text goes alone", exc, extra={"reason": exc.reason.value}
        )
        return reply, exc.reason
    voice = File(VOICE_NAME, VOICE_MIME, "voice", data=audio, size=len(audio))
    message = reply.message or OutboundMessage.from_text(reply.text)
    return replace(reply, message=OutboundMessage((*message.blocks, voice))), None
