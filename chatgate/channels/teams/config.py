"""`channels.teams` in gateway.yaml (no SDK import: `chatgate status` stays fast)."""

from __future__ import annotations

import re
from typing import Literal

from pydantic import Field, SecretStr, field_validator, model_validator

from chatgate.config.base import StrictModel, secret_value
from chatgate.config.channel_models import ChatChannelConfig

CloudName = Literal["public", "usgov", "usgovdod", "china"]
_GUID = r"^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$"


class CloudOverrides(StrictModel):
    """Endpoints of the Azure cloud the bot lives in; unset keys keep the named cloud's values
    (the Teams SDK's CloudEnvironment). Tests and sovereign proxies set them."""

    login_endpoint: str | None = Field(None, pattern=r"^https?://")
    login_tenant: str | None = None
    bot_scope: str | None = None
    openid_metadata_url: str | None = Field(None, pattern=r"^https?://")
    token_issuer: str | None = None


class TeamsChannelConfig(ChatChannelConfig):
    app_id: str | None = Field(None, description="Azure bot registration: Microsoft App ID")
    app_password: SecretStr | None = Field(None, description="client secret (or app_password_file)")
    tenant_id: str | None = Field(None, description="single-tenant bots; empty = multi-tenant")
    allowed_tenants: list[str] = Field(
        default_factory=list, description="empty = only tenant_id (or any, when multi-tenant)"
    )
    messaging_path: str = Field("/teams/messages", pattern=r"^/[\w\-./]*$")
    public_url: str | None = Field(
        None, pattern=r"^https://", description="the messaging endpoint as Azure calls it (doctor)"
    )
    edits: Literal["ignore", "replace", "new_turn"] = Field(
        "ignore",
        description="replace: an edit swaps its waiting message; new_turn: answered as a turn",
    )
    cloud: CloudName = "public"
    endpoints: CloudOverrides = Field(default_factory=CloudOverrides)
    max_body_bytes: int = Field(1_048_576, ge=1024, le=16_777_216)
    request_timeout_s: float = Field(20.0, gt=0)
    typing_every_s: float = Field(3.0, gt=0, le=30.0, description="typing activity refresh")

    @field_validator("app_id", "tenant_id", mode="before")
    @classmethod
    def _empty_is_unset(cls, value: object) -> object:
        return None if value == "" else value

    @field_validator("app_id", "tenant_id")
    @classmethod
    def _guid(cls, value: str | None) -> str | None:
        if value is not None and not re.match(_GUID, value):
            raise ValueError(f"{value!r} is not a GUID (Azure portal → the bot's Configuration)")
        return value.lower() if value else value

    @field_validator("allowed_tenants", mode="after")
    @classmethod
    def _tenants(cls, value: list[str]) -> list[str]:
        return [v.lower() for v in value]

    @field_validator("allowed_users", "blocked_users", mode="after")
    @classmethod
    def _object_ids(cls, value: list[str]) -> list[str]:
        """Users are Entra object ids: a Teams activity names its sender by id, never by UPN."""
        for item in value:
            if "@" in item:
                raise ValueError(
                    f"{item!r} looks like a user principal name; Teams activities carry the "
                    "sender's Entra object id only: use that (Entra admin center → Users → the "
                    "user → Object ID)"
                )
        return [v.lower() for v in value]

    @model_validator(mode="after")
    def _credentials(self) -> TeamsChannelConfig:
        """An app id without its password (or the reverse) can neither verify nor answer."""
        if not self.enabled:
            return self
        has_password = secret_value(self.app_password) is not None
        if has_password and not self.app_id:
            raise ValueError("app_password is set without app_id (the bot's Microsoft App ID)")
        if self.app_id and not has_password:
            raise ValueError(
                "app_id is set without app_password: add a client secret (Azure portal → the "
                "bot's app registration → Certificates & secrets) as app_password or "
                "app_password_file"
            )
        return self

    def tenants(self) -> frozenset[str]:
        """Tenants whose activities are taken; empty = any (multi-tenant, no list)."""
        if self.allowed_tenants:
            return frozenset(self.allowed_tenants)
        return frozenset({self.tenant_id}) if self.tenant_id else frozenset()
