"""The built-in schedule tools, opt-in per agent (`tools.schedule`): the agent creates a one-shot
or cron job for the chat it answers ("remind me at 9 tomorrow"), lists and cancels that chat's jobs.

Bounded: at most ``max_jobs`` per chat, repeating jobs no more often than ``min_interval_s``,
one-shots at most ``max_ahead_days`` ahead, and only the turn's own chat unless the agent's config
names other targets. A job runs like any scheduled job (the scheduler, the journal, delivery);
the user who asked owns it, so `/jobs` and `chatgate jobs` list it and remove it. Every mistake
goes back to the model as an error result that says what to fix.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta
from itertools import pairwise
from typing import Any, Protocol
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from chatgate.agents.tools.types import ToolContext, ToolOutcome, ToolSpec
from chatgate.config.cron import Cron, valid_cron
from chatgate.config.tool_models import (
    CANCEL_JOB,
    LIST_JOBS,
    SCHEDULE,
    ScheduleToolConfig,
)

MAX_PROMPT_CHARS = 1000
CRON_GAPS_CHECKED = 48  # the next instants a cron's shortest gap is measured over


@dataclass(frozen=True)
class JobRequest:
    """A validated job: exactly one of ``at`` (one-shot) or ``cron`` (in ``tz``)."""

    prompt: str
    to: str  # channel:chat_id[:thread_id]
    tz: str
    at: datetime | None = None
    cron: str | None = None


@dataclass(frozen=True)
class ChatJob:
    """One of a chat's agent-made jobs as the model is shown it."""

    id: str
    schedule: str
    next_at: float | None
    prompt: str


class JobRefused(Exception):
    """The scheduler would not take the job (the message says why, for the model)."""


class JobBackend(Protocol):
    """The gateway's scheduler as the schedule tools use it (``schedules.agent_jobs``)."""

    async def add(self, ctx: ToolContext, request: JobRequest, max_jobs: int) -> ChatJob: ...

    def chat_jobs(self, to: str) -> list[ChatJob]: ...

    async def cancel(self, to: str, job_id: str) -> bool: ...


def schedule_specs(config: ScheduleToolConfig, now: float) -> list[ToolSpec]:
    """The three tools; the schedule tool's description carries the current time (models do
    not know it) so "tomorrow at 9" can be worked out."""
    stamp = datetime.fromtimestamp(now, ZoneInfo(config.tz)).isoformat(timespec="minutes")
    where: dict[str, Any] = {"type": "string", "description": "the chat; omit for this chat"}
    if config.targets:
        where["enum"] = sorted(config.targets)
        where["description"] = "one of the named chats; omit for this chat"
    schedule = {
        "type": "object",
        "properties": {
            "prompt": {
                "type": "string",
                "maxLength": MAX_PROMPT_CHARS,
                "description": "what you will be asked at that time, e.g. 'Remind the user to "
                "call Bob'; your answer then is sent to the chat",
            },
            "at": {
                "type": "string",
                "description": "one-shot: ISO 8601 time, e.g. 2026-06-02T09:00:00+02:00 "
                f"(without an offset: {config.tz})",
            },
            "delay_s": {"type": "number", "description": "one-shot: this many seconds from now"},
            "cron": {
                "type": "string",
                "description": "repeating: minute hour day month weekday, e.g. '0 9 * * 1-5'",
            },
            "tz": {"type": "string", "description": f"zone of cron and at (default {config.tz})"},
            "target": where,
        },
        "required": ["prompt"],
    }
    job_id = {
        "type": "object",
        "properties": {"id": {"type": "string", "description": "the job's id"}},
        "required": ["id"],
    }
    return [
        ToolSpec(
            SCHEDULE,
            "Schedule a message for this chat: give prompt and exactly one of at, delay_s or "
            f"cron. Now is {stamp}. At most {config.max_jobs} jobs per chat; a repeating job "
            f"runs at most every {config.min_interval_s:g} s.",
            schedule,
        ),
        ToolSpec(LIST_JOBS, "List the jobs scheduled for this chat.", {"type": "object"}),
        ToolSpec(CANCEL_JOB, "Cancel one of this chat's scheduled jobs.", job_id),
    ]


def parse_request(
    arguments: Mapping[str, Any], ctx: ToolContext, config: ScheduleToolConfig, now: float
) -> JobRequest | str:
    """The job the arguments ask for, or the error text for the model."""
    prompt = arguments.get("prompt")
    if not isinstance(prompt, str) or not prompt.strip():
        return "error: prompt must be a non-empty string"
    if len(prompt) > MAX_PROMPT_CHARS:
        return f"error: prompt is longer than {MAX_PROMPT_CHARS} characters"
    to = target_of(arguments.get("target"), ctx, config)
    if to.startswith("error:"):
        return to
    tz = arguments.get("tz") or config.tz
    try:
        zone = ZoneInfo(str(tz))
    except (ZoneInfoNotFoundError, ValueError):
        return f"error: tz {tz!r} is not a time zone name (e.g. Europe/Berlin)"
    given = [k for k in ("at", "delay_s", "cron") if arguments.get(k) not in (None, "")]
    if len(given) != 1:
        return "error: give exactly one of at, delay_s or cron"
    if given == ["cron"]:
        return _cron(str(arguments["cron"]), str(tz), prompt, to, config, now)
    at = _one_shot(arguments, zone, now)
    if isinstance(at, str):
        return at
    if at.timestamp() <= now:
        current = datetime.fromtimestamp(now, zone).isoformat(timespec="minutes")
        return f"error: at {at.isoformat()} is not in the future (now is {current})"
    if at.timestamp() > now + timedelta(days=config.max_ahead_days).total_seconds():
        return f"error: at is more than {config.max_ahead_days:g} days ahead"
    return JobRequest(prompt.strip(), to, str(tz), at=at)


def _one_shot(arguments: Mapping[str, Any], zone: ZoneInfo, now: float) -> datetime | str:
    """The time of a one-shot job (``delay_s`` from now, or ``at``), or the error text."""
    if arguments.get("delay_s") not in (None, ""):
        delay = arguments["delay_s"]
        if isinstance(delay, bool) or not isinstance(delay, int | float) or delay <= 0:
            return "error: delay_s must be a positive number of seconds"
        return datetime.fromtimestamp(now + float(delay), zone)
    try:
        at = datetime.fromisoformat(str(arguments["at"]))
    except ValueError:
        return "error: at must be an ISO 8601 time, e.g. 2026-06-02T09:00:00+02:00"
    return at if at.tzinfo is not None else at.replace(tzinfo=zone)


def target_of(name: object, ctx: ToolContext, config: ScheduleToolConfig) -> str:
    """The address a job delivers to: a configured name, else the turn's own chat."""
    if name in (None, ""):
        return ctx.chat or "error: this conversation has no chat to deliver to; name a target"
    if isinstance(name, str) and name in config.targets:
        return config.targets[name]
    if config.targets:
        return f"error: target must be one of {sorted(config.targets)} or omitted"
    return "error: jobs can only be scheduled for this chat; omit target"


def _cron(
    expr: str, tz: str, prompt: str, to: str, config: ScheduleToolConfig, now: float
) -> JobRequest | str:
    if not valid_cron(expr):
        return f"error: cron {expr!r} is not minute hour day month weekday (e.g. '0 9 * * *')"
    timing, instants = Cron(expr, tz), [now]
    while len(instants) <= CRON_GAPS_CHECKED:
        following = timing.next_after(instants[-1])
        if following is None:
            break
        instants.append(following)
    instants.pop(0)  # from now to the first run is no gap between runs
    gaps = [b - a for a, b in pairwise(instants)]
    if gaps and min(gaps) < config.min_interval_s:
        return (
            f"error: cron {expr!r} runs every {min(gaps):g} s at times; "
            f"the least allowed is {config.min_interval_s:g} s"
        )
    return JobRequest(prompt.strip(), to, tz, cron=expr)


async def call_schedule_tool(
    name: str,
    arguments: Mapping[str, Any],
    ctx: ToolContext,
    config: ScheduleToolConfig,
    backend: JobBackend | None,
    now: float,
) -> ToolOutcome:
    """Run one schedule tool for the turn ``ctx``."""
    if backend is None:
        return ToolOutcome("error: scheduling is not available here", is_error=True)
    if name == SCHEDULE:
        request = parse_request(arguments, ctx, config, now)
        if isinstance(request, str):
            return ToolOutcome(request, is_error=True)
        try:
            job = await backend.add(ctx, request, config.max_jobs)
        except JobRefused as exc:
            return ToolOutcome(f"error: {exc}", is_error=True)
        return ToolOutcome(
            f"scheduled {job.id}: {job.schedule}, next run {_when(job.next_at, request.tz)}. "
            f"The user sees it with /jobs and can remove it with /jobs rm {job.id}."
        )
    to = target_of(arguments.get("target"), ctx, config)
    if to.startswith("error:"):
        return ToolOutcome(to, is_error=True)
    if name == LIST_JOBS:
        return ToolOutcome(_listing(backend.chat_jobs(to), config.tz))
    job_id = arguments.get("id")
    if not isinstance(job_id, str) or not job_id:
        return ToolOutcome("error: id must be the id of one of this chat's jobs", is_error=True)
    if not await backend.cancel(to, job_id):
        known = ", ".join(j.id for j in backend.chat_jobs(to)) or "none"
        return ToolOutcome(f"error: no job {job_id!r} in this chat (jobs: {known})", True)
    return ToolOutcome(f"cancelled {job_id}")


def _listing(jobs: Sequence[ChatJob], tz: str) -> str:
    if not jobs:
        return "no jobs are scheduled for this chat"
    return "\n".join(
        f"{j.id}: {j.schedule}, next {_when(j.next_at, tz)}: {j.prompt[:200]}" for j in jobs
    )


def _when(at: float | None, tz: str) -> str:
    if at is None:
        return "none"
    return datetime.fromtimestamp(at, ZoneInfo(tz)).isoformat(timespec="minutes")
