"""Whether a reply is spoken: `voice_reply` against what the user sent and what the reply is."""

from __future__ import annotations

import pytest

from chatgate.policies.voice_reply import (
    MAX_SPOKEN_CHARS,
    SpeechReason,
    VoiceReplyMode,
    decide_voice,
)

R = SpeechReason
# (mode, user sent voice, text, reply already has a voice note) → speak, reason
CASES: list[tuple[VoiceReplyMode, bool, str, bool, bool, SpeechReason | None]] = [
    ("never", True, "hi", False, False, R.OFF),
    ("never", False, "hi", False, False, R.OFF),
    ("when_user_sent_voice", False, "hi", False, False, R.USER_DID_NOT_SPEAK),
    ("when_user_sent_voice", True, "hi", False, True, None),
    ("always", False, "hi", False, True, None),
    ("always", False, "   ", False, False, R.NO_TEXT),
    ("always", False, "hi", True, False, R.HAS_VOICE),
    ("always", False, "x" * MAX_SPOKEN_CHARS, False, True, None),
    ("always", False, "x" * (MAX_SPOKEN_CHARS + 1), False, False, R.TOO_LONG),
    ("when_user_sent_voice", True, "", False, False, R.NO_TEXT),
]


@pytest.mark.parametrize(("mode", "heard", "text", "has_voice", "speak", "reason"), CASES)
def test_decide_voice(
    mode: VoiceReplyMode,
    heard: bool,
    text: str,
    has_voice: bool,
    speak: bool,
    reason: SpeechReason | None,
) -> None:
    decision = decide_voice(mode, user_sent_voice=heard, text=text, reply_has_voice=has_voice)
    assert (decision.speak, decision.reason) == (speak, reason)
