"""`/jobs` in chat: a user lists and removes the jobs they own (created for them through the API
with an `owner`, or by an agent tool); everybody else's jobs stay invisible to them. The reply
is worded by the catalog (`jobs.*`) in the user's language and command form."""

from __future__ import annotations

from datetime import datetime
from zoneinfo import ZoneInfo

from chatgate.feature.voices import Voices
from chatgate.model.messages import InboundMessage
from chatgate.model.text_ids import TextId
from chatgate.schedules.api import describe
from chatgate.schedules.runner import Scheduler

JOBS_COMMAND = "jobs"


async def jobs_command(
    scheduler: Scheduler, voices: Voices, msg: InboundMessage, principal: str
) -> str:
    """`/jobs` lists the sender's jobs; `/jobs rm ID` removes one of them."""
    voice = voices.for_message(msg)
    words = msg.text.split()
    if len(words) >= 3 and words[1].lower() in ("rm", "remove", "delete"):
        job = scheduler.get(words[2])
        if job is None or job.owner != principal:
            return voice.text(TextId.JOBS_UNKNOWN, id=words[2])
        await scheduler.remove(job.id)
        return voice.text(TextId.JOBS_REMOVED, id=job.id)
    mine = [job for job in scheduler.jobs() if job.owner == principal]
    if not mine:
        return voice.text(TextId.JOBS_NONE)
    lines = [voice.text(TextId.JOBS_TITLE)]
    for job in mine:
        next_at = scheduler.next_at(job.id)
        when = voice.text(TextId.JOBS_NOT_SCHEDULED)
        if next_at is not None:
            local = datetime.fromtimestamp(next_at, ZoneInfo(job.spec.tz))
            when = voice.text(TextId.JOBS_NEXT, time=local.strftime("%Y-%m-%d %H:%M %Z"))
        line = voice.text(TextId.JOBS_LINE, id=job.id, schedule=describe(job), when=when)
        paused = scheduler.is_paused(job.id)
        lines.append(f"{line} {voice.text(TextId.JOBS_PAUSED)}" if paused else line)
    remove = f"{voice.commands.form('jobs')} rm ID"
    lines.append(voice.text(TextId.JOBS_REMOVE_HINT, command=remove))
    return "\n".join(lines)
