"""The operator surface of the scheduler: job views (status, dashboard, CLI) and `/api/jobs`.

A run's outcome is read from the journal entry it became, so `chatgate jobs history` and
`chatgate why` tell the same story; a run counts as delivered only when the platform returned a
message id.
"""

from __future__ import annotations

from typing import Any

from aiohttp import web

from chatgate.config.redact import scrub
from chatgate.feature.ports import RouteTable
from chatgate.http_input import BadInput, bounded_int, read_json
from chatgate.model.reasons import DeliveryStatus
from chatgate.policies.schedules import Once, ScheduleReason
from chatgate.schedules.jobs import RunRecord, ScheduledJob
from chatgate.schedules.runner import JobError, Scheduler
from chatgate.schedules.send import SendApi

HISTORY_LIMIT = 20
MAX_HISTORY = 1000
MAX_BODY = 64 * 1024


async def run_outcome(scheduler: Scheduler, record: RunRecord) -> dict[str, Any]:
    """One history line with each run's journal outcome (delivered needs a message id)."""
    line = record.to_dict()
    outcomes: list[dict[str, Any]] = []
    for key in record.keys:
        entry = await scheduler.context.state.journal.get(key)
        if entry is None:
            outcomes.append({"key": key, "outcome": "purged"})
            continue
        delivered = entry.delivery == DeliveryStatus.SENT.value and bool(entry.delivery_ids)
        outcomes.append(
            {
                "key": key,
                "state": entry.state.value,
                "stage": entry.stage,
                "reason": entry.reason,
                "delivery": entry.delivery,
                "delivery_ids": entry.delivery_ids,
                "outcome": "delivered" if delivered else (entry.delivery or entry.state.value),
            }
        )
    line["runs"] = outcomes
    return line


async def problems(scheduler: Scheduler, job: ScheduledJob) -> list[str]:
    """Why a job cannot deliver (doctor and status): unknown agent, unknown or dead targets."""
    context = scheduler.context
    found = []
    if job.spec.agent not in context.agents():
        found.append(f"agent '{job.spec.agent}' is not configured")
    for target in job.targets:
        if target.channel not in context.loaded.channels:
            found.append(f"{ScheduleReason.TARGET_UNKNOWN.value}: {target.address}")
        elif await context.state.dead_targets.kind(target) is not None:
            found.append(f"{ScheduleReason.TARGET_DEAD.value}: {target.address}")
    return found


async def job_view(scheduler: Scheduler, job: ScheduledJob) -> dict[str, Any]:
    spec = job.spec
    last = await scheduler.store.runs(job.id, 1)
    next_at = scheduler.next_at(job.id)
    state = "paused" if scheduler.is_paused(job.id) or not spec.enabled else "active"
    if isinstance(job.timing, Once) and next_at is None and state == "active":
        state = "finished"
    return {
        "id": job.id,
        "source": job.source,
        "owner": job.owner,
        "schedule": describe(job),
        "agent": spec.agent,
        "prompt": spec.prompt,
        "deliver": list(spec.deliver.to),
        "session": spec.session,
        "misfire": spec.misfire.value,
        "state": state,
        "next_at": next_at,
        "last": await run_outcome(scheduler, last[0]) if last else None,
        "problems": await problems(scheduler, job),
    }


def describe(job: ScheduledJob) -> str:
    spec = job.spec
    if spec.cron is not None:
        return f"cron '{spec.cron}' {spec.tz}"
    if spec.every_s is not None:
        return f"every {spec.every_s:g}s"
    assert spec.at is not None
    return f"at {spec.at.isoformat(timespec='seconds')}"


async def jobs_status(scheduler: Scheduler) -> list[dict[str, Any]]:
    return [await job_view(scheduler, job) for job in scheduler.jobs()]


def history_limit(given: str | None) -> int:
    """``?limit=`` of a job's history: ASCII digits, 1–MAX_HISTORY."""
    if given is None:
        return HISTORY_LIMIT
    return bounded_int(given, "limit", low=1, high=MAX_HISTORY)


class JobsApi:
    """`/api/jobs` handlers over one scheduler, and `/api/send` (see `schedules.send`); mounted
    on the gateway's dynamic routes, whose middleware enforces the bearer token on /api/."""

    def __init__(self, scheduler: Scheduler) -> None:
        self.scheduler = scheduler

    def mount(self, routes: RouteTable) -> None:
        routes.add("POST", "/api/send", SendApi(self.scheduler.context).handle)
        routes.add("GET", "/api/jobs", self.list)
        routes.add("POST", "/api/jobs", self.add)
        routes.add("*", "/api/jobs", self.one, prefix=True)

    def _json(self, data: dict[str, Any], status: int = 200) -> web.Response:
        return web.json_response(scrub(data, self.scheduler.context.loaded.secrets), status=status)

    async def list(self, request: web.Request) -> web.Response:
        return self._json({"jobs": await jobs_status(self.scheduler)})

    async def add(self, request: web.Request) -> web.Response:
        try:
            body = await read_json(request, MAX_BODY)
        except BadInput as bad:
            return bad.answer()
        if not isinstance(body, dict) or not isinstance(body.get("id"), str):
            return self._json({"error": "JSON body needs id and the job's fields"}, 400)
        job_id, owner = body.pop("id"), body.pop("owner", None)
        if owner is not None and not isinstance(owner, str):
            return self._json({"error": "owner must be channel:sender_id"}, 400)
        try:
            job = await self.scheduler.add(job_id, body, owner=owner)
        except JobError as exc:
            return self._json({"error": str(exc)}, 409 if "exists" in str(exc) else 400)
        return self._json({"job": await job_view(self.scheduler, job)}, 201)

    async def one(self, request: web.Request) -> web.StreamResponse:
        """/api/jobs/{id}[/history|/run|/pause|/resume] (GET, DELETE, POST)."""
        parts = request.path.removeprefix("/api/jobs/").split("/")
        job_id, action = parts[0], "/".join(parts[1:])
        sched, method = self.scheduler, request.method
        job = sched.get(job_id)
        if job is None:
            return self._json({"error": f"no job {job_id!r}", "found": False}, 404)
        if method == "GET" and action in ("", "history"):
            try:
                limit = history_limit(request.query.get("limit")) if action else 5
            except BadInput as bad:
                return bad.answer()
            runs = [await run_outcome(sched, r) for r in await sched.store.runs(job_id, limit)]
            return self._json({"job": await job_view(sched, job), "history": runs})
        if method == "DELETE" and action == "":
            try:
                removed = await sched.remove(job_id)
            except JobError as exc:
                return self._json({"error": str(exc)}, 409)
            return self._json({"removed": removed, "id": job_id})
        if method == "POST" and action in ("pause", "resume"):
            await sched.pause(job_id, action == "pause")
            return self._json({"job": await job_view(sched, job)})
        if method == "POST" and action == "run":
            result = await sched.run_now(job_id)
            record = result.get("run")
            if record is not None:
                result["run"] = await run_outcome(sched, RunRecord.from_dict(record))
            return self._json(result)
        return self._json({"error": f"no such action: {method} {request.path}"}, 404)
