"""`channels.discord` in gateway.yaml (no discord.py import: `chatgate status` stays fast)."""

from __future__ import annotations

import re
from typing import Literal

from pydantic import Field, SecretStr, field_validator

from chatgate.config.base import StrictModel, string_list
from chatgate.config.channel_models import ChatChannelConfig

_HOST = re.compile(
    r"^(?=.{1,253}$)[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?(?:\.[A-Za-z0-9-]{1,63})*$"
)
_ADDRESS = re.compile(
    r"^(?:\[(?P<v6>[0-9A-Fa-f:.]+)\]|(?P<host>[^:\[\]\s]+))(?::(?P<port>\d{1,5}))?$"
)


def parse_address(value: str) -> tuple[str, int]:
    """ "host[:port]" or "[v6]:port" → (host, port); the port defaults to 443 (HTTPS/WSS)."""
    m = _ADDRESS.match(value.strip())
    if m is None:
        raise ValueError(f"{value!r} is not host[:port]")
    port = int(m.group("port") or 443)
    if not 0 < port < 65536:
        raise ValueError(f"port {port} is out of range")
    return m.group("v6") or m.group("host"), port


class DiscordIntents(StrictModel):
    """Gateway intents beyond the always-on guilds, guild_messages and dm_messages.

    `message_content`, `members` and `presences` are privileged: each must also be switched on
    in the Developer Portal (Bot → Privileged Gateway Intents) or Discord closes with 4014.
    """

    message_content: bool = True
    members: bool = False
    presences: bool = False


class DiscordChannelConfig(ChatChannelConfig):
    token: SecretStr | None = None
    intents: DiscordIntents = Field(default_factory=DiscordIntents)
    # Discord calls its chats channels; a thread is admitted through its parent channel.
    allowed_chats: list[str] = Field(default_factory=list, alias="allowed_channels")
    allowed_guilds: list[str] = Field(default_factory=list)
    ack_reaction: str | None = None
    edits: Literal["ignore", "replace", "new_turn"] = Field(
        "ignore",
        description="replace: an edit swaps its waiting message; new_turn: answered as a turn",
    )
    reactions: Literal["ignore", "context", "turn"] = Field(
        "ignore", description="a reaction on an answer: context for the next turn, or a turn"
    )
    shards: Literal["auto"] | int = Field(
        "auto", description="auto asks Discord (GET /gateway/bot)"
    )
    max_lines: int = Field(
        30, ge=0, description="soft cap on lines per message (0: none); code blocks stay whole"
    )
    stale_after_s: float = Field(300.0, gt=0)
    connect_timeout_s: float = Field(60.0, gt=0, description="login until every shard is READY")
    request_timeout_s: float = Field(45.0, gt=0)
    guild_ready_timeout_s: float = Field(2.0, ge=0, le=60)
    # For an egress proxy or a self-hosted relay: extra trusted CA certificates (PEM; usually
    # given as `ca_file: path`) and static host overrides. Certificates are always verified.
    ca: str | None = None
    resolve: dict[str, str] = Field(default_factory=dict)

    @field_validator("allowed_guilds", mode="before")
    @classmethod
    def _guild_ids(cls, value: object) -> object:
        return string_list(value)

    @field_validator("shards")
    @classmethod
    def _shards(cls, value: str | int) -> str | int:
        if isinstance(value, int) and not 1 <= value <= 1024:
            raise ValueError("shards must be auto or between 1 and 1024")
        return value

    @field_validator("ca")
    @classmethod
    def _pem(cls, value: str | None) -> str | None:
        if value is not None and "-----BEGIN CERTIFICATE-----" not in value:
            raise ValueError("expected PEM certificates (-----BEGIN CERTIFICATE-----)")
        return value

    @field_validator("resolve")
    @classmethod
    def _resolve(cls, value: dict[str, str]) -> dict[str, str]:
        for host, address in value.items():
            if not _HOST.match(host):
                raise ValueError(f"{host!r} is not a host name")
            parse_address(address)
        return {host.lower(): address for host, address in value.items()}
