"""`schedules:` in gateway.yaml: one job per entry (and the body of a job created at run time)."""

from __future__ import annotations

import re
from datetime import datetime
from typing import Literal

from pydantic import Field, field_validator, model_validator

from chatgate.config.base import StrictModel, TimeZone
from chatgate.config.channel_models import TARGET_PATTERN
from chatgate.config.cron import valid_cron
from chatgate.policies.schedules import Misfire

JOB_ID_PATTERN = r"^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$"
SessionMode = Literal["job", "chat", "none"]


class ScheduleDeliver(StrictModel):
    to: list[str] = Field(min_length=1, description="channel:chat_id[:thread_id], one or more")

    @field_validator("to", mode="before")
    @classmethod
    def _one_or_many(cls, value: object) -> object:
        return [value] if isinstance(value, str) else value

    @field_validator("to")
    @classmethod
    def _targets(cls, value: list[str]) -> list[str]:
        for target in value:
            if not re.fullmatch(TARGET_PATTERN, target):
                raise ValueError(f"{target!r} is not channel:chat_id[:thread_id]")
        return value


class ScheduleConfig(StrictModel):
    """A job: exactly one of ``cron`` (with ``tz``), ``every_s`` or ``at``; the ``prompt`` the
    agent answers; where the answer goes; which session it runs in; what happens to runs missed
    while no replica was up."""

    cron: str | None = None
    tz: TimeZone = "UTC"
    every_s: float | None = Field(None, ge=1)
    at: datetime | None = Field(None, description="one-shot: an ISO time with its UTC offset")
    prompt: str = Field(min_length=1)
    agent: str = "default"
    deliver: ScheduleDeliver
    session: SessionMode = Field(
        "job", description="job: its own transcript; chat: the target chat's; none: fresh each run"
    )
    misfire: Misfire = Misfire.RUN_ONCE
    grace_s: float = Field(60.0, ge=0, description="a run this late is still on time")
    max_catch_up: int = Field(24, ge=1, description="run_all: at most this many missed runs")
    enabled: bool = True

    @model_validator(mode="after")
    def _one_timing(self) -> ScheduleConfig:
        given = [k for k in ("cron", "every_s", "at") if getattr(self, k) is not None]
        if len(given) != 1:
            raise ValueError("give exactly one of cron, every_s, at")
        if self.at is not None and self.at.tzinfo is None:
            raise ValueError("at needs a UTC offset, e.g. 2026-12-24T09:00:00+01:00")
        return self

    @field_validator("cron")
    @classmethod
    def _cron(cls, value: str | None) -> str | None:
        if value is not None and not valid_cron(value):
            raise ValueError(f"{value!r} is not a cron expression (minute hour day month weekday)")
        return value
