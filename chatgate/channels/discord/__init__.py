"""Discord channel on discord.py: sharded gateway with resume, DMs, guild mentions, threads,
components and embeds (no discord.py import here: the adapter imports it when it starts)."""

from __future__ import annotations

from typing import Any

from chatgate.channels.descriptor import CHAT_HOT_KEYS, ChannelDescriptor, secret_lease
from chatgate.channels.discord.config import DiscordChannelConfig
from chatgate.channels.discord.markdown import markdown_to_discord
from chatgate.presentation.file_rules import MB, FileLimits
from chatgate.presentation.limits import PresentationLimits

# 2,000 characters per message; 5 action rows of 5 buttons (one row kept for a select);
# 25 select options; custom_id ≤ 100 characters (values ≤ 96 bytes after our "b<n>:" prefix).
LIMITS = PresentationLimits(
    max_text_length=2000,
    supports_select=True,
    supports_tables=True,
    max_buttons=20,
    max_options=25,
    callback_data_max_bytes=96,
    max_table_rows=60,
    max_table_cols=8,
    files=FileLimits(  # 10 MB per upload without server boosts; no bot voice messages
        max_bytes=10 * MB,
        max_caption_chars=2000,
        kinds=frozenset({"image", "document", "audio", "video"}),
    ),
)


def _exclusive(section: Any) -> str | None:
    """One gateway connection set per bot token: the whole shard set is one lease."""
    if isinstance(section, DiscordChannelConfig) and section.token:
        return secret_lease("discord", section.token)
    return None


DESCRIPTOR = ChannelDescriptor(
    platform="discord",
    config_model=DiscordChannelConfig,
    adapter="chatgate.channels.discord.adapter:DiscordChannel",
    limits=LIMITS,
    markdown=markdown_to_discord,
    hot_keys=CHAT_HOT_KEYS | {"allowed_guilds", "max_lines", "request_timeout_s", "stale_after_s"},
    doctor="chatgate.channels.discord.doctor:check",
    noisy_loggers=("discord",),
    exclusive=_exclusive,
)
