"""`channels.webhook` in gateway.yaml: one signed HTTP route per entry."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import Field, SecretStr, field_validator, model_validator

from chatgate.config.base import StrictModel
from chatgate.config.channel_models import TARGET_PATTERN
from chatgate.policies.webhook_filter import validate_filter


class DeliverConfig(StrictModel):
    to: str = Field(pattern=TARGET_PATTERN, description="channel:chat_id[:thread_id]")


class WebhookAttachmentsConfig(StrictModel):
    """A payload field carrying files: a list (or one object) of ``{url | base64, name?, mime?}``."""

    field: str = Field(pattern=r"^payload(\.[\w\-]+)+$", description="e.g. payload.files")
    allow_hosts: list[str] = Field(
        default_factory=list, description="hosts a `url` may name (none: URLs are refused)"
    )


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
    attachments: WebhookAttachmentsConfig | None = None
    untrusted: bool = False  # the body is untrusted content: write tools need approval

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
    public_url: str | None = Field(
        None,
        pattern=r"^https?://[A-Za-z0-9.\-\[\]:]+(/[\w\-./~%]*)?$",
        description="where callers reach this gateway, for file links in sync answers "
        "(unset: the request's Host, when it is a valid host name)",
    )
