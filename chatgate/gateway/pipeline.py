"""The inbound message path up to the session queue: dedupe + journal, admission, guards, routing.

`submit` returns once the message is durably journaled and its fate decided (dropped, answered
with a notice, or queued for a turn), so an adapter that awaits it may ack the platform.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Coroutine
from dataclasses import dataclass
from typing import Any

from chatgate.channels.outcome import Stage, Submission, TurnResult
from chatgate.channels.types import InboundMessage, RouteHint, Target
from chatgate.gateway import commands as cmd
from chatgate.gateway.commands import Command, parse_command
from chatgate.gateway.degraded import OwnerKind
from chatgate.gateway.events import EventName
from chatgate.gateway.journal import TERMINAL, JournalEntry, JournalState
from chatgate.gateway.runtime import Runtime
from chatgate.gateway.session_queue import Job, JobKind, SessionScheduler
from chatgate.gateway.turns import TurnRunner
from chatgate.policies.admission import AdmissionFacts, AdmissionPolicy, decide_admission
from chatgate.policies.failure import failure_reply
from chatgate.policies.pairing import IssueOutcome
from chatgate.policies.reasons import AdmissionReason, DropReason, FailureReason
from chatgate.policies.routing import Binding, resolve_agent, session_key
from chatgate.presentation.model import OutboundMessage

log = logging.getLogger("chatgate.pipeline")
NO_HINT = RouteHint()
RATE_NOTICE_EVERY_S = 60.0


@dataclass(frozen=True)
class ChannelPolicy:
    admission: AdmissionPolicy
    agent: str


class Pipeline:
    def __init__(self, rt: Runtime) -> None:
        self.rt = rt
        self.runner = TurnRunner(rt)
        sessions = rt.config.gateway.sessions
        self.scheduler = SessionScheduler(
            self.runner.execute, policy=sessions.mid_turn, max_queued=sessions.max_queued
        )
        self._inflight: dict[str, asyncio.Future[TurnResult]] = {}
        self._policies: dict[str, ChannelPolicy] = {}
        self._hints: dict[tuple[str, str], RouteHint] = {}
        self._bindings: tuple[Binding, ...] = ()
        self._rate_notices: dict[str, float] = {}
        self._tasks: set[asyncio.Task[None]] = set()
        self.reload()

    def reload(self) -> None:
        """Re-derive per-channel policies and route hints after a config change."""
        self._policies = {}
        self._hints = {}
        self._bindings = tuple(
            Binding(agent=b.agent, **b.match.model_dump()) for b in self.rt.config.routes
        )
        for name, section in self.rt.loaded.channels.items():
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
                )
            descriptor = self.rt.channels.registry.descriptor(section.platform)
            for route, hint in descriptor.route_hints(section.config).items():
                self._hints[(name, route)] = hint
        self.scheduler.policy = self.rt.config.gateway.sessions.mid_turn
        self.scheduler.max_queued = self.rt.config.gateway.sessions.max_queued

    def policy(self, channel: str) -> ChannelPolicy:
        return self._policies.get(channel) or ChannelPolicy(AdmissionPolicy(), "default")

    def hint(self, msg: InboundMessage) -> RouteHint:
        """What the operator configured for the route ``msg`` came in on (nothing, by default)."""
        if msg.route is None:
            return NO_HINT
        return self._hints.get((msg.channel, msg.route), NO_HINT)

    # -- entry points -----------------------------------------------------------------------

    async def submit(self, msg: InboundMessage) -> Submission:
        rt = self.rt
        existing_future = self._inflight.get(msg.key)
        if existing_future is not None:
            self._count_duplicate(msg)
            return Submission(msg.key, True, existing_future)
        now = rt.clock.time()
        accepted = rt.clock.monotonic()
        new, existing = await rt.journal.record(msg, now, rt.config.gateway.dedupe_window_s)
        if not new:
            self._count_duplicate(msg)
            return Submission(msg.key, True, self._duplicate_future(msg, existing))
        future = self._track(msg.key)
        await self._dispatch(msg, future, accepted)
        return Submission(msg.key, False, future)

    def ignored(self, channel: str, reason: DropReason, *, chat_id: str = "") -> None:
        """An adapter heard a platform event that is not a message for us (edit, join, ...)."""
        self.rt.metrics.ignored.labels(channel=channel, reason=reason.value).inc()
        log.info("ignored", extra={"channel": channel, "chat": chat_id, "reason": reason.value})

    async def recover(self) -> int:
        """Resume what a previous process journaled but did not finish; returns the count."""
        entries = await self.rt.journal.unfinished()
        for entry in entries:
            future = self._inflight.get(entry.key) or self._track(entry.key)
            msg = entry.message
            if entry.state is JournalState.ANSWERED and entry.reply is not None and entry.session:
                hint = self.hint(msg)
                agent = resolve_agent(
                    msg, self._bindings, self.policy(msg.channel).agent, hint.agent
                )
                job = Job(
                    JobKind.REDELIVER,
                    msg,
                    future,
                    entry.session,
                    agent,
                    msg.reply_target,
                    self.rt.clock.monotonic(),
                    stored_reply=entry.reply,
                    ephemeral=hint.ephemeral,
                )
                self.scheduler.enqueue(job, front=False)
            else:
                await self._dispatch(msg, future, self.rt.clock.monotonic(), recovered=True)
        if entries:
            log.info("resumed unfinished messages from the journal", extra={"count": len(entries)})
        return len(entries)

    async def drain(self, within_s: float | None = None) -> bool:
        """Let queued and running turns finish; False when ``within_s`` passed first."""
        finished = await self.scheduler.wait_idle(within_s)
        if self._tasks:
            await asyncio.wait(self._tasks, timeout=within_s)
        return finished

    def abandon(self) -> int:
        """Shutdown past the drain timeout: waiting callers are released; the journal keeps the
        messages pending so the next start answers them."""
        cancelled = self.scheduler.cancel_all()
        for future in list(self._inflight.values()):
            future.cancel()
        return cancelled

    # -- the path -------------------------------------------------------------------------

    async def _dispatch(
        self,
        msg: InboundMessage,
        future: asyncio.Future[TurnResult],
        accepted: float,
        *,
        recovered: bool = False,
    ) -> None:
        rt = self.rt
        now = rt.clock.time()
        rt.metrics.inbound.labels(channel=msg.channel).inc()
        if not recovered:
            rt.events.emit(
                EventName.MESSAGE_RECEIVED,
                now,
                key=msg.key,
                channel=msg.channel,
                chat_id=msg.chat_id,
                sender_id=msg.sender_id,
                chat_kind=msg.chat_kind,
            )
        if msg.reply_target is not None and rt.dead.kind(msg.reply_target) is not None:
            await rt.dead.revive(msg.reply_target.address)
        policy = self.policy(msg.channel)
        hint = self.hint(msg)
        command = (
            parse_command(msg.text) if msg.is_command else None
        )  # the adapter knows who it addresses

        if msg.sender_is_bot and not rt.loop_guard.check(
            chat_key=f"{msg.channel}:{msg.chat_id}", sender_is_bot=True, now=rt.clock.monotonic()
        ):
            await self._drop(msg, future, Stage.LOOP_GUARD, DropReason.BOT_LOOP)
            return
        if not msg.sender_is_bot:
            rt.loop_guard.check(
                chat_key=f"{msg.channel}:{msg.chat_id}",
                sender_is_bot=False,
                now=rt.clock.monotonic(),
            )

        if not hint.trusted:
            paired = (
                msg.chat_kind == "direct"
                and policy.admission.dm_policy == "pairing"
                and msg.sender_id not in policy.admission.allowed_users
                and await rt.pairing.is_approved(msg.channel, msg.sender_id)
            )
            decision = decide_admission(
                AdmissionFacts(
                    chat_kind=msg.chat_kind,
                    sender_id=msg.sender_id,
                    chat_id=msg.chat_id,
                    is_mention=msg.is_mention,
                    is_command=command is not None or msg.is_command,
                    paired=paired,
                ),
                policy.admission,
            )
            rt.metrics.admission.labels(channel=msg.channel, reason=decision.reason.value).inc()
            if decision.issue_pairing_code:
                await self._pairing(msg, future)
                return
            if decision.observe:
                agent = resolve_agent(msg, self._bindings, policy.agent, hint.agent)
                key = session_key(
                    agent, msg, per_user_in_groups=rt.config.gateway.sessions.per_user_in_groups
                )
                self.scheduler.enqueue(
                    Job(JobKind.OBSERVE, msg, future, key, agent, None, accepted)
                )
                return
            if not decision.admit:
                await self._drop(msg, future, Stage.ADMISSION, decision.reason)
                return

        agent = resolve_agent(msg, self._bindings, policy.agent, hint.agent)
        key = session_key(
            agent, msg, per_user_in_groups=rt.config.gateway.sessions.per_user_in_groups
        )
        if command is Command.STOP:
            await self._stop(msg, future, key)
            return
        if command in (Command.HELP, Command.STATUS):
            text = cmd.HELP_TEXT if command is Command.HELP else self._status_text(agent, key)
            await self._notice(msg, future, Stage.COMMAND, command.value, text)
            return

        if not hint.trusted:
            limited = rt.limiter.check(
                sender_key=f"{msg.channel}:{msg.sender_id}",
                chat_key=f"{msg.channel}:{msg.chat_id}",
                now=rt.clock.monotonic(),
            )
            if not limited.allowed and limited.reason is not None:
                await self._rate_limited(msg, future, limited.reason, limited.retry_after_s)
                return

        if await self._unavailable(msg, future, agent):
            return
        if rt.memory.shedding and command is not Command.NEW:
            text = failure_reply(FailureReason.MEMORY_PRESSURE).text
            await self._notice(
                msg, future, Stage.MEMORY, DropReason.MEMORY_PRESSURE, text, dropped=True
            )
            return

        kind = JobKind.NEW_SESSION if command is Command.NEW else JobKind.TURN
        job = Job(
            kind, msg, future, key, agent, msg.reply_target, accepted, ephemeral=hint.ephemeral
        )
        if not self.scheduler.enqueue(job):
            await self._notice(
                msg, future, Stage.QUEUE, DropReason.QUEUE_FULL, cmd.QUEUE_FULL_TEXT, dropped=True
            )

    # -- outcomes that never reach a turn ---------------------------------------------------

    async def _drop(
        self,
        msg: InboundMessage,
        future: asyncio.Future[TurnResult],
        stage: Stage,
        reason: str,
        *,
        reply: str | None = None,
    ) -> None:
        rt = self.rt
        rt.metrics.dropped.labels(channel=msg.channel, stage=stage.value, reason=str(reason)).inc()
        log.info(
            "dropped",
            extra={
                "channel": msg.channel,
                "chat": msg.chat_id,
                "sender": msg.sender_id,
                "key": msg.key,
                "stage": stage.value,
                "reason": str(reason),
            },
        )
        await rt.journal.settle(
            msg.key, JournalState.DROPPED, rt.clock.time(), stage=stage, reason=str(reason)
        )
        if not future.done():
            future.set_result(TurnResult(msg.key, stage.value, str(reason), reply))

    async def _notice(
        self,
        msg: InboundMessage,
        future: asyncio.Future[TurnResult],
        stage: Stage,
        reason: str,
        text: str,
        *,
        dropped: bool = False,
    ) -> None:
        """Answer with a gateway notice (no agent turn); delivery runs in the background."""
        rt = self.rt
        if dropped:
            rt.metrics.dropped.labels(
                channel=msg.channel, stage=stage.value, reason=str(reason)
            ).inc()
        state = JournalState.DROPPED if dropped else JournalState.DONE
        await rt.journal.settle(msg.key, state, rt.clock.time(), stage=stage, reason=str(reason))
        log.info(
            "notice",
            extra={
                "channel": msg.channel,
                "chat": msg.chat_id,
                "key": msg.key,
                "stage": stage.value,
                "reason": str(reason),
            },
        )
        if msg.reply_target is None:
            if not future.done():
                future.set_result(TurnResult(msg.key, stage.value, str(reason), text))
            return
        self._background(
            self._send_notice(msg, msg.reply_target, future, stage, str(reason), text, state)
        )

    async def _send_notice(
        self,
        msg: InboundMessage,
        target: Target,
        future: asyncio.Future[TurnResult],
        stage: Stage,
        reason: str,
        text: str,
        state: JournalState,
    ) -> None:
        report = await self.rt.delivery.deliver(
            target, OutboundMessage.from_text(text), inbound_key=msg.key
        )
        await self.rt.journal.settle(
            msg.key,
            state,
            self.rt.clock.time(),
            delivery=report.status.value,
            delivery_ids=report.message_ids,
        )
        if not future.done():
            future.set_result(
                TurnResult(msg.key, stage.value, reason, text, None, report.status.value)
            )

    async def _pairing(self, msg: InboundMessage, future: asyncio.Future[TurnResult]) -> None:
        rt = self.rt
        decision = await rt.pairing.request(
            msg.channel, msg.sender_id, msg.sender_name, msg.chat_id, rt.clock.time()
        )
        if decision.outcome is IssueOutcome.TOO_MANY_PENDING or decision.code is None:
            text = cmd.PAIRING_FULL_TEXT
        else:
            text = cmd.pairing_text(msg.channel, decision.code, msg.sender_name)
        rt.metrics.dropped.labels(
            channel=msg.channel,
            stage=Stage.ADMISSION.value,
            reason=AdmissionReason.PAIRING_REQUIRED.value,
        ).inc()
        await self._notice(msg, future, Stage.ADMISSION, AdmissionReason.PAIRING_REQUIRED, text)

    async def _rate_limited(
        self,
        msg: InboundMessage,
        future: asyncio.Future[TurnResult],
        reason: DropReason,
        retry_after_s: float,
    ) -> None:
        now = self.rt.clock.monotonic()
        sender = f"{msg.channel}:{msg.sender_id}"
        last = self._rate_notices.get(sender)
        if last is not None and now - last < RATE_NOTICE_EVERY_S:
            await self._drop(msg, future, Stage.RATE_LIMIT, reason)
            return
        self._rate_notices[sender] = now
        if len(self._rate_notices) > 10_000:
            self._rate_notices = {
                k: v for k, v in self._rate_notices.items() if now - v < RATE_NOTICE_EVERY_S
            }
        await self._notice(
            msg,
            future,
            Stage.RATE_LIMIT,
            reason,
            cmd.rate_limited_text(retry_after_s),
            dropped=True,
        )

    async def _stop(
        self, msg: InboundMessage, future: asyncio.Future[TurnResult], key: str
    ) -> None:
        cancelled, dropped = self.scheduler.stop(key)
        for job in dropped:
            await self._drop(job.msg, job.future, Stage.COMMAND, DropReason.STOPPED)
        text = cmd.STOPPED_TEXT if cancelled or dropped else cmd.NOTHING_TO_STOP_TEXT
        await self._notice(msg, future, Stage.COMMAND, Command.STOP.value, text)

    async def _unavailable(
        self, msg: InboundMessage, future: asyncio.Future[TurnResult], agent: str
    ) -> bool:
        """Fail closed: work for a degraded provider or a parked delivery channel gets told so."""
        rt = self.rt
        target = msg.reply_target
        owner = None
        if (
            target is not None
            and target.channel != msg.channel
            and rt.channels.is_unavailable(target.channel)
        ):
            owner = rt.degraded.find(OwnerKind.CHANNEL, target.channel)
            hint = (
                owner.hint
                if owner
                else f"channel '{target.channel}' is not running: see `chatgate status`"
            )
            text = failure_reply(FailureReason.UNAVAILABLE, hint=hint).text
            # The target channel cannot carry the notice; the caller gets it in the result instead.
            await self._drop(msg, future, Stage.DEGRADED, FailureReason.UNAVAILABLE, reply=text)
            return True
        provider = rt.agents[agent].provider_id() if agent in rt.agents else None
        if provider is not None:
            owner = rt.degraded.blocking(OwnerKind.PROVIDER, provider, rt.clock.monotonic())
        if owner is None:
            return False
        text = failure_reply(FailureReason.UNAVAILABLE, hint=owner.hint).text
        await self._notice(
            msg, future, Stage.DEGRADED, FailureReason.UNAVAILABLE, text, dropped=True
        )
        return True

    def _status_text(self, agent: str, key: str) -> str:
        cfg = self.rt.config.agents.get(agent)
        model = getattr(cfg, "model", None)
        warm = self.rt.cache.get(key)
        depth = self.scheduler.depth(key)
        return cmd.status_text(
            agent=agent,
            model=model,
            history=len(warm.transcript) if warm else 0,
            queued=max(0, depth - 1),
            running=depth > 0,
        )

    # -- bookkeeping -------------------------------------------------------------------------

    def _track(self, key: str) -> asyncio.Future[TurnResult]:
        future: asyncio.Future[TurnResult] = asyncio.get_running_loop().create_future()
        self._inflight[key] = future
        future.add_done_callback(lambda _: self._inflight.pop(key, None))
        return future

    def _duplicate_future(
        self, msg: InboundMessage, entry: JournalEntry | None
    ) -> asyncio.Future[TurnResult]:
        pending = self._inflight.get(msg.key)
        if pending is not None:
            return pending
        future: asyncio.Future[TurnResult] = asyncio.get_running_loop().create_future()
        if entry is not None and entry.state in TERMINAL:
            reply = entry.reply or {}
            text = _reply_text(reply)
            future.set_result(
                TurnResult(
                    msg.key,
                    entry.stage or Stage.DEDUPE.value,
                    entry.reason or "",
                    text,
                    entry.session,
                    entry.delivery,
                )
            )
        else:  # journaled by a previous process and not yet resumed: resumption will settle it
            self._inflight[msg.key] = future
            future.add_done_callback(lambda _: self._inflight.pop(msg.key, None))
        return future

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


def _reply_text(reply: dict[str, object]) -> str | None:
    message = reply.get("message")
    if isinstance(message, dict):
        from chatgate.presentation.model import message_from_dict

        return message_from_dict(message).plain_text
    return None
