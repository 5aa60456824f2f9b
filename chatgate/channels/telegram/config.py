"""`channels.telegram` in gateway.yaml."""

from __future__ import annotations

from typing import Literal

from pydantic import Field, SecretStr, ValidationInfo, field_validator

from chatgate.config.base import StrictModel
from chatgate.config.channel_models import ChatChannelConfig


class TelegramWebhookConfig(StrictModel):
    public_url: str | None = Field(None, pattern=r"^https?://")
    path: str = Field("/telegram/webhook", pattern=r"^/[\w\-./]*$")
    secret_token: SecretStr | None = None


class TelegramChannelConfig(ChatChannelConfig):
    token: SecretStr | None = None
    mode: Literal["polling", "webhook"] = "polling"
    api_base: str = Field("https://api.telegram.org", pattern=r"^https?://")
    webhook: TelegramWebhookConfig = Field(default_factory=TelegramWebhookConfig)
    ack_reaction: str | None = None
    edits: Literal["ignore", "replace", "new_turn"] = Field(
        "ignore",
        description="replace: an edit swaps its waiting message; new_turn: answered as a turn",
    )
    poll_timeout_s: int = Field(30, ge=0, le=50)
    stale_after_s: float = Field(120.0, gt=0)
    request_timeout_s: float = Field(15.0, gt=0)
    send_concurrency: int = Field(
        8, ge=1, le=256, description="Bot API requests in flight at once for replies"
    )

    @field_validator("webhook")
    @classmethod
    def _signed_webhooks(
        cls, value: TelegramWebhookConfig, info: ValidationInfo
    ) -> TelegramWebhookConfig:
        """Telegram sends the secret token with every update; without one, anyone who finds the
        path can post forged updates."""
        if info.data.get("mode") == "webhook" and value.secret_token is None:
            raise ValueError(
                "webhook.secret_token is required in webhook mode "
                "(e.g. `openssl rand -hex 32`; Telegram sends it with every update)"
            )
        return value
