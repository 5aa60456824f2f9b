"""`channels.slack` in gateway.yaml (no slack_sdk import: `chatgate status` stays fast)."""

from __future__ import annotations

from typing import Literal

from pydantic import Field, SecretStr, ValidationInfo, field_validator

from chatgate.config.channel_models import ChatChannelConfig

SLACK_API = "https://slack.com/api/"


class SlackChannelConfig(ChatChannelConfig):
    bot_token: SecretStr | None = None
    signing_secret: SecretStr | None = None
    app_token: SecretStr | None = None
    mode: Literal["socket", "events"] = Field("socket", validate_default=True)
    events_path: str = Field("/slack/events", pattern=r"^/[\w\-./]*$")
    api_base: str = Field(SLACK_API, pattern=r"^https?://")
    # Slack calls its chats channels (C…, G…, D…); a thread is admitted through its channel.
    allowed_chats: list[str] = Field(default_factory=list, alias="allowed_channels")
    ack_reaction: str | None = Field(
        None, description="emoji name shown on a message while its turn runs, e.g. eyes"
    )
    done_reaction: str | None = Field(
        "white_check_mark", description="swapped in for ack_reaction when the turn answered"
    )
    failed_reaction: str | None = Field("x", description="swapped in when the turn failed")
    slash_command: str = Field(
        "/chatgate",
        pattern=r"^/[a-z0-9_\-]{1,31}$",
        description="the app's slash command: `/chatgate new` is the gateway's /new",
    )
    edits: Literal["ignore", "replace", "new_turn"] = Field(
        "ignore",
        description="replace: an edit swaps its waiting message; new_turn: answered as a turn",
    )
    reactions: Literal["ignore", "context", "turn"] = Field(
        "ignore", description="a reaction on an answer: context for the next turn, or a turn"
    )
    max_body_bytes: int = Field(1_048_576, ge=1024, le=16_777_216)
    request_timeout_s: float = Field(30.0, gt=0)
    ping_interval_s: float = Field(10.0, gt=0, description="Socket Mode ping cadence")
    stale_after_s: float = Field(
        300.0, gt=0, description="no envelope and a failed auth.test for this long → reconnect"
    )
    send_concurrency: int = Field(
        16, ge=1, le=256, description="Web API requests in flight at once (one shared pool)"
    )

    @field_validator("ack_reaction", "done_reaction", "failed_reaction")
    @classmethod
    def _emoji_name(cls, value: str | None) -> str | None:
        """Slack names reactions without colons (`eyes`, not `:eyes:`)."""
        if value is None:
            return None
        name = value.strip().strip(":")
        if not name or any(c.isspace() or c == ":" for c in name):
            raise ValueError(f"{value!r} is not an emoji name like eyes or white_check_mark")
        return name

    @field_validator("bot_token")
    @classmethod
    def _bot_token(cls, value: SecretStr | None) -> SecretStr | None:
        if value is not None and value.get_secret_value() and not _starts(value, "xoxb-"):
            raise ValueError(
                "a bot token starts with xoxb- (OAuth & Permissions → Bot User OAuth Token)"
            )
        return value

    @field_validator("app_token")
    @classmethod
    def _app_token(cls, value: SecretStr | None, info: ValidationInfo) -> SecretStr | None:
        if value is not None and value.get_secret_value() and not _starts(value, "xapp-"):
            raise ValueError(
                "an app-level token starts with xapp- (Basic Information → App-Level Tokens, "
                "scope connections:write)"
            )
        return value

    @field_validator("mode")
    @classmethod
    def _mode_needs(cls, value: str, info: ValidationInfo) -> str:
        """Socket Mode connects with the app-level token; the Events API verifies every request
        with the signing secret. Without it the mode cannot work, so it is a config error."""
        data = info.data
        if not data.get("enabled", True) or not _set(data.get("bot_token")):
            return value  # disabled, or not configured at all: reported by the adapter/doctor
        if value == "socket" and not _set(data.get("app_token")):
            raise ValueError(
                "mode: socket needs app_token (or app_token_file): Basic Information → "
                "App-Level Tokens → Generate, scope connections:write"
            )
        if value == "events" and not _set(data.get("signing_secret")):
            raise ValueError(
                "mode: events needs signing_secret (or signing_secret_file): Basic Information → "
                "App Credentials → Signing Secret"
            )
        return value


def _starts(secret: SecretStr, prefix: str) -> bool:
    return secret.get_secret_value().startswith(prefix)


def _set(secret: object) -> bool:
    return isinstance(secret, SecretStr) and bool(secret.get_secret_value())
