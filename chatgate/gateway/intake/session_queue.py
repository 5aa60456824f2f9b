"""Per-session FIFO: one turn at a time per session, concurrent across sessions.

Messages arriving while a turn runs wait according to the mid-turn policy: `queue` (each its own
turn, in order), `collect` (everything waiting becomes the next turn) or `interrupt` (the running
agent call is cancelled and its messages join the waiting ones in the next turn). Only the agent
call is ever cancelled, never persistence or delivery.
"""

from __future__ import annotations

import asyncio
import functools
import logging
from collections import deque
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field, replace
from typing import Literal

from chatgate.clock import Clock, SystemClock
from chatgate.feature.ports import HeldAs
from chatgate.feature.turns import CancelReason, TurnControl
from chatgate.gateway.turn.job import Job, JobKind
from chatgate.model.errors import StateUnavailable
from chatgate.model.messages import InboundMessage
from chatgate.model.reasons import RefusalReason
from chatgate.policies.bursts import album_run, album_turn, burst_size, burst_wait

log = logging.getLogger("chatgate.sessions")
MidTurnPolicy = Literal["queue", "collect", "interrupt"]


@dataclass(eq=False)
class SessionQueue:
    key: str
    jobs: deque[Job] = field(default_factory=deque)
    running: list[Job] | None = None
    control: TurnControl | None = None
    worker: asyncio.Task[None] | None = None
    held: Callable[[Job], Job] | None = None  # a paused chat's jobs: what each turns into


def _matches(job: Job, chat: Callable[[InboundMessage], bool]) -> bool:
    return job.kind in (JobKind.TURN, JobKind.NEW_SESSION) and chat(job.msg)


Executor = Callable[[list[Job], TurnControl], Awaitable[bool]]
"""Runs a batch; returns False when it was interrupted and the batch must be retried."""


class SessionScheduler:
    def __init__(
        self,
        execute: Executor,
        *,
        policy: MidTurnPolicy,
        max_queued: int,
        clock: Clock | None = None,
    ) -> None:
        self._execute = execute
        self._clock: Clock = clock or SystemClock()
        self.policy: MidTurnPolicy = policy
        self.max_queued = max_queued
        self._queues: dict[str, SessionQueue] = {}

    @property
    def active(self) -> int:
        return sum(1 for q in self._queues.values() if q.running)

    @property
    def queued(self) -> int:
        return sum(len(q.jobs) for q in self._queues.values())

    def depth(self, key: str) -> int:
        q = self._queues.get(key)
        return 0 if q is None else len(q.jobs) + (1 if q.running else 0)

    def enqueue(self, job: Job, *, front: bool = False, capped: bool = True) -> bool:
        """Queue ``job``; False when the session already has ``max_queued`` waiting.

        ``capped=False`` is for messages resumed from the journal: the platform was already told
        they were accepted, and the backlog is bounded by what was journaled, not by a live flood.
        """
        q = self._queues.get(job.session)
        if q is None:
            q = self._queues[job.session] = SessionQueue(job.session)
        if capped and not front and len(q.jobs) >= self.max_queued:
            return False
        _place(q, job, front)
        if self.policy == "interrupt" and job.kind is JobKind.TURN:
            _interrupt_running_turn(q)
        if q.worker is None:
            q.worker = asyncio.create_task(self._work(q), name=f"session:{job.session}")
        return True

    def held(self) -> list[Job]:
        """Every job this process holds: each session's running batch, then its queue, in order."""
        return [job for q in self._queues.values() for job in (*(q.running or ()), *q.jobs)]

    def take_waiting(self, key: str) -> list[Job]:
        """Take every job waiting in session ``key`` (not the running batch) out of its queue."""
        q = self._queues.get(key)
        if q is None:
            return []
        jobs = list(q.jobs)
        q.jobs.clear()
        return jobs

    def put_back(self, jobs: list[Job]) -> None:
        """Return jobs `take_waiting` took, ahead of what came meanwhile."""
        for job in reversed(jobs):
            self.enqueue(job, front=True)

    def waiting(self, key: str, message_key: str) -> bool:
        """Whether the message ``message_key`` waits in session ``key`` (its turn not started)."""
        q = self._queues.get(key)
        return q is not None and any(j.msg.key == message_key for j in q.jobs)

    def replace(self, job: Job, message_key: str) -> Job | None:
        """Put ``job`` in the place of the waiting job for ``message_key`` (an edit of it) and
        return that job; None when it is not waiting any more (its turn started or ended)."""
        q = self._queues.get(job.session)
        if q is None:
            return None
        for index, old in enumerate(q.jobs):
            if old.msg.key == message_key and old.kind is JobKind.TURN:
                q.jobs[index] = job
                return old
        return None

    def withdraw(self, message_key: str) -> Job | None:
        """Take the waiting turn of ``message_key`` out of whichever session queues it (its
        sender deleted it); None when it is not waiting (its turn started or ended)."""
        for q in self._queues.values():
            for job in q.jobs:
                if job.msg.key == message_key and job.kind is JobKind.TURN:
                    q.jobs.remove(job)
                    return job
        return None

    def stop(self, key: str) -> tuple[bool, list[Job]]:
        """Cancel the running agent call and drop everything waiting (the /stop command)."""
        q = self._queues.get(key)
        if q is None:
            return False, []
        dropped = list(q.jobs)
        q.jobs.clear()
        cancelled = q.control.cancel(CancelReason.STOP) if q.control is not None else False
        return cancelled, dropped

    def hold(
        self,
        chat: Callable[[InboundMessage], bool],
        held_as: HeldAs,
        *,
        interrupt: bool,
    ) -> tuple[int, int]:
        """A chat was paused: every waiting turn (and /new) of a message ``chat`` matches is
        replaced in place by an observed job as ``held_as`` says; with ``interrupt`` the running
        agent call of such a turn is cancelled too (or, not begun yet, is cancelled as it
        begins) and its batch is replaced the same way. Returns (waiting replaced, running interrupted)."""
        held = functools.partial(_held, held_as)
        replaced = interrupted = 0
        for q in self._queues.values():
            for index, job in enumerate(q.jobs):
                if _matches(job, chat):
                    q.jobs[index] = held(job)
                    replaced += 1
            running = q.running or []
            if (
                interrupt
                and q.control is not None
                and any(_matches(job, chat) for job in running)
                and q.control.cancel(CancelReason.HOLD, pending=True)
            ):
                q.held = held
                interrupted += 1
        return replaced, interrupted

    def cancel_all(self) -> int:
        """Cancel every running agent call (shutdown past the drain timeout)."""
        return sum(
            1
            for q in self._queues.values()
            if q.control is not None and q.control.cancel(CancelReason.SHUTDOWN)
        )

    async def wait_idle(self, within_s: float | None = None) -> bool:
        """Wait for every session worker to finish; False on timeout. Never cancels a worker."""
        loop = asyncio.get_running_loop()
        deadline = None if within_s is None else loop.time() + within_s
        while True:
            workers = [q.worker for q in self._queues.values() if q.worker is not None]
            if not workers:
                return True
            remaining = None if deadline is None else deadline - loop.time()
            if remaining is not None and remaining <= 0:
                return False
            await asyncio.wait(workers, timeout=remaining)

    def _burst(self, q: SessionQueue) -> int:
        """How many leading jobs are one sender's burst of turn messages, or the parts of the
        album of a first part kept as context (0: no debounce)."""
        first = q.jobs[0]
        if first.debounce_s <= 0:
            return 0
        if first.kind is JobKind.OBSERVE:
            return album_run([j.album for j in q.jobs])
        return burst_size([j.msg.sender_id if j.kind is JobKind.TURN else None for j in q.jobs])

    async def _await_burst(self, q: SessionQueue) -> None:
        """Hold the first turn until its sender has been quiet for the debounce window."""
        while q.jobs and (size := self._burst(q)):
            newest = q.jobs[size - 1]
            wait = burst_wait(newest.accepted_at, self._clock.monotonic(), newest.debounce_s)
            if wait <= 0:
                return
            await self._clock.sleep(wait)

    def _take(self, q: SessionQueue) -> list[Job]:
        if q.jobs[0].kind is JobKind.OBSERVE:
            return self._take_observed(q)
        size = self._burst(q)
        if size > 1:  # a burst is one turn whatever the mid-turn policy
            return [q.jobs.popleft() for _ in range(size)]
        first = q.jobs.popleft()
        batch = [first]
        if first.kind is JobKind.TURN and self.policy in ("collect", "interrupt"):
            while q.jobs and q.jobs[0].kind is JobKind.TURN:
                batch.append(q.jobs.popleft())
        return batch

    def _take_observed(self, q: SessionQueue) -> list[Job]:
        """A message kept as context; when it is an album part and a later part of its album
        addresses the bot, the whole album is that part's turn."""
        albums = [j.album for j in q.jobs]
        size = album_turn(albums, [j.kind is JobKind.TURN for j in q.jobs])
        if not size:
            return [q.jobs.popleft()]
        parts = [q.jobs.popleft() for _ in range(size)]
        return [
            j
            if j.kind is JobKind.TURN
            else replace(j, kind=JobKind.TURN, target=j.msg.reply_target)
            for j in parts
        ]

    async def _work(self, q: SessionQueue) -> None:
        try:
            while q.jobs:
                await self._await_burst(q)
                if not q.jobs:  # /stop dropped the burst meanwhile
                    break
                batch = self._take(q)
                q.running = batch
                q.control = TurnControl()
                try:
                    completed = await self._execute(batch, q.control)
                except Exception as exc:
                    completed = True
                    _failed(q.key, batch, exc)
                finally:
                    q.running = None
                if not completed:
                    if q.held is not None and q.control and q.control.reason is CancelReason.HOLD:
                        batch = [q.held(job) for job in batch]
                    _return(q.jobs, batch)
                q.held = None
        finally:
            q.worker = None
            q.control = None
            if not q.jobs and self._queues.get(q.key) is q:
                del self._queues[q.key]


def _before(job: Job, other: Job) -> bool:
    """Whether ``job``'s message came in before ``other``'s; where either time is unknown, one
    taken up from the journal counts as older than one that came in live."""
    came_in, then = job.msg.received_at, other.msg.received_at
    if came_in > 0 and then > 0:
        return came_in < then
    return job.resumed and not other.resumed


def _insert(jobs: deque[Job], job: Job) -> None:
    """Put ``job`` in line behind every message that did not come in after it (ties keep the
    order of placing): one session's messages are answered, and waited for across replicas,
    in that order, so a replica whose line disagreed would wait on itself."""
    at = len(jobs)
    while at and _before(job, jobs[at - 1]):
        at -= 1
    jobs.insert(at, job)


def _return(jobs: deque[Job], batch: list[Job]) -> None:
    """Put a batch that did not complete back in line, ahead of what came in after it."""
    at = 0
    while at < len(jobs) and _before(jobs[at], batch[0]):
        at += 1
    for index, job in enumerate(batch):
        jobs.insert(at + index, job)


def _failed(session: str, batch: list[Job], exc: Exception) -> None:
    """A batch's turn raised: a state outage is expected (one coded line; the journal keeps the
    messages for the guard's resume), anything else is a bug (its traceback). State loss stays
    what it is, so callers answer "retry later" (503); nobody need read a future's error."""
    if isinstance(exc, StateUnavailable):
        log.warning(
            "turn left to the journal: state unavailable",
            extra={
                "session": session,
                "reason": RefusalReason.STATE_UNAVAILABLE.value,
                "messages": len(batch),
                "error": str(exc)[:200],
            },
        )
        error: Exception = exc
    else:
        log.error("session worker failed", exc_info=exc, extra={"session": session})
        error = RuntimeError("turn failed unexpectedly")
    for job in batch:
        if not job.future.done():
            job.future.set_exception(error)
            job.future.exception()  # retrieved: a caller that did not wait is no leak


def _held(held_as: HeldAs, job: Job) -> Job:
    """What a queued turn of a held chat becomes: an observed message, kept as context or not."""
    held_as.on_held(job.msg)
    return replace(
        job,
        kind=JobKind.OBSERVE,
        target=None,
        debounce_s=0.0,
        observed=held_as.observed,
        kept=held_as.kept(job.msg),
    )


def _place(q: SessionQueue, job: Job, front: bool) -> None:
    """Put ``job`` in line: at the front, else in the order messages came in. A running turn
    still waiting for the session's lock gives way to a message that came in before all of its
    own (taken up from the journal, or taken in live behind a later one's journal write): the
    session's earlier open messages would otherwise wait behind it while it waits for them."""
    if front:
        q.jobs.appendleft(job)
        return
    _insert(q.jobs, job)
    running = q.running or ()
    if q.control is not None and running and all(_before(job, j) for j in running):
        q.control.give_way()


def _interrupt_running_turn(q: SessionQueue) -> None:
    """Under the ``interrupt`` policy a new turn cancels the session's running one."""
    if q.running and q.control is not None and any(j.kind is JobKind.TURN for j in q.running):
        q.control.cancel(CancelReason.INTERRUPT)
