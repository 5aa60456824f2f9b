"""Runs one batch from a session queue: an agent turn through its steps, or one of the jobs
that need no agent (an observed message, /new, re-delivery of a stored answer)."""

from __future__ import annotations

import contextlib
import logging
from collections.abc import Callable

from chatgate import tracing
from chatgate.feature.turns import TurnControl
from chatgate.gateway.runtime import Runtime
from chatgate.gateway.turn.answering import Answering
from chatgate.gateway.turn.job import Job, JobKind
from chatgate.gateway.turn.lines import user_message
from chatgate.gateway.turn.persist import TurnPersistence
from chatgate.gateway.turn.record import TurnRecord
from chatgate.gateway.turn.resume import turn_crashed
from chatgate.gateway.turn.steps import Step, TurnSteps
from chatgate.model.chat import ChatMessage
from chatgate.model.errors import StateUnavailable
from chatgate.model.outbound import OutboundMessage, message_from_dict
from chatgate.model.reasons import DeliveryStatus
from chatgate.model.results import DeliveryReport, Stage
from chatgate.model.text_ids import TextId
from chatgate.state.records import JournalMark, JournalState, LeaseToken

log = logging.getLogger("chatgate.turn")


class TurnRunner:
    def __init__(self, runtime: Runtime) -> None:
        self.rt = runtime
        self.answering = Answering(runtime)
        self.persistence = TurnPersistence(runtime)
        self.steps = TurnSteps(runtime, self.answering, self.persistence, self._redeliver)
        self._held, self._after = _Named(), _Named()

    async def execute(self, batch: list[Job], control: TurnControl) -> bool:
        """Run ``batch``; False when it was interrupted and must run again."""
        if not tracing.on():
            return await self._execute(batch, control)
        job = batch[-1]
        with (
            tracing.within(tracing.keyed(self.rt.owner, job.msg.key)),
            tracing.span(
                f"chatgate.{job.kind.value}",
                gen_ai__agent__name=job.agent,
                chatgate__messages=len(batch),
                chatgate__queue_wait_s=round(self.rt.clock.monotonic() - job.accepted_at, 6),
            ),
        ):
            return await self._execute(batch, control)

    async def _execute(self, batch: list[Job], control: TurnControl) -> bool:
        kind = batch[0].kind
        if kind is JobKind.TURN:
            return await self.turn(batch, control)
        if kind is JobKind.OBSERVE and batch[0].unjoined is not None:
            await batch[0].unjoined()  # an album part no part of which addressed the bot
        elif kind is JobKind.OBSERVE:
            await self._observe(batch[0])
        elif kind is JobKind.NEW_SESSION:
            await self._new_session(batch[0])
        elif kind is JobKind.REDELIVER:
            await self._redeliver(batch[0])
        return True

    async def turn(self, batch: list[Job], control: TurnControl) -> bool:
        """Run the turn's steps; a step that raises unexpectedly fails the turn visibly."""
        try:
            return await self._steps(batch, control)
        except StateUnavailable:
            raise  # callers answer "retry later"; the journal keeps the messages
        except Exception as exc:
            voice = self.steps.voices.for_message(batch[-1].msg, batch[-1].agent)
            await turn_crashed(self.rt, self.answering, batch, exc, voice)
            return True

    async def _steps(self, batch: list[Job], control: TurnControl) -> bool:
        """The held steps under the turn lock and session (released once the answer is sent or
        handed off), then the steps after; a step's `TurnExit` ends the turn there."""
        rec = TurnRecord(batch, control, contextlib.AsyncExitStack())
        steps = self.steps
        media = any(job.msg.attachments for job in batch)
        held = self._held.of(steps.held, steps.meters is not None, media, steps.applies)
        span = tracing.current()  # while tracing is off, no timeline is marked step by step
        timeline = None if span is tracing.OFF else tracing.Timeline(span, self.rt.clock.monotonic)
        try:
            async with rec.held:
                try:
                    for name, step in held:
                        if timeline is not None:
                            timeline.mark(name)
                        ended = await step(rec)
                        if ended is not None:
                            return ended.ran
                except StateUnavailable:  # the lock waits for this batch's resumed turn
                    ttl = self.rt.config.gateway.turn_lock.ttl_s
                    self.rt.turn_lock.strand(rec.last.session, batch[0].msg.key, rec.lease, ttl)
                    raise
            for name, after in self._after.of(steps.after):
                if timeline is not None:
                    timeline.mark(name)
                await after(rec)
            return True
        finally:
            if timeline is not None:
                timeline.close()

    async def _observe(self, job: Job) -> None:
        runtime = self.rt
        if job.kept:
            session = await runtime.cache.acquire(job.session, runtime.clock.time())
            try:
                await self.persistence.append(session, [user_message(job, observed=True)])
            finally:
                runtime.cache.release(session)
        report = DeliveryReport(DeliveryStatus.SUPPRESSED)
        # An observed message with a reason of its own (paused: a human took the chat over)
        # keeps its session on the trail, so `why` finds what the human answered after it.
        noted = job.observed != Stage.OBSERVE.value
        if noted:
            mark = JournalMark(
                JournalState.DONE,
                runtime.clock.time(),
                stage=Stage.OBSERVE.value,
                reason=job.observed,
                session=job.session,
                delivery=report.status.value,
                delivery_ids=[],
            )
            await runtime.journal.settle(job.msg.key, mark)
        await self.answering.finish(
            [job], Stage.OBSERVE, job.observed, None, report, journaled=noted
        )

    async def _new_session(self, job: Job) -> None:
        runtime = self.rt
        session = await runtime.cache.acquire(job.session, runtime.clock.time())
        try:
            epoch = await runtime.cache.store.reset(job.session, runtime.clock.time())
            runtime.cache.reset(session, epoch)
        finally:
            runtime.cache.release(session)
        voice = self.steps.voices.for_message(job.msg, job.agent)
        message = OutboundMessage.from_text(voice.text(TextId.NEW_SESSION))
        report = await self.answering.deliver(job, message, 0.0)
        self.answering.handed_off(job.msg.key)  # no turn lock to pass on with it
        await self.answering.finish([job], Stage.COMMAND, "new_session", message, report)

    async def send_answered(self, job: Job, handed_at: float | None = None) -> None:
        """Send an answer another replica (or this one's previous process) journaled but did not
        send, under the session's turn lock taken over from its hand-off or its dead holder:
        it goes out before any later turn of the session (not behind its queue). One handed
        off at ``handed_at`` (the store's clock) is timed from then."""
        with (
            tracing.within(tracing.keyed(self.rt.owner, job.msg.key)),
            tracing.span(f"chatgate.{job.kind.value}", gen_ai__agent__name=job.agent),
        ):
            await self._send_answered(job)
        if handed_at is not None:
            took = max(0.0, self.rt.clock.time() - handed_at)
            self.rt.metrics.handoff_seconds.observe(took)
            log.info(
                "sent an answer another replica handed off",
                extra={"key": job.msg.key, "session": job.session, "handoff_ms": round(took * 1e3)},
            )

    async def _send_answered(self, job: Job) -> None:
        """Send the stored answer under the session's lock; one the state cuts short leaves the
        lock waiting for its resumed send."""
        lock, ttl = self.rt.turn_lock, self.rt.config.gateway.turn_lock.ttl_s
        lease: LeaseToken | None = None
        try:
            async with lock.hold(
                job.session, owner=self.rt.owner, ttl=ttl, after=job.msg.key, from_dead=True
            ) as lease:
                try:
                    await self._redeliver(job)
                except StateUnavailable:
                    lock.strand(job.session, job.msg.key, lease, ttl)
                    raise
                handed = self.answering.handed_off(job.msg.key)
                if handed or self.answering.adopted_elsewhere(job.msg.key):  # its sender is next
                    lock.pass_on(lease, job.msg.key)
        except Exception as exc:
            if lease is None and isinstance(exc, StateUnavailable):  # the lock was not taken
                lock.strand(job.session, job.msg.key, None, ttl)
            if not job.future.done():
                job.future.set_exception(exc)
                job.future.exception()  # read: nobody need wait for an adopted answer
            raise

    async def _redeliver(self, job: Job) -> DeliveryStatus:
        """Finish a turn a previous process answered but did not deliver (no second agent call)."""
        runtime = self.rt
        stored = job.stored_reply or {}
        persist = [ChatMessage.from_dict(m) for m in stored.get("persist", [])]
        if persist:
            session = await runtime.cache.acquire(job.session, runtime.clock.time())
            try:
                session.transcript = [m for m in session.transcript if m.source != job.msg.key]
                await self.persistence.append(session, persist)
            finally:
                runtime.cache.release(session)
        data = stored.get("message")
        message = message_from_dict(data) if data and not stored.get("stopped") else None
        if await self.answering.hand_off(job):
            report = DeliveryReport(DeliveryStatus.HANDED_OFF)
        else:
            report = await self.answering.deliver(job, message, 0.0)
        await self.answering.finish(
            [job], Stage.TURN, str(stored.get("reason", "text")), message, report
        )
        return report.status


def _step_name(step: object) -> str:
    return "chatgate." + getattr(step, "__name__", "step").lstrip("_")


class _Named:
    """The steps a turn enters, paired with their span names: decided once per tuple of steps
    and kind of turn (budget rules or not, attachments or not), not on every turn; a step that
    is a no-op for that kind (``applies`` says) is left out."""

    __slots__ = ("_named", "_steps")

    def __init__(self) -> None:
        self._steps: tuple[Step, ...] | None = None
        self._named: dict[tuple[bool, bool], tuple[tuple[str, Step], ...]] = {}

    def of(
        self,
        steps: tuple[Step, ...],
        metered: bool = True,
        media: bool = True,
        applies: Callable[[Step, bool, bool], bool] | None = None,
    ) -> tuple[tuple[str, Step], ...]:
        if steps is not self._steps:
            self._named = {}
            self._steps = steps
        named = self._named.get((metered, media))
        if named is None:
            kept = [s for s in steps if applies is None or applies(s, metered, media)]
            named = self._named[metered, media] = tuple((_step_name(s), s) for s in kept)
        return named
