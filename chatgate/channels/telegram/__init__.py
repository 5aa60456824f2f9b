"""Telegram channel on python-telegram-bot: polling or webhook, native HTML, inline keyboards."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from chatgate.channels.descriptor import ChannelDescriptor, chat_claims
from chatgate.channels.telegram.config import TelegramChannelConfig
from chatgate.config.claims import Claim, PathClaim
from chatgate.presentation.limits import PresentationLimits

# Bot API: 4096 UTF-16 units per message, callback_data 1-64 bytes, no select widget.
LIMITS = PresentationLimits(max_text_length=4096, max_buttons=20, callback_data_max_bytes=64)


def _claims(section: Any) -> Iterable[Claim]:
    yield from chat_claims(section)
    if isinstance(section, TelegramChannelConfig) and section.mode == "webhook":
        yield PathClaim(section.webhook.path, ("webhook", "path"))


DESCRIPTOR = ChannelDescriptor(
    platform="telegram",
    config_model=TelegramChannelConfig,
    adapter="chatgate.channels.telegram.adapter:TelegramChannel",
    limits=LIMITS,
    claims=_claims,
    doctor="chatgate.channels.telegram.doctor:check",
    noisy_loggers=("telegram",),
)
