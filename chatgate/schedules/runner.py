"""The scheduler: turns due instants into journaled runs, exactly once across replicas.

Each tick, per job: read the shared cursor (the newest instant already decided), plan the runs
due now (`policies.schedules.plan_runs`: grace window, misfire policy), submit one message per
run and target through the pipeline, then move the cursor by compare-and-set. A run's journal
key is `job:<id>:<instant>` on the target's channel: the journal's cluster-wide dedupe lets one
replica record it, and the journal resumes it after a crash (or a dead replica's peer adopts
it). The cursor only says which instants are decided; a replica that loses the compare-and-set
lost nothing (its submissions were duplicates). History lines are written by whoever recorded a
run (or won the cursor, for skipped instants).
"""

from __future__ import annotations

import asyncio
import logging
import re
from datetime import datetime
from typing import Any
from zoneinfo import ZoneInfo

from prometheus_client import Counter
from pydantic import ValidationError

from chatgate.config.schedule_models import JOB_ID_PATTERN, ScheduleConfig
from chatgate.feature.context import FeatureContext
from chatgate.model.errors import StateUnavailable
from chatgate.model.messages import InboundMessage, RouteHint, Target
from chatgate.policies.schedules import (
    SCHEDULE_PLATFORM,
    Misfire,
    ScheduleReason,
    next_after,
    plan_runs,
)
from chatgate.schedules.jobs import JobSource, RunRecord, ScheduledJob
from chatgate.schedules.store import ChatCap, JobStore
from chatgate.state.outage import OutageReporter

log = logging.getLogger("chatgate.schedules")
STOP_WAIT_S = 5.0
POLL_S = 15.0  # at most this long between ticks: picks up jobs other replicas added
ROUTE_PREFIX = "job:"
INSTANT_FIELD = "{scheduled_at}"  # in a prompt: the run's scheduled time (ISO, the job's zone)


class JobError(ValueError):
    """A job the operator asked for cannot be created or changed (the message says why)."""


class Scheduler:
    def __init__(self, context: FeatureContext, store: JobStore) -> None:
        self.context = context
        self.store = store
        self._submit = context.submit
        self._jobs: dict[str, ScheduledJob] = {}
        self._paused: set[str] = set()
        self._next: dict[str, float | None] = {}
        self._wake = asyncio.Event()
        self._task: asyncio.Task[None] | None = None
        self._closing = False
        self.outage = OutageReporter(log, "schedule tick", now=context.clock.monotonic)
        self.runs_total = Counter(
            "chatgate_schedule_runs_total",
            "Scheduled job decisions by reason (due, catch_up, misfire_skipped, ...)",
            ["job", "reason"],
            registry=context.metrics,
        )

    # -- lifecycle -------------------------------------------------------------------------

    async def open(self) -> None:
        """Open the store, load the jobs and start the cursors of jobs first seen now."""
        await self.store.open()
        await self.refresh()
        now = self.context.clock.time()
        for job in self._jobs.values():  # a job first seen now starts now (no backfill)
            await self.store.cursor(job.id, job.created_at or now)

    def start(self) -> None:
        self._task = asyncio.ensure_future(self.run())

    async def stop(self) -> None:
        """Stop ticking (drain: no new runs). The flag ends the loop even if a cancellation is
        absorbed inside a Redis call."""
        self._closing = True
        self._wake.set()
        task, self._task = self._task, None
        if task is not None:
            task.cancel()
            await asyncio.wait([task], timeout=STOP_WAIT_S)

    async def close(self) -> None:
        await self.stop()
        await self.store.close()

    def config_jobs(self) -> dict[str, ScheduledJob]:
        specs: dict[str, ScheduleConfig] = self.context.config.schedules
        return {name: ScheduledJob(name, spec) for name, spec in specs.items()}

    async def refresh(self) -> None:
        """Config jobs (the file wins an id clash) plus the store's runtime jobs."""
        stored = {job.id: job for job in await self.store.jobs()}
        self._jobs = {**stored, **self.config_jobs()}
        self._paused = await self.store.paused()

    def apply_config(self) -> None:
        """Reload: config jobs are reconciled at once; the next tick plans with them."""
        self._jobs = {
            **{k: v for k, v in self._jobs.items() if v.source != "config"},
            **self.config_jobs(),
        }
        self._wake.set()

    async def run(self) -> None:
        """Tick until cancelled; a failing tick (store down) is logged and retried."""
        while not self._closing:
            self._wake.clear()
            try:
                await self.refresh()
                wake_at = None if self._closing else await self.tick()
                self.outage.ok()
            except StateUnavailable as exc:  # the store is away: said once, reminded, retried
                self.outage.failed(exc)
                wake_at = None
            except Exception:
                log.exception("schedule tick failed")
                wake_at = None
            now = self.context.clock.time()
            delay = POLL_S if wake_at is None else min(POLL_S, max(0.0, wake_at - now))
            sleeper = asyncio.ensure_future(self.context.clock.sleep(delay))
            waker = asyncio.ensure_future(self._wake.wait())
            try:
                await asyncio.wait({sleeper, waker}, return_when=asyncio.FIRST_COMPLETED)
            finally:
                sleeper.cancel()
                waker.cancel()

    # -- the decision ----------------------------------------------------------------------

    def hint(self, msg: InboundMessage) -> RouteHint | None:
        """The route hint of a scheduled run: trusted (an operator's or owner's job), the job's
        agent, a one-shot session when the job asks for none. Read from the run itself, so a
        run journaled before its job was removed still finishes as it was scheduled."""
        if msg.platform != SCHEDULE_PLATFORM or not (msg.route or "").startswith(ROUTE_PREFIX):
            return None
        agent = msg.extra.get("agent")
        return RouteHint(
            agent=agent if isinstance(agent, str) and agent in self.context.agents() else None,
            trusted=True,
            ephemeral=msg.extra.get("session") == "none",
        )

    async def tick(self) -> float | None:
        """Decide every job once at the clock's now; the earliest next instant (None: none)."""
        earliest: float | None = None
        for job in list(self._jobs.values()):
            try:
                next_at = await self._decide(job)
            except StateUnavailable:
                log.warning("schedule run not journaled: state unavailable", extra={"job": job.id})
                self._count(job, ScheduleReason.NOT_ADMITTED)
                next_at = None
            self._next[job.id] = next_at
            if next_at is not None and (earliest is None or next_at < earliest):
                earliest = next_at
        return earliest

    async def _decide(self, job: ScheduledJob) -> float | None:
        spec = job.spec
        now = self.context.clock.time()
        cursor = await self.store.cursor(job.id, job.created_at if job.created_at else now)
        if not spec.enabled or job.id in self._paused:
            return next_after(job.timing, max(cursor, now))
        if spec.agent not in self.context.agents():
            return None  # reported by status/doctor; runs would fail every time
        plan = plan_runs(
            job.timing,
            cursor,
            now,
            misfire=Misfire(spec.misfire),
            grace_s=spec.grace_s,
            max_catch_up=spec.max_catch_up,
        )
        if plan.cursor == cursor:
            return plan.next_at
        dead = [i for i, reason in plan.runs if await self._run(job, i, reason, now) is None]
        won = await self.store.advance(job.id, cursor, plan.cursor)
        for instant in dead if won else ():  # the replica that moved the cursor says it once
            await self._record_dead(job, instant, now)
        if won and plan.skipped:
            self._count(job, ScheduleReason.SKIPPED, plan.skipped)
            await self.store.add_run(
                job.id,
                RunRecord(
                    plan.cursor, ScheduleReason.SKIPPED, now, self.context.owner, count=plan.skipped
                ),
            )
            log.warning(
                "missed scheduled runs skipped",
                extra={"job": job.id, "count": plan.skipped, "misfire": spec.misfire},
            )
        return plan.next_at

    async def _run(
        self, job: ScheduledJob, instant: float, reason: ScheduleReason, now: float
    ) -> bool | None:
        """Submit the run of ``instant`` to every target not marked dead; True when this process
        recorded it, None when every target is dead (no model call for a chat nobody reads).

        Replicas racing for one instant may each win the dedupe of a different target; the one
        that recorded the first target's message owns the run (its history line, its count)."""
        keys: list[str] = []
        new: bool | None = None
        tag = f"{int(instant)}" if reason is not ScheduleReason.RUN_NOW else f"now-{now:.3f}"
        dead: list[str] = []
        for index, target in enumerate(job.targets):
            if await self.context.state.dead_targets.kind(target) is not None:
                dead.append(target.address)  # blocked or deleted: no model call for nobody
                continue
            msg = run_message(job, target, index, tag, instant, reason, now)
            submission = await self._submit(msg)
            keys.append(msg.key)
            if new is None:
                new = not submission.duplicate
        if dead:
            self._count(job, ScheduleReason.TARGET_DEAD, len(dead))
        if new is None:  # every target is dead: nothing submitted; the caller records why
            return None
        if not new:
            self._count(job, ScheduleReason.DUPLICATE)
            return False
        self._count(job, reason)
        await self.store.add_run(job.id, RunRecord(instant, reason, now, self.context.owner, keys))
        log.info(
            "scheduled run",
            extra={"job": job.id, "instant": instant, "reason": reason.value, "keys": keys},
        )
        return True

    async def run_now(self, job_id: str) -> dict[str, Any]:
        """An operator's run outside the schedule (paused jobs too); never deduped away."""
        job = self._jobs.get(job_id)
        if job is None:
            return {"found": False, "id": job_id}
        now = self.context.clock.time()
        if await self._run(job, now, ScheduleReason.RUN_NOW, now) is None:
            await self._record_dead(job, now, now)
        runs = await self.store.runs(job_id, 1)
        return {"found": True, "id": job_id, "run": runs[0].to_dict() if runs else None}

    async def _record_dead(self, job: ScheduledJob, instant: float, now: float) -> None:
        await self.store.add_run(
            job.id, RunRecord(instant, ScheduleReason.TARGET_DEAD, now, self.context.owner)
        )
        log.warning(
            "scheduled run not sent: its chats are marked dead",
            extra={"job": job.id, "instant": instant, "targets": [t.address for t in job.targets]},
        )

    def _count(self, job: ScheduledJob, reason: ScheduleReason, n: int = 1) -> None:
        self.runs_total.labels(job=job.id, reason=reason.value).inc(n)

    # -- runtime jobs ----------------------------------------------------------------------

    async def add(
        self,
        job_id: str,
        body: dict[str, Any],
        *,
        source: JobSource = "api",
        owner: str | None = None,
        cap: ChatCap | None = None,
    ) -> ScheduledJob:
        """Validate and store a runtime job; JobError says why not, `CapReached` that ``cap``
        (checked by the store, for every replica at once) is full."""
        if not re.fullmatch(JOB_ID_PATTERN, job_id):
            raise JobError(f"job id {job_id!r}: letters, digits, _ . - (at most 64)")
        try:
            spec = ScheduleConfig.model_validate(body)
        except ValidationError as exc:
            raise JobError(_first_error(exc)) from None
        if spec.agent not in self.context.agents():
            raise JobError(f"agent {spec.agent!r} is not configured")
        if job_id in self.config_jobs():
            raise JobError(f"job {job_id!r} is defined in the config file")
        now = self.context.clock.time()
        job = ScheduledJob(job_id, spec, source, owner, now)
        first = next_after(job.timing, now)
        if first is None:
            raise JobError(f"at: {spec.at} is in the past")
        if not await self.store.save(job, cap):
            raise JobError(f"job {job_id!r} exists")
        self._jobs[job_id] = job
        self._next[job_id] = first
        self._wake.set()
        return job

    async def remove(self, job_id: str) -> bool:
        if job_id in self.config_jobs():
            raise JobError(f"job {job_id!r} is defined in the config file: remove it there")
        removed = await self.store.delete(job_id)
        self._jobs.pop(job_id, None)
        return removed

    async def pause(self, job_id: str, paused: bool) -> bool:
        if job_id not in self._jobs:
            return False
        await self.store.set_paused(job_id, paused)
        (self._paused.add if paused else self._paused.discard)(job_id)
        self._wake.set()
        return True

    def get(self, job_id: str) -> ScheduledJob | None:
        return self._jobs.get(job_id)

    def jobs(self) -> list[ScheduledJob]:
        return sorted(self._jobs.values(), key=lambda j: j.id)

    def is_paused(self, job_id: str) -> bool:
        return job_id in self._paused

    def next_at(self, job_id: str) -> float | None:
        return self._next.get(job_id)


def run_message(
    job: ScheduledJob,
    target: Target,
    index: int,
    tag: str,
    instant: float,
    reason: ScheduleReason,
    now: float,
) -> InboundMessage:
    """The journal entry of one run to one target. It is addressed to the target's channel (the
    replica that can deliver there resumes or adopts it); the session is the job's own (a thread
    of the target chat named after the job), the chat's, or one of the run's own."""
    message_id = f"job:{job.id}:{tag}" + (f":{index}" if index else "")
    session = job.spec.session
    thread = target.thread_id if session == "chat" else f"job:{job.id}"
    if session == "none":
        thread = message_id  # a session of its own: runs of one job never wait for each other
    return InboundMessage(
        channel=target.channel,
        platform=SCHEDULE_PLATFORM,
        chat_id=target.chat_id,
        chat_kind="direct",
        sender_id=f"job:{job.id}",
        message_id=message_id,
        text=job.spec.prompt.replace(INSTANT_FIELD, scheduled_at(job, instant)),
        thread_id=thread,
        sender_name=job.id,
        received_at=now,
        reply_target=target,
        route=ROUTE_PREFIX + job.id,
        extra={
            "job": job.id,
            "instant": instant,
            "reason": reason.value,
            "agent": job.spec.agent,
            "session": job.spec.session,
            "owner": job.owner,  # whose budget a run spends (None: the target chat's)
        },
    )


def scheduled_at(job: ScheduledJob, instant: float) -> str:
    """The run's instant as ISO time in the job's zone (what ``{scheduled_at}`` becomes)."""
    return datetime.fromtimestamp(instant, ZoneInfo(job.spec.tz)).isoformat(timespec="seconds")


def _first_error(exc: Any) -> str:
    error = exc.errors()[0]
    where = ".".join(str(p) for p in error.get("loc", ())) or "job"
    text = str(error.get("msg", "invalid")).removeprefix("Value error, ")
    return f"{where}: {text}"
