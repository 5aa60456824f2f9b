"""`/jobs` in chat: a user lists and removes the jobs they own (created for them through the API
with an `owner`, or by an agent tool); everybody else's jobs stay invisible to them."""

from __future__ import annotations

from datetime import datetime
from functools import partial
from zoneinfo import ZoneInfo

from chatgate.channels.types import InboundMessage
from chatgate.gateway.commands import Command
from chatgate.gateway.pipeline import Pipeline
from chatgate.schedules.api import describe
from chatgate.schedules.runner import Scheduler

NO_JOBS_TEXT = "You have no scheduled jobs."


def install(pipeline: Pipeline, scheduler: Scheduler) -> None:
    """Wire the scheduler into the message path: its runs' route hints and the /jobs command."""
    pipeline.hint_sources.append(scheduler.hint)
    pipeline.stages.command_handlers[Command.JOBS] = partial(jobs_command, scheduler)


async def jobs_command(scheduler: Scheduler, msg: InboundMessage, principal: str) -> str:
    """`/jobs` lists the sender's jobs; `/jobs rm ID` removes one of them."""
    words = msg.text.split()
    if len(words) >= 3 and words[1].lower() in ("rm", "remove", "delete"):
        job = scheduler.get(words[2])
        if job is None or job.owner != principal:
            return f"You have no job called {words[2]}."
        await scheduler.remove(job.id)
        return f"Removed {job.id}."
    mine = [job for job in scheduler.jobs() if job.owner == principal]
    if not mine:
        return NO_JOBS_TEXT
    lines = ["Your scheduled jobs:"]
    for job in mine:
        next_at = scheduler.next_at(job.id)
        when = "not scheduled"
        if next_at is not None:
            local = datetime.fromtimestamp(next_at, ZoneInfo(job.spec.tz))
            when = "next " + local.strftime("%Y-%m-%d %H:%M %Z")
        paused = " (paused)" if scheduler.is_paused(job.id) else ""
        lines.append(f"• {job.id}: {describe(job)}, {when}{paused}")
    lines.append("Remove one with /jobs rm ID.")
    return "\n".join(lines)
