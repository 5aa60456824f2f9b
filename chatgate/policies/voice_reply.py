"""Whether a reply is also spoken: `agents.<name>.voice_reply` against what the user sent.

Pure. `never` speaks nothing; `when_user_sent_voice` speaks when a message of the turn was a
voice note; `always` speaks every text answer. Nothing is spoken without text, over the
provider's input limit, or when the reply already carries a voice note. Each "no" and each
failure has a reason code (metrics and logs).
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum
from typing import Literal

VoiceReplyMode = Literal["never", "when_user_sent_voice", "always"]
MAX_SPOKEN_CHARS = 4096  # OpenAI's speech endpoint takes at most 4,096 input characters


class SpeechReason(StrEnum):
    """Why a reply was not spoken (or its speech failed)."""

    OFF = "voice_reply_off"
    USER_DID_NOT_SPEAK = "user_sent_no_voice"
    NO_TEXT = "no_text_to_speak"
    TOO_LONG = "text_too_long_to_speak"
    HAS_VOICE = "reply_has_voice"
    TTS_FAILED = "tts_failed"
    TTS_TIMEOUT = "tts_timeout"
    TTS_EMPTY = "tts_empty_audio"
    TTS_OVER_BUDGET = "tts_over_budget"  # a spend budget refused the speech call


SPEECH_FAILURES = frozenset(
    {
        SpeechReason.TTS_FAILED,
        SpeechReason.TTS_TIMEOUT,
        SpeechReason.TTS_EMPTY,
        SpeechReason.TTS_OVER_BUDGET,
    }
)


@dataclass(frozen=True)
class VoiceDecision:
    speak: bool
    reason: SpeechReason | None = None


SPEAK = VoiceDecision(True)


def decide_voice(
    mode: VoiceReplyMode, *, user_sent_voice: bool, text: str, reply_has_voice: bool
) -> VoiceDecision:
    """Speak this reply or not, and why not."""
    if mode == "never":
        return VoiceDecision(False, SpeechReason.OFF)
    if mode == "when_user_sent_voice" and not user_sent_voice:
        return VoiceDecision(False, SpeechReason.USER_DID_NOT_SPEAK)
    if reply_has_voice:
        return VoiceDecision(False, SpeechReason.HAS_VOICE)
    if not text.strip():
        return VoiceDecision(False, SpeechReason.NO_TEXT)
    if len(text) > MAX_SPOKEN_CHARS:
        return VoiceDecision(False, SpeechReason.TOO_LONG)
    return SPEAK
