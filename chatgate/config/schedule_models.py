"""`schedules:` in gateway.yaml: one job per entry (and the body of a job created at run time)."""

from __future__ import annotations

import re
from datetime import datetime
from typing import Literal

from pydantic import Field, field_validator, model_validator

from chatgate.config.base import StrictModel, TimeZone
from chatgate.config.channel_models import TARGET_PATTERN
from chatgate.config.cron import valid_cron
from chatgate.policies.schedules import MAX_BACKLOG, Misfire

JOB_ID_PATTERN = r"^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$"
SessionMode = Literal["job", "chat", "none"]
MAX_EVERY_S = 10 * 366 * 86_400  # ten years: any longer is a one-shot (`at`)
MAX_GRACE_S = 30 * 86_400
MAX_PROMPT = 20_000
MAX_TARGETS = 50
AT_YEARS = (1970, 9998)  # every zone can still show it as a date


class ScheduleDeliver(StrictModel):
    to: list[str] = Field(
        min_length=1, max_length=MAX_TARGETS, description="channel:chat_id[:thread_id], one or more"
    )

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
    every_s: float | None = Field(None, ge=1, le=MAX_EVERY_S, allow_inf_nan=False)
    at: datetime | None = Field(None, description="one-shot: an ISO time with its UTC offset")
    prompt: str = Field(min_length=1, max_length=MAX_PROMPT)
    agent: str = "default"
    deliver: ScheduleDeliver
    session: SessionMode = Field(
        "job", description="job: its own transcript; chat: the target chat's; none: fresh each run"
    )
    misfire: Misfire = Misfire.RUN_ONCE
    grace_s: float = Field(
        60.0, ge=0, le=MAX_GRACE_S, allow_inf_nan=False, description="a run this late is on time"
    )
    max_catch_up: int = Field(
        24, ge=1, le=MAX_BACKLOG, description="run_all: at most this many missed runs"
    )
    enabled: bool = True

    @model_validator(mode="after")
    def _one_timing(self) -> ScheduleConfig:
        given = [k for k in ("cron", "every_s", "at") if getattr(self, k) is not None]
        if len(given) != 1:
            raise ValueError("give exactly one of cron, every_s, at")
        return self

    @field_validator("at")
    @classmethod
    def _at(cls, value: datetime | None) -> datetime | None:
        if value is None:
            return None
        if value.tzinfo is None:
            raise ValueError("needs a UTC offset, e.g. 2026-12-24T09:00:00+01:00")
        if not AT_YEARS[0] <= value.year <= AT_YEARS[1]:
            raise ValueError(f"must be within the years {AT_YEARS[0]}–{AT_YEARS[1]}")
        return value

    @field_validator("cron")
    @classmethod
    def _cron(cls, value: str | None) -> str | None:
        if value is not None and not valid_cron(value):
            raise ValueError(f"{value!r} is not a cron expression (minute hour day month weekday)")
        return value
