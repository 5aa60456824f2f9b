"""The `budgets:` section and an agent's `price:`: spend limits per user, chat, agent, channel
or everyone, over calendar periods, with a warn / degrade / refuse ladder."""

from __future__ import annotations

from typing import Literal

from pydantic import Field, field_validator, model_validator

from chatgate.config.base import StrictModel, TimeZone, string_list

BUDGET_NAME = r"^[A-Za-z0-9][A-Za-z0-9_.-]*$"


class PriceConfig(StrictModel):
    """USD per million tokens, overriding litellm's cost map (self-hosted, negotiated)."""

    input_per_mtok: float = Field(ge=0)
    output_per_mtok: float = Field(ge=0)


class BudgetRuleConfig(StrictModel):
    name: str = Field(
        pattern=BUDGET_NAME, description="counts are kept per name: renaming starts afresh"
    )
    scope: Literal["user", "chat", "agent", "channel", "global"]
    period: Literal["day", "week", "month"] = "day"
    timezone: TimeZone = "UTC"
    limit_usd: float | None = Field(None, ge=0)
    limit_tokens: int | None = Field(None, ge=0)
    limit_turns: int | None = Field(None, ge=0)
    warn_at: float | None = Field(0.8, gt=0, le=1)
    degrade_to: str | None = None
    degrade_at: float = Field(0.9, gt=0, le=1)
    exempt_users: list[str] = Field(default_factory=list)
    channels: list[str] = Field(default_factory=list)
    agents: list[str] = Field(default_factory=list)

    @field_validator("exempt_users", "channels", "agents", mode="before")
    @classmethod
    def _ids(cls, value: object) -> object:
        return string_list(value)

    @model_validator(mode="after")
    def _some_limit(self) -> BudgetRuleConfig:
        if self.limit_usd is None and self.limit_tokens is None and self.limit_turns is None:
            raise ValueError("set limit_usd, limit_tokens or limit_turns")
        return self
