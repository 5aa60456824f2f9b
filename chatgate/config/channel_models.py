"""Channel sections of gateway.yaml: shared chat-channel policy keys, Telegram and webhook."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import Field, SecretStr, field_validator, model_validator

from chatgate.config.base import StrictModel, string_list
from chatgate.policies.webhook_filter import validate_filter

DmPolicyName = Literal["open", "pairing", "allowlist", "disabled"]
GroupPolicyName = Literal["respond_all", "mention_only", "command_only", "observe"]
TARGET_PATTERN = r"^[a-z][a-z0-9_-]*:[^:\s]+(:[^:\s]+)?$"


class StreamConfig(StrictModel):
    enabled: bool = False
    min_edit_interval_s: float = Field(1.0, ge=0.2)


class ChatChannelConfig(StrictModel):
    """Admission and routing keys every chat platform shares."""

    enabled: bool = True
    agent: str = "default"
    dm_policy: DmPolicyName = "pairing"
    group_policy: GroupPolicyName = "mention_only"
    allowed_users: list[str] = Field(default_factory=list)
    blocked_users: list[str] = Field(default_factory=list)
    allowed_chats: list[str] = Field(default_factory=list)
    stream: StreamConfig = Field(default_factory=StreamConfig)
    pairing_notify: bool = True

    @field_validator("allowed_users", "blocked_users", "allowed_chats", mode="before")
    @classmethod
    def _ids(cls, value: Any) -> Any:
        return string_list(value)


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
    poll_timeout_s: int = Field(30, ge=0, le=50)
    stale_after_s: float = Field(120.0, gt=0)
    request_timeout_s: float = Field(15.0, gt=0)
    send_concurrency: int = Field(
        8, ge=1, le=256, description="Bot API requests in flight at once for replies"
    )


class DeliverConfig(StrictModel):
    to: str = Field(pattern=TARGET_PATTERN, description="channel:chat_id[:thread_id]")


class WebhookRouteConfig(StrictModel):
    path: str = Field(pattern=r"^/[\w\-./]*$")
    secret: SecretStr | None = None
    signature: Literal["generic", "github", "slack", "none"] = "generic"
    when: dict[str, Any] | None = None
    prompt: str | None = None
    agent: str = "default"
    session: str | None = None
    respond: Literal["sync", "async"] = "sync"
    deliver: DeliverConfig | None = None
    max_body_bytes: int = Field(1024 * 1024, gt=0)

    @model_validator(mode="after")
    def _consistent(self) -> WebhookRouteConfig:
        if self.signature != "none" and self.secret is None:
            raise ValueError("secret is required unless signature: none")
        if self.deliver is not None and self.respond != "async":
            raise ValueError("deliver is only used with respond: async")
        return self

    @field_validator("when")
    @classmethod
    def _valid_filter(cls, value: dict[str, Any] | None) -> dict[str, Any] | None:
        problems = validate_filter(value, "when")
        if problems:
            raise ValueError("; ".join(p.removeprefix("when: ") for p in problems))
        return value


class WebhookChannelConfig(StrictModel):
    enabled: bool = True
    routes: dict[str, WebhookRouteConfig] = Field(default_factory=dict)


class ChannelsConfig(StrictModel):
    """Built-in channels are typed here; plugin channels are validated by their own models."""

    model_config = StrictModel.model_config | {"extra": "allow"}

    telegram: TelegramChannelConfig | None = None
    webhook: WebhookChannelConfig | None = None
