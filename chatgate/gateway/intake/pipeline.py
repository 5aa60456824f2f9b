"""The inbound message path up to the session queue: dedupe + journal, then the stages.

`submit` returns once the message is durably journaled and its fate decided (dropped, answered
with a notice, or queued for a turn), so an adapter that awaits it may ack the platform. Every
message that ends before a turn ends in `settle`: one place for journal, metrics, log and result.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Coroutine, Sequence
from typing import Any

from chatgate import tracing
from chatgate.feature.base import Feature
from chatgate.feature.intake import (
    ChannelPolicy,
    CommandHandler,
    GateSlot,
    HintSource,
    Inbound,
    StageFn,
    Verdict,
)
from chatgate.feature.turns import ToolApprover, TurnControl
from chatgate.gateway.events import EventName
from chatgate.gateway.intake.commands import parse_command
from chatgate.gateway.intake.inflight import InFlight
from chatgate.gateway.intake.restore import HeldWork
from chatgate.gateway.intake.resuming import redelivery, trace_resumed
from chatgate.gateway.intake.session_queue import SessionScheduler
from chatgate.gateway.intake.stages import Stages
from chatgate.gateway.intake.state_guard import StateGuard
from chatgate.gateway.runtime import Runtime
from chatgate.gateway.turn.job import Job
from chatgate.gateway.turn.runner import TurnRunner
from chatgate.model.messages import InboundMessage, RouteHint, Target
from chatgate.model.outbound import OutboundMessage
from chatgate.model.reasons import DropReason, RefusalReason
from chatgate.model.results import Stage, Submission, TurnResult
from chatgate.policies.admission import AdmissionPolicy
from chatgate.policies.routing import Binding, route
from chatgate.policies.staleness import StaleAction, StalePolicy
from chatgate.state.records import TERMINAL, JournalEntry, JournalMark

log = logging.getLogger("chatgate.pipeline")
NO_HINT = RouteHint()
DEFAULT_POLICY = ChannelPolicy(AdmissionPolicy(), "default")


class Pipeline:
    def __init__(self, runtime: Runtime) -> None:
        self.rt = runtime
        self.runner = TurnRunner(runtime)
        self.approver: ToolApprover | None = None  # asks a person before a tool call runs
        sessions = runtime.config.gateway.sessions
        self.scheduler = SessionScheduler(
            self._execute,
            policy=sessions.mid_turn,
            max_queued=sessions.max_queued,
            clock=runtime.clock,
        )
        self.stages = Stages(runtime, self.scheduler, self.settle)
        self.inflight = InFlight(runtime)
        self._policies: dict[str, ChannelPolicy] = {}
        self._hints: dict[tuple[str, str], RouteHint] = {}
        # Hints of work features submit themselves (scheduled runs), looked up by message.
        self.hint_sources: tuple[HintSource, ...] = ()
        self._tasks: set[asyncio.Task[None]] = set()
        self.guard = StateGuard(runtime, self.resume_stranded)
        self.held = HeldWork(runtime, self.scheduler)
        self.runner.answering.restore = self.held.check  # asked by a turn whose entry is gone
        self.runner.answering.hand_off_waiting = self.held.hand_off_waiting
        self.apply_config()

    def apply_config(self) -> None:
        """Re-derive channel policies, route hints, bindings and identities from the config."""
        runtime = self.rt
        self._policies = {}
        self._hints = {}
        for name, section in runtime.loaded.channels.items():
            chat = section.chat
            if chat is not None:
                self._policies[name] = ChannelPolicy(
                    AdmissionPolicy(
                        dm_policy=chat.dm_policy,
                        group_policy=chat.group_policy,
                        allowed_users=frozenset(chat.allowed_users),
                        blocked_users=frozenset(chat.blocked_users),
                        allowed_chats=frozenset(chat.allowed_chats),
                    ),
                    chat.agent,
                    StalePolicy(chat.stale.after_s, StaleAction(chat.stale.action)),
                    chat.debounce_ms / 1000,
                )
            descriptor = runtime.channels.registry.descriptor(section.platform)
            for route_name, hint in descriptor.route_hints(section.config).items():
                self._hints[(name, route_name)] = hint
        self.stages.bindings = tuple(
            Binding(agent=b.agent, **b.match.model_dump()) for b in runtime.config.routes
        )
        self.stages.principals = {
            address: principal
            for principal, addresses in runtime.config.identities.items()
            for address in addresses
        }
        sessions = runtime.config.gateway.sessions
        self.scheduler.policy = sessions.mid_turn
        self.scheduler.max_queued = sessions.max_queued

    async def _execute(self, batch: list[Job], control: TurnControl) -> bool:
        """A turn whose state write failed leaves its messages journaled but unfinished: refuse
        new work like a failed intake write, and let the guard's probe resume them."""
        try:
            return await self.runner.execute(batch, control)
        except Exception as exc:
            refusal = self.guard.failed(exc)
            if refusal is None:
                raise
            self.held.stranded(batch)
            raise refusal from exc

    def plug(self, features: Sequence[Feature]) -> None:
        """Take what the features contribute to the message path (the builder's seam)."""
        gates: dict[GateSlot, tuple[StageFn, ...]] = {}
        commands: dict[str, CommandHandler] = {}
        for feature in features:
            for slot, fns in feature.gates().items():
                gates[slot] = (*gates.get(slot, ()), *fns)
            commands.update(feature.commands())
            self.hint_sources += tuple(feature.hint_sources())
            approver = feature.tool_approver()
            if approver is not None:
                self.approver = self.runner.steps.approvals = approver
            meters = feature.turn_meters()
            if meters is not None:
                self.runner.steps.meters = meters
        self.stages.plug(gates, commands)

    def policy(self, channel: str) -> ChannelPolicy:
        return self._policies.get(channel, DEFAULT_POLICY)

    def hint(self, msg: InboundMessage) -> RouteHint:
        """What the operator configured for the route ``msg`` came in on (nothing, by default)."""
        if msg.route is None:
            return NO_HINT
        hint = self._hints.get((msg.channel, msg.route))
        for source in self.hint_sources if hint is None else ():
            hint = source(msg)
            if hint is not None:
                break
        return hint or NO_HINT

    def route_of(self, msg: InboundMessage) -> tuple[str, str]:
        """(agent, session key) of ``msg`` under the current config (as the route stage)."""
        return route(
            msg,
            self.stages.bindings,
            self.policy(msg.channel).agent,
            self.hint(msg).agent,
            per_user_in_groups=self.rt.config.gateway.sessions.per_user_in_groups,
        )

    # -- entry points (the InboundSink) ------------------------------------------------------

    async def submit(self, msg: InboundMessage) -> Submission:
        """`_submit` under the message's root span (ended when its result is known)."""
        if not tracing.on():  # nothing to open or keep: no span arguments built per message
            return await self._submit(msg)
        root = tracing.keyed(self.rt.owner, msg.key)
        if not tracing.start_message(
            root,
            f"{msg.platform} message",
            traceparent=msg.extra.get("traceparent"),
            chatgate__channel=msg.channel,
            messaging__system=msg.platform,
            messaging__message__id=msg.message_id,
        ):
            return await self._submit(msg)  # off, or a duplicate of a message in flight
        trace = tracing.journaled(root)
        if trace:  # journaled with the message: `chatgate why` prints it, an adopter links it
            msg = msg.with_extra(trace)
        try:
            with tracing.within(root):
                submission = await self._submit(msg)
        except Exception as exc:
            if msg.key not in self.inflight:
                tracing.message(root).fail(exc)
                tracing.finish_message(root)
            raise
        if submission.duplicate:
            tracing.finish_message(
                root, chatgate__stage=Stage.DEDUPE.value, chatgate__reason=DropReason.DUPLICATE
            )
        return submission

    async def _submit(self, msg: InboundMessage) -> Submission:
        runtime = self.rt
        existing_future = self.inflight.get(msg.key)
        if existing_future is not None:
            self._count_duplicate(msg)
            return Submission(msg.key, True, existing_future)
        accepted = runtime.clock.monotonic()
        self.guard.check()  # raises StateUnavailable while the journal cannot write
        now = runtime.clock.time()
        msg = msg.stamped(now)
        session = self.route_of(msg)[1] if runtime.journal.indexes_sessions else ""
        try:
            with tracing.span("chatgate.journal", leaf=True):
                new, existing = await runtime.journal.record(
                    msg, now, runtime.config.gateway.dedupe_window_s, session
                )
        except asyncio.CancelledError:  # the adapter stopped: the write may have landed
            self._background(self._take_up(msg.key))
            raise
        except Exception as exc:
            refusal = self.guard.failed(exc)
            if refusal is None:
                raise
            raise refusal from exc
        if not new:
            self._count_duplicate(msg)
            return Submission(msg.key, True, self.inflight.duplicate(msg.key, existing))
        future = self.inflight.track(msg.key)
        runtime.events.emit(
            EventName.MESSAGE_RECEIVED,
            runtime.clock.time(),
            key=msg.key,
            channel=msg.channel,
            chat_id=msg.chat_id,
            sender_id=msg.sender_id,
            chat_kind=msg.chat_kind,
        )
        inbound = self._inbound(msg, future, accepted)
        try:
            await self._walk(inbound)
        except asyncio.CancelledError:  # journaled: its walk goes on without the adapter
            self._background(self._walk_on(inbound))
            raise
        except Exception as exc:
            self.inflight.release(msg.key, future)
            refusal = self.guard.failed(exc)
            if refusal is None:
                raise
            raise refusal from exc
        return Submission(msg.key, False, future)

    async def in_conversation(self, msg: InboundMessage) -> bool:
        """Whether ``msg``'s conversation already has history (its session has a transcript),
        read from the shared session store so it holds across restarts and replicas."""
        stored = await self.rt.state.sessions.load(self.route_of(msg)[1], 1)
        return bool(stored.messages)

    def ignored(self, channel: str, reason: DropReason, *, chat_id: str = "") -> None:
        """An adapter heard a platform event that is not a message for us (edit, join, ...)."""
        self.rt.metrics.ignored.labels(channel=channel, reason=reason.value).inc()
        # Slack and Discord echo every reply back as an event: counted, logged only at debug.
        level = logging.DEBUG if reason is DropReason.SELF_MESSAGE else logging.INFO
        log.log(
            level, "ignored", extra={"channel": channel, "chat": chat_id, "reason": reason.value}
        )

    async def recover(self) -> int:
        """Resume what a previous process journaled but did not finish; returns the count."""
        await self.held.check()  # learns the store's generation
        entries = await self.rt.journal.unfinished()
        await self._resume(entries)
        if entries:
            log.info("resumed unfinished messages from the journal", extra={"count": len(entries)})
        return len(entries)

    async def resume_stranded(self) -> int:
        """After the state became writable again: resume journaled messages no turn of this
        process holds (their later writes failed); those still in flight are left alone."""
        await self.held.check()  # a store that came back empty gets what this one holds
        entries = [e for e in await self.rt.journal.unfinished() if e.key not in self.inflight]
        left = await self._resume(entries)
        await self.held.resumed({e.key for e in entries} - left, left)
        if entries:
            log.info("resumed messages stranded by a state failure", extra={"count": len(entries)})
        return len(entries)

    async def adopt(self) -> int:
        """Resume what another replica journaled and left behind when it died."""
        if await self.held.check():  # the store lost its data: run what was stranded
            await self.resume_stranded()
        entries = await self.rt.journal.orphaned(self.rt.channels.serving())
        await self._resume(entries)
        await self.held.forget_claimed()
        dead = sum(1 for e in entries if not e.handed_off)
        if dead:
            log.warning("adopted a dead replica's unfinished messages", extra={"count": dead})
        if len(entries) > dead:  # routine: a live replica lost the channel mid-turn
            log.info(
                "sent answers another replica handed off", extra={"count": len(entries) - dead}
            )
        return len(entries)

    async def _resume(self, entries: list[JournalEntry]) -> set[str]:
        """Take ``entries`` up; the keys whose intake failed on the state (held here until the
        next probe resumes them: a store that loses its data first gets them again)."""
        left: set[str] = set()
        for entry in entries:
            try:
                await self._resume_one(entry)
            except Exception as exc:
                if self.guard.failed(exc) is None:
                    raise
                self.held.left(entry)
                left.add(entry.key)
                log.warning(
                    "state failed while resuming; left for the next probe",
                    extra={"key": entry.key, "error": type(exc).__name__},
                )
        return left

    async def _resume_one(self, entry: JournalEntry) -> None:
        future = self.inflight.get(entry.key) or self.inflight.track(entry.key)
        msg = entry.message
        trace_resumed(self.rt.owner, msg)
        now = self.rt.clock.monotonic()
        job = redelivery(entry, future, self.route_of(msg)[0], self.hint(msg).ephemeral, now)
        if job is not None:
            self._background(
                self.held.sending(job, self.runner.send_answered(job, entry.handed_at))
            )
            return
        try:
            await self._walk(self._inbound(msg, future, now, resumed=True))
        except Exception:
            self.inflight.release(entry.key, future)
            raise

    async def drain(self, within_s: float | None = None) -> bool:
        """Let queued and running turns finish; False when ``within_s`` passed first."""
        self.inflight.stop_watching()  # their callers retry against another replica
        approver = self.approver
        if approver is not None:  # a turn waiting for a person stays journaled for the next start
            approver.release()
        finished = await self.scheduler.wait_idle(within_s)
        tasks = self._tasks | (approver.tasks if approver is not None else set())
        if tasks:
            await asyncio.wait(tasks, timeout=within_s)
        return finished

    def abandon(self) -> int:
        """Shutdown past the drain timeout: waiting callers are released; the journal keeps the
        messages pending so the next start answers them."""
        cancelled = self.scheduler.cancel_all()
        self.inflight.cancel_all()
        return cancelled

    # -- the path ---------------------------------------------------------------------------

    def _inbound(
        self,
        msg: InboundMessage,
        future: asyncio.Future[TurnResult],
        accepted: float,
        *,
        resumed: bool = False,
    ) -> Inbound:
        self.rt.metrics.inbound.labels(channel=msg.channel).inc()
        return Inbound(
            msg=msg,
            future=future,
            accepted=accepted,
            hint=self.hint(msg),
            policy=self.policy(msg.channel),
            command=parse_command(msg.text, self.stages.command_handlers)
            if msg.is_command
            else None,
            resumed=resumed,
        )

    async def _walk(self, inbound: Inbound) -> None:
        """Run the stages from the one ``ib`` is at (a walk cut short by a stopping adapter
        goes on from the stage it was in)."""
        order = self.stages.order()
        while inbound.at < len(order):
            verdict = order[inbound.at](inbound)
            if verdict is not None and not isinstance(verdict, Verdict):
                verdict = await verdict  # a stage that waited for a store
            if verdict is not None:
                await self.settle(inbound.msg, inbound.future, verdict)
                inbound.at = len(order)
                return
            inbound.at += 1

    async def _walk_on(self, inbound: Inbound) -> None:
        try:
            await self._walk(inbound)
        except Exception as exc:
            self.inflight.release(inbound.msg.key, inbound.future)
            if self.guard.failed(exc) is None:
                log.exception("message failed in the stages", extra={"key": inbound.msg.key})

    async def _take_up(self, key: str) -> None:
        """Run ``key`` here if its journal write landed but the intake that wrote it was cut
        short (nothing else would: its owner, this replica, is alive)."""
        try:
            entry = await self.rt.journal.get(key)
            if entry is None or entry.state in TERMINAL or key in self.inflight:
                return
            if await self.rt.journal.owns(key):
                await self._resume([entry])
        except Exception as exc:  # the guard's probe resumes it once the state is back
            log.warning(
                "could not take up a cut-short message",
                extra={"key": key, "error": type(exc).__name__},
            )

    async def settle(
        self, msg: InboundMessage, future: asyncio.Future[TurnResult], verdict: Verdict
    ) -> None:
        """End ``msg`` here: journal, metrics, one log line, the notice and the caller's result."""
        runtime = self.rt
        stage, reason = verdict.stage.value, str(verdict.reason)
        if verdict.counted:
            runtime.metrics.dropped.labels(channel=msg.channel, stage=stage, reason=reason).inc()
        mark = JournalMark(verdict.state, runtime.clock.time(), stage=stage, reason=reason)
        await runtime.journal.settle(msg.key, mark)
        log.info(
            "dropped" if verdict.notice is None else "notice",
            extra={
                "channel": msg.channel,
                "chat": msg.chat_id,
                "sender": msg.sender_id,
                "key": msg.key,
                "stage": stage,
                "reason": reason,
            },
        )
        target = msg.reply_target
        if verdict.notice is not None and target is not None:
            self._background(self._send_notice(msg, target, future, verdict))
        elif not future.done():
            future.set_result(TurnResult(msg.key, stage, reason, verdict.notice or verdict.reply))

    async def _send_notice(
        self,
        msg: InboundMessage,
        target: Target,
        future: asyncio.Future[TurnResult],
        verdict: Verdict,
    ) -> None:
        assert verdict.notice is not None
        report = await self.rt.delivery.deliver(
            target, OutboundMessage.from_text(verdict.notice), inbound_key=msg.key
        )
        mark = JournalMark(
            verdict.state,
            self.rt.clock.time(),
            delivery=report.status.value,
            delivery_ids=report.message_ids,
        )
        await self.rt.journal.settle(msg.key, mark)
        if not future.done():
            future.set_result(
                TurnResult(
                    msg.key,
                    verdict.stage.value,
                    str(verdict.reason),
                    verdict.notice,
                    None,
                    report.status.value,
                )
            )

    # -- bookkeeping -------------------------------------------------------------------------

    def _count_duplicate(self, msg: InboundMessage) -> None:
        self.rt.metrics.dropped.labels(
            channel=msg.channel, stage=Stage.DEDUPE.value, reason=DropReason.DUPLICATE
        ).inc()
        log.info(
            "duplicate",
            extra={"channel": msg.channel, "key": msg.key, "reason": DropReason.DUPLICATE.value},
        )

    def _background(self, coro: Coroutine[Any, Any, None]) -> None:
        task = asyncio.ensure_future(coro)
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)
        task.add_done_callback(self._ended)

    def _ended(self, task: asyncio.Task[None]) -> None:
        """A background step's error is read here (never left for asyncio to report): a state
        outage is one coded line and the guard's probe resumes the message; else a traceback."""
        if task.cancelled() or (exc := task.exception()) is None:
            return
        if self.guard.failed(exc) is not None:
            log.warning(
                "background step left to the journal: state unavailable",
                extra={"reason": RefusalReason.STATE_UNAVAILABLE.value, "error": str(exc)[:200]},
            )
        else:
            log.error("background step failed", exc_info=exc)
