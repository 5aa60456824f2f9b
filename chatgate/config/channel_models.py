"""Keys every chat channel section shares (admission, routing, streaming).

Each platform's own section model lives in its channel package and extends ChatChannelConfig.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import Field, field_validator

from chatgate.config.base import StrictModel, string_list
from chatgate.config.text_models import Language, TextOverrides

DmPolicyName = Literal["open", "pairing", "allowlist", "disabled"]
GroupPolicyName = Literal["respond_all", "mention_only", "command_only", "observe"]
TARGET_PATTERN = r"^[a-z][a-z0-9_-]*:[^:\s]+(:[^:\s]+)?$"


class StreamConfig(StrictModel):
    enabled: bool = False
    min_edit_interval_s: float = Field(1.0, ge=0.2)


class StaleConfig(StrictModel):
    """A message older than ``after_s`` when it reaches intake (after downtime, a replayed
    backlog) is answered, skipped (kept as context) or answered with an "I was offline" notice."""

    after_s: float | None = Field(None, gt=0, description="unset: never stale")
    action: Literal["answer", "skip", "notice"] = "notice"


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
    language: Language | None = Field(None, description="texts' language for this channel")
    texts: TextOverrides = Field(default_factory=TextOverrides)
    stale: StaleConfig = Field(default_factory=StaleConfig)
    debounce_ms: int = Field(
        0, ge=0, le=10_000, description="one turn for a user's messages this close together"
    )

    @field_validator("allowed_users", "blocked_users", "allowed_chats", mode="before")
    @classmethod
    def _ids(cls, value: Any) -> Any:
        return string_list(value)
