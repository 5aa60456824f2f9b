"""`channels.whatsapp` in gateway.yaml (no aiohttp client import: `chatgate status` stays fast)."""

from __future__ import annotations

import re
import string
from typing import Literal

from pydantic import Field, SecretStr, field_validator, model_validator

from chatgate.config.base import StrictModel, secret_value
from chatgate.config.channel_models import ChatChannelConfig

GRAPH_API = "https://graph.facebook.com"
GRAPH_VERSION = "v21.0"
PLACEHOLDERS = frozenset({"text"})
_PHONE_PUNCTUATION = re.compile(r"[\s().\-]")


def phone_id(value: str) -> str:
    """A phone number as WhatsApp names a user (wa_id): digits only, no `+`, no spacing."""
    return _PHONE_PUNCTUATION.sub("", value.strip()).removeprefix("+")


class TemplateConfig(StrictModel):
    """An approved message template (WhatsApp Manager → Message templates)."""

    name: str = Field(pattern=r"^[a-z0-9_]{1,512}$")
    language: str = Field("en_US", pattern=r"^[a-z]{2,3}(_[A-Za-z]{2,4})?$")
    parameters: list[str] = Field(
        default_factory=lambda: ["{text}"],
        max_length=20,
        description="body parameters in order; {text} is the message (one line, clipped)",
    )

    @field_validator("parameters")
    @classmethod
    def _known_placeholders(cls, value: list[str]) -> list[str]:
        for item in value:
            try:
                fields = {name for _, name, _, _ in string.Formatter().parse(item) if name}
            except ValueError as exc:
                raise ValueError(
                    f"{item!r}: {exc} (write a literal brace as {{{{ or }}}})"
                ) from None
            unknown = fields - PLACEHOLDERS
            if unknown:
                raise ValueError(
                    f"{item!r} names {', '.join(sorted(unknown))}; the placeholders are "
                    + ", ".join("{" + p + "}" for p in sorted(PLACEHOLDERS))
                )
        return value


class TemplatesConfig(StrictModel):
    outside_window: TemplateConfig | None = Field(
        None,
        description="sent instead of a free-form message when the user last wrote over 24 h "
        "ago; unset: such messages go to the DLQ (kind outside_window)",
    )


class WhatsAppChannelConfig(ChatChannelConfig):
    reactions: Literal["ignore", "context", "turn"] = Field(
        "ignore", description="a reaction on an answer: context for the next turn, or a turn"
    )
    access_token: SecretStr | None = None
    app_secret: SecretStr | None = None
    verify_token: SecretStr | None = None
    phone_number_id: str | None = Field(None, pattern=r"^\d{1,32}$")
    business_account_id: str | None = Field(
        None, pattern=r"^\d{1,32}$", description="WABA id: doctor checks the app's subscription"
    )
    webhook_path: str = Field("/whatsapp/webhook", pattern=r"^/[\w\-./]*$")
    api_base: str = Field(GRAPH_API, pattern=r"^https?://")
    api_version: str = Field(GRAPH_VERSION, pattern=r"^v\d{1,3}\.\d{1,2}$")
    templates: TemplatesConfig = Field(default_factory=TemplatesConfig)
    read_receipts: bool = Field(
        True, description="mark a message read when its turn starts, with a typing indicator"
    )
    quote_replies: bool = Field(True, description="an answer quotes the message it answers")
    max_body_bytes: int = Field(1_048_576, ge=1024, le=16_777_216)
    request_timeout_s: float = Field(20.0, gt=0)
    send_concurrency: int = Field(
        16, ge=1, le=256, description="Graph API requests in flight at once (one shared pool)"
    )

    @field_validator("phone_number_id", "business_account_id", mode="before")
    @classmethod
    def _numeric_id(cls, value: object) -> object:
        """Ids are digits (YAML reads an unquoted one as a number); empty is unset."""
        if isinstance(value, int) and not isinstance(value, bool):
            return str(value)
        return None if value == "" else value

    @field_validator("allowed_users", "blocked_users", mode="after")
    @classmethod
    def _phone_numbers(cls, value: list[str]) -> list[str]:
        """Users are phone numbers: `+1 555 010 0001` and `15550100001` name the same one."""
        return [phone_id(v) for v in value]

    @model_validator(mode="after")
    def _webhook_needs(self) -> WhatsAppChannelConfig:
        """With an access token the webhook must be verifiable and its posts authentic: without
        the app secret anyone who finds the path could post forged messages."""
        if not self.enabled or secret_value(self.access_token) is None:
            return self  # disabled, or not configured at all: reported by the adapter/doctor
        secrets = (("app_secret", self.app_secret), ("verify_token", self.verify_token))
        missing = [name for name, secret in secrets if secret_value(secret) is None]
        if missing:
            raise ValueError(
                f"{' and '.join(missing)} required with an access_token: the app secret is in "
                "the Meta app's App settings → Basic; the verify token is any string you also "
                "enter under WhatsApp → Configuration → Webhook (e.g. `openssl rand -hex 32`)"
            )
        if not self.phone_number_id:
            raise ValueError(
                "phone_number_id is required with an access_token (WhatsApp → API Setup → "
                "Phone number ID)"
            )
        return self
