"""`channels.webchat` in gateway.yaml: a browser chat served on the gateway's own port."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import Field, SecretStr, field_validator

from chatgate.config.base import secret_value
from chatgate.config.channel_models import ChatChannelConfig, StreamConfig
from chatgate.config.secrets import weak_token_reason

DAY_S = 86_400.0
MB = 1024 * 1024


def _streaming() -> StreamConfig:
    """A browser replaces a draft in place cheaply: stream by default, at a lively rate."""
    return StreamConfig(enabled=True, min_edit_interval_s=0.25)


class WebChatChannelConfig(ChatChannelConfig):
    path: str = Field("/chat", pattern=r"^/[\w\-./]*[\w\-]$")
    auth: Literal["token", "open"] = Field(
        "token", description="token: the browser presents `token` once; open: loopback only"
    )
    token: SecretStr | None = None
    agents: list[str] = Field(
        default_factory=list,
        description="further agents a visitor may pick (the channel's `agent` is the default)",
    )
    stream: StreamConfig = Field(default_factory=_streaming)
    title: str = Field("chatgate", min_length=1, max_length=80)
    max_input_chars: int = Field(8000, ge=1, le=100_000)
    history: int = Field(
        200, ge=10, le=10_000, description="messages kept per browser session for replay"
    )
    session_max_age_s: float = Field(30 * DAY_S, gt=0, description="cookie and history lifetime")
    max_streams: int = Field(200, ge=1, description="open event streams, all browsers together")
    max_upload_bytes: int = Field(
        20 * MB, ge=0, description="largest file a browser may upload (0: uploads off)"
    )
    upload_ttl_s: float = Field(3600.0, gt=0, description="how long an unsent upload is kept")

    @field_validator("agents", mode="before")
    @classmethod
    def _agent_names(cls, value: Any) -> Any:
        return [str(v) for v in value] if isinstance(value, list) else value

    @field_validator("token")
    @classmethod
    def _strong_token(cls, value: SecretStr | None) -> SecretStr | None:
        token = secret_value(value)
        reason = weak_token_reason(token) if token is not None else None
        if reason is not None:
            raise ValueError(f"too weak: it {reason}; use e.g. `openssl rand -hex 24`")
        return value
