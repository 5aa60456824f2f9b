"""Voices: a turn's repeated asks get the one Voice (no rebuild per step), and a reload that
changes the texts' language is heard at once."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from chatgate.config.loader import LoadedConfig
from chatgate.feature.voices import USER_LANGUAGE_KEY, Voices
from chatgate.model.messages import InboundMessage
from tests.config.support import load

CONFIG = """
gateway:
  language: {language}
agents:
  default: {{backend: echo}}
channels:
  telegram:
    token: "123:abc"
"""


@dataclass
class _Live:
    loaded: LoadedConfig


def _message(language: str | None = None) -> InboundMessage:
    extra = {USER_LANGUAGE_KEY: language} if language else {}
    return InboundMessage(
        channel="telegram",
        platform="telegram",
        chat_id="1",
        chat_kind="direct",
        sender_id="1",
        message_id="1",
        text="hi",
        received_at=0.0,
        extra=extra,
    )


def test_the_same_message_and_agent_get_the_same_voice(tmp_path: Path) -> None:
    voices = Voices(_Live(load(tmp_path, CONFIG.format(language="de"))))
    first = voices.for_message(_message(), "default")
    assert voices.for_message(_message(), "default") is first
    assert voices.for_message(_message(), None) is not first  # no agent: no agent overrides
    assert voices.for_message(_message("fr"), "default").language == "fr"
    assert first.language == "de"


def test_a_reload_changes_the_voice(tmp_path: Path) -> None:
    live = _Live(load(tmp_path, CONFIG.format(language="de")))
    voices = Voices(live)
    assert voices.for_message(_message(), "default").language == "de"
    live.loaded = load(tmp_path, CONFIG.format(language="es"))
    assert voices.for_message(_message(), "default").language == "es"
