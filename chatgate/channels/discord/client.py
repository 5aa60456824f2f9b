"""The discord.py client chatgate runs: an AutoShardedClient whose events go to one listener.

Sharded from the start (`shards: auto` asks Discord for the count, an integer fixes it), so shard
ownership can later be split across replicas with `shard_ids`. No message or member cache is
kept: chatgate reads each event once and sends by channel id.
"""

from __future__ import annotations

import logging
from typing import Any, Protocol

import discord
from chatgate.channels.discord.config import DiscordChannelConfig
from chatgate.channels.discord.net import build_connector

log = logging.getLogger("chatgate.discord")
MAX_RATELIMIT_WAIT_S = 30.0  # longer waits surface as RateLimited: delivery decides (and may DLQ)


class Listener(Protocol):
    def heard(self) -> None: ...
    def ready(self) -> None: ...
    def shard_event(self, kind: str, shard_id: int) -> None: ...
    async def on_message(self, message: discord.Message) -> None: ...
    async def on_edit(self, payload: discord.RawMessageUpdateEvent) -> None: ...
    async def on_reaction(self, payload: discord.RawReactionActionEvent) -> None: ...
    async def on_interaction(self, interaction: discord.Interaction) -> None: ...


def intents(config: DiscordChannelConfig) -> discord.Intents:
    """Guilds, guild messages and DMs always; reactions when they are input; the privileged
    ones as configured."""
    wanted = discord.Intents.none()
    wanted.guilds = wanted.guild_messages = wanted.dm_messages = True
    if config.reactions != "ignore":
        wanted.guild_reactions = wanted.dm_reactions = True
    wanted.message_content = config.intents.message_content
    wanted.members = config.intents.members
    wanted.presences = config.intents.presences
    return wanted


def privileged(config: DiscordChannelConfig) -> list[str]:
    return [name for name, on in config.intents.model_dump().items() if on]


class NoVoiceWarnings(logging.Filter):
    """Drops discord.py's "X is not installed, voice will NOT be supported" lines: chatgate never
    joins voice, so they are noise on every start (and PyNaCl/davey would be dead weight)."""

    def filter(self, record: logging.LogRecord) -> bool:
        return "voice will NOT be supported" not in record.getMessage()


_VOICE_FILTER = NoVoiceWarnings()


class GatewayClient(discord.AutoShardedClient):
    """Forwards the documented events chatgate uses; everything else is left to discord.py."""

    def __init__(self, listener: Listener, config: DiscordChannelConfig) -> None:
        logging.getLogger("discord.client").addFilter(_VOICE_FILTER)  # a set: added once
        super().__init__(
            intents=intents(config),
            connector=build_connector(config),
            shard_count=None if config.shards == "auto" else int(config.shards),
            max_messages=None,
            chunk_guilds_at_startup=False,
            member_cache_flags=discord.MemberCacheFlags.none(),
            guild_ready_timeout=config.guild_ready_timeout_s,
            max_ratelimit_timeout=MAX_RATELIMIT_WAIT_S,
            allowed_mentions=discord.AllowedMentions(
                everyone=False, users=False, roles=False, replied_user=True
            ),
        )
        self.listener = listener

    async def on_ready(self) -> None:
        self.listener.ready()

    async def on_socket_event_type(self, event_type: str) -> None:
        self.listener.heard()

    async def on_shard_connect(self, shard_id: int) -> None:
        self.listener.shard_event("connect", shard_id)

    async def on_shard_disconnect(self, shard_id: int) -> None:
        self.listener.shard_event("disconnect", shard_id)

    async def on_shard_resumed(self, shard_id: int) -> None:
        self.listener.shard_event("resume", shard_id)

    async def on_shard_ready(self, shard_id: int) -> None:
        self.listener.shard_event("identify", shard_id)

    async def on_message(self, message: discord.Message) -> None:
        await self.listener.on_message(message)

    async def on_raw_message_edit(self, payload: discord.RawMessageUpdateEvent) -> None:
        await self.listener.on_edit(payload)

    async def on_raw_reaction_add(self, payload: discord.RawReactionActionEvent) -> None:
        await self.listener.on_reaction(payload)

    async def on_interaction(self, interaction: discord.Interaction) -> None:
        await self.listener.on_interaction(interaction)

    async def on_error(self, event_method: str, /, *args: Any, **kwargs: Any) -> None:
        log.exception("discord event handler failed", extra={"event": event_method})
