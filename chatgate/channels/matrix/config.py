"""`channels.matrix` in gateway.yaml (no mautrix import: `chatgate status` stays fast)."""

from __future__ import annotations

import re
from typing import Literal

from pydantic import Field, SecretStr, field_validator, model_validator

from chatgate.config.base import secret_value
from chatgate.config.channel_models import ChatChannelConfig

USER_ID = re.compile(r"^@[^:\s]+:[^\s]+$")
AutoJoin = Literal["allowed", "all", "none"]


class MatrixChannelConfig(ChatChannelConfig):
    homeserver: str = Field(
        "https://matrix.org", pattern=r"^https?://", description="client-server API base URL"
    )
    user_id: str = Field("", description="the bot's Matrix id, @bot:example.org")
    access_token: SecretStr | None = None
    password: SecretStr | None = Field(None, description="log in with this when no access_token")
    device_id: str = Field(
        "CHATGATE", pattern=r"^[A-Za-z0-9_.\-]{1,64}$", description="the device the keys live on"
    )
    auto_join: AutoJoin = Field(
        "allowed", description="whose room invites are accepted: allowed users, all, or none"
    )
    threads: bool = Field(True, description="a thread (m.thread) is a session of its own")
    e2ee: bool = Field(False, description="encrypted rooms work (keys kept in state_dir)")
    edits: Literal["ignore", "replace", "new_turn"] = Field(
        "ignore",
        description="replace: an edit swaps its waiting message; new_turn: answered as a turn",
    )
    reactions: Literal["ignore", "context", "turn"] = Field(
        "ignore", description="a reaction on an answer: context for the next turn, or a turn"
    )
    ack_reaction: str | None = None
    ignored_users: list[str] = Field(
        default_factory=list, description="other bots: their messages are never input"
    )
    read_receipts: bool = Field(True, description="mark a message read when its turn starts")
    sync_timeout_s: float = Field(30.0, ge=0, le=120)
    request_timeout_s: float = Field(30.0, gt=0)
    max_event_bytes: int = Field(
        32_000, ge=4_000, le=60_000, description="an answer splits into events under this size"
    )

    @field_validator("user_id")
    @classmethod
    def _user_id(cls, value: str) -> str:
        if value and not USER_ID.match(value):
            raise ValueError(f"{value!r} is not a Matrix user id like @bot:example.org")
        return value

    @field_validator("allowed_users", "blocked_users", "ignored_users", mode="after")
    @classmethod
    def _users(cls, value: list[str]) -> list[str]:
        for user in value:
            if user != "*" and not USER_ID.match(user):
                raise ValueError(f"{user!r} is not a Matrix user id like @alice:example.org")
        return value

    @model_validator(mode="after")
    def _credentials(self) -> MatrixChannelConfig:
        """A password login needs the user id; an access token finds its own via whoami."""
        token = secret_value(self.access_token)
        if self.enabled and token is None and secret_value(self.password) and not self.user_id:
            raise ValueError("user_id is required to log in with a password")
        return self

    @property
    def homeserver_url(self) -> str:
        return self.homeserver.rstrip("/")
