"""`retention:` in gateway.yaml: how long transcripts and journal content are kept, per channel."""

from __future__ import annotations

from typing import Annotated

from pydantic import Field

from chatgate.config.base import StrictModel

DAY_S = 86_400.0


class RetentionConfig(StrictModel):
    days: float | None = Field(
        None,
        gt=0,
        description="every channel's transcripts and journal content, in days; unset: kept",
    )
    channels: dict[str, Annotated[float, Field(gt=0)]] = Field(
        default_factory=dict, description="channel name → days, overriding `days` for that channel"
    )
    every_s: float = Field(3600.0, ge=10, description="how often the background purge runs")
    batch: int = Field(500, ge=1, le=100_000, description="most lines or entries purged per step")

    def days_for(self, channel: str) -> float | None:
        """The channel's retention in days (None: kept until erased)."""
        return self.channels.get(channel, self.days)
