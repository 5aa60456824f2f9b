"""Telegram channel on python-telegram-bot: polling or webhook, native HTML, inline keyboards."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from chatgate.channels.descriptor import ChannelDescriptor, chat_claims, secret_lease
from chatgate.channels.telegram.config import TelegramChannelConfig
from chatgate.config.claims import Claim, PathClaim
from chatgate.presentation.file_rules import MB, FileLimits
from chatgate.presentation.limits import PresentationLimits
from chatgate.presentation.markdown import markdown_to_html

# Bot API: 4096 UTF-16 units per message, callback_data 1-64 bytes, no select widget; bot
# uploads up to 50 MB, photos up to 10 MB, captions 1024 characters; bots download up to 20 MB.
FILES = FileLimits(
    max_bytes=50 * MB, max_caption_chars=1024, max_photo_bytes=10 * MB, max_download_bytes=20 * MB
)
LIMITS = PresentationLimits(
    max_text_length=4096, max_buttons=20, callback_data_max_bytes=64, files=FILES
)


def _claims(section: Any) -> Iterable[Claim]:
    yield from chat_claims(section)
    if isinstance(section, TelegramChannelConfig) and section.mode == "webhook":
        yield PathClaim(section.webhook.path, ("webhook", "path"))


def _exclusive(section: Any) -> str | None:
    """getUpdates allows one poller per token (a second gets 409); webhooks go to every replica."""
    if isinstance(section, TelegramChannelConfig) and section.mode == "polling" and section.token:
        return secret_lease("telegram", section.token)
    return None


DESCRIPTOR = ChannelDescriptor(
    platform="telegram",
    config_model=TelegramChannelConfig,
    adapter="chatgate.channels.telegram.adapter:TelegramChannel",
    limits=LIMITS,
    markdown=markdown_to_html,
    claims=_claims,
    doctor="chatgate.channels.telegram.doctor:check",
    noisy_loggers=("telegram",),
    exclusive=_exclusive,
)
