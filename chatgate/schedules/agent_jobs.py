"""The scheduler as the agent's schedule tools see it (``agents.tools.schedule.JobBackend``).

A job an agent makes is a ``chat`` job: owned by the user whose turn asked for it (so `/jobs`
lists and removes it), run by the same agent, in the chat's session (the run sees the
conversation), delivering to one chat. The per-chat bound is checked by the job store as it saves
the job, so two calls (in one step, or on two replicas) cannot both take the last place. A
scheduled run cannot schedule more runs.
"""

from __future__ import annotations

import secrets
from collections.abc import Callable

from chatgate.agents.tools.schedule import ChatJob, JobRefused, JobRequest
from chatgate.agents.tools.types import ToolContext
from chatgate.schedules.api import describe
from chatgate.schedules.jobs import ScheduledJob
from chatgate.schedules.runner import JobError, Scheduler
from chatgate.schedules.store import CapReached, ChatCap

AGENT_JOB_PREFIX = "chat-"
RUN_SENDER_PREFIX = "job:"  # sender_id of a scheduled run (see runner.run_message)


class AgentJobs:
    def __init__(self, scheduler: Scheduler, principal_of: Callable[[str], str]) -> None:
        self._scheduler = scheduler
        self._principal_of = principal_of  # channel:sender_id → the person (alternate ids)

    def _mine(self, to: str) -> list[ScheduledJob]:
        return [
            job
            for job in self._scheduler.jobs()
            if job.source == "chat" and list(job.spec.deliver.to) == [to]
        ]

    def chat_jobs(self, to: str) -> list[ChatJob]:
        return [self._view(job) for job in self._mine(to)]

    def _view(self, job: ScheduledJob) -> ChatJob:
        return ChatJob(job.id, describe(job), self._scheduler.next_at(job.id), job.spec.prompt)

    async def add(self, ctx: ToolContext, request: JobRequest, max_jobs: int) -> ChatJob:
        if ctx.sender_id.startswith(RUN_SENDER_PREFIX):
            raise JobRefused("a scheduled run cannot schedule more jobs")
        body: dict[str, object] = {
            "prompt": request.prompt,
            "agent": ctx.agent,
            "deliver": {"to": [request.to]},
            "session": "chat",
            "tz": request.tz,
        }
        if request.cron is not None:
            body["cron"] = request.cron
        else:
            assert request.at is not None
            body["at"] = request.at.isoformat()
        owner = self._principal_of(f"{ctx.channel}:{ctx.sender_id}")
        job_id = AGENT_JOB_PREFIX + secrets.token_hex(4)
        cap = ChatCap(request.to, max_jobs)
        try:
            job = await self._scheduler.add(job_id, body, source="chat", owner=owner, cap=cap)
        except JobError as exc:
            raise JobRefused(str(exc)) from None
        except CapReached:
            raise JobRefused(
                f"this chat has {max_jobs} jobs already (the most allowed); "
                "cancel one first (gateway.list_jobs shows them)"
            ) from None
        return self._view(job)

    async def cancel(self, to: str, job_id: str) -> bool:
        if not any(job.id == job_id for job in self._mine(to)):
            return False
        return await self._scheduler.remove(job_id)
