"""The named steps of one agent turn, in order (the turn side of `gateway/intake/stages.py`).

Steps run while the turn holds its lock and session: open → prepare → prepare_input →
call_agent → conclude. A step returns None to go on, or a `TurnExit` that ends the turn there.
After the lock and session are released: hand_over → announce. Each step reads and fills in the
`TurnRecord`; the `TurnRunner` only runs them.
"""

from __future__ import annotations

import asyncio
import functools
import logging
from collections.abc import Awaitable, Callable

from chatgate.agents.base import REPLY_TO, Agent, AgentError, AgentReply, Turn, TurnFenced
from chatgate.agents.tools.runtime import TurnTools
from chatgate.agents.tools.types import ApprovalAnswer, ApprovalAsk, Approve
from chatgate.channels.capabilities import AckMode
from chatgate.config.agent_models import AgentConfig, LiteLLMAgentConfig
from chatgate.feature.operator_notify import OperatorNotifier
from chatgate.feature.turns import AskContext, CancelReason, ToolApprover
from chatgate.feature.voices import USER_LANGUAGE_KEY, Voices
from chatgate.gateway.delivery.presence import typing_while
from chatgate.gateway.delivery.status_line import StatusLine, worded
from chatgate.gateway.delivery.streaming import StreamingReply
from chatgate.gateway.events import EventName
from chatgate.gateway.runtime import Runtime
from chatgate.gateway.turn.conclusion import Outcome, answered, decide, failure_of, to_persist
from chatgate.gateway.turn.handover import Handover
from chatgate.gateway.turn.job import Job
from chatgate.gateway.turn.masking import masked_reply, turn_secrets
from chatgate.gateway.turn.persist import TurnPersistence
from chatgate.gateway.turn.provider import ProviderWatch
from chatgate.gateway.turn.record import CANCEL_EXITS, TurnExit, TurnRecord
from chatgate.gateway.turn.resume import lock_unavailable, still_open
from chatgate.gateway.turn.unsaved import UnsavedAnswers
from chatgate.media.outgoing import store_files
from chatgate.media.speech import with_voice
from chatgate.media.step import prepare_turn_input
from chatgate.model.chat import ChatMessage
from chatgate.model.errors import StateUnavailable
from chatgate.model.reasons import DeliveryStatus, FailureReason, OutcomeKind
from chatgate.model.results import DeliveryReport, Stage
from chatgate.policies.tools import Approval
from chatgate.policies.voice_reply import SPEECH_FAILURES
from chatgate.state.records import JournalMark, JournalState

log = logging.getLogger("chatgate.turn")
Step = Callable[[TurnRecord], Awaitable[TurnExit | None]]


def shows_tools(config: AgentConfig | None) -> bool:
    """The agent runs tools and shows which (``show_tool_progress``)."""
    tools = config.tools if isinstance(config, LiteLLMAgentConfig) else None
    return tools is not None and tools.show_tool_progress


def user_message(job: Job) -> ChatMessage:
    return ChatMessage("user", job.msg.text, job.msg.sender_name or None, job.msg.key)


class TurnSteps:
    def __init__(
        self,
        rt: Runtime,
        handover: Handover,
        persistence: TurnPersistence,
        redeliver: Callable[[Job], Awaitable[None]],
    ) -> None:
        self.rt = rt
        self.handover = handover
        self.persistence = persistence
        self.redeliver = redeliver  # sends an answer stored in the journal (no agent call)
        self.providers = ProviderWatch(rt)
        self.voices = Voices(rt)
        self.notifier = OperatorNotifier(rt, rt.clock, rt.delivery.deliver)
        self.approvals: ToolApprover | None = None  # asks the chat before `ask` tool calls
        self.unsaved = UnsavedAnswers()
        self.held: tuple[Step, ...] = (
            self.open,
            self.prepare,
            self.prepare_input,
            self.call_agent,
            self.conclude,
        )
        self.after: tuple[Step, ...] = (self.hand_over, self.announce)

    async def open(self, rec: TurnRecord) -> TurnExit | None:
        """Take the session's turn lock, drop resumed messages answered meanwhile, take the
        warm session (a one-shot turn gets a transient one, never cached)."""
        rt = self.rt
        rec.agent = rt.agents[rec.last.agent]  # as configured when the turn began (reloads swap it)
        rec.deadline_s = TurnTools.deadline_s(rt.config.agents[rec.last.agent])
        lock = rt.turn_lock.hold(
            rec.last.session, owner=rt.owner, ttl=rt.config.gateway.turn_lock.ttl_s
        )
        try:
            rec.lease = await rec.held.enter_async_context(lock)
        except StateUnavailable as exc:  # fail closed: never two turns of one session
            voice = self.voices.for_message(rec.last.msg, rec.last.agent)
            await lock_unavailable(rt, self.handover, rec.batch, exc, voice)
            return TurnExit.SETTLED
        rec.batch = await still_open(rt, rec.batch, self.redeliver)
        if not rec.batch:
            return TurnExit.SETTLED
        rec.new = [user_message(job) for job in rec.batch]
        last, now = rec.last, rt.clock.time()
        if rec.one_shot:  # e.g. a webhook delivery without a session template
            rec.session = rt.cache.transient(last.session, now)
        else:
            rec.session = await rt.cache.acquire(last.session, now)
        rt.metrics.active_turns.inc()
        rec.held.callback(self._close, rec)
        return None

    def _close(self, rec: TurnRecord) -> None:
        self.rt.metrics.active_turns.dec()
        if not rec.one_shot and rec.session is not None:
            self.rt.cache.release(rec.session)

    async def prepare(self, rec: TurnRecord) -> TurnExit | None:
        """The reply's channel adapter, and a streaming draft where the channel edits in place
        (else, for an agent that shows its tools, a status line the answer replaces)."""
        target = rec.last.target
        adapter = await self.rt.channels.ready_adapter(target.channel) if target else None
        rec.adapter = adapter
        if adapter is not None and target is not None:
            caps, rt = adapter.capabilities, self.rt
            if caps.stream and caps.edits:
                rec.stream = StreamingReply(
                    adapter, target, rt.delivery, rt.clock, caps.min_edit_interval_s
                )
            elif caps.edits and shows_tools(rt.config.agents.get(rec.last.agent)):
                rec.status = StatusLine(
                    adapter, target, rt.delivery, rt.clock, caps.min_edit_interval_s
                )
        return None

    async def prepare_input(self, rec: TurnRecord) -> TurnExit | None:
        """The media step: the batch's attachments fetched by their channel and understood
        (image parts, transcripts, document text, coded notes); rewrites ``rec.new``."""
        if not any(job.msg.attachments for job in rec.batch):
            return None
        rt, last = self.rt, rec.last
        channel = last.msg.channel
        fetcher = await rt.channels.file_source(channel)
        msgs = [job.msg for job in rec.batch]
        agent_cfg = rt.config.agents[last.agent]
        files = rt.channels.registry.descriptor(last.msg.platform).limits.files
        cap = files.max_download_bytes if files is not None else None
        rec.media = await prepare_turn_input(msgs, fetcher, agent_cfg, rt.state_dir, cap)
        rec.new = rec.media.apply(rec.new)
        for o in rec.media.outcomes:
            rt.metrics.media.labels(channel=channel, kind=o.kind, reason=o.reason.value).inc()
        return None

    async def call_agent(self, rec: TurnRecord) -> TurnExit | None:
        """Run the agent inline under its timeout while the channel shows life (reaction ack,
        typing); a cancelled call ends as its `TurnExit` or as the /stop failure."""
        rt, last, adapter, agent = self.rt, rec.last, rec.adapter, rec.agent
        assert agent is not None
        turn = self._turn_for(rec)
        prewarm = getattr(agent, "prewarm", None)  # a one-time warm-up must not eat the timeout
        if prewarm is not None:
            await prewarm()
        started = rt.clock.monotonic()
        if adapter is not None and AckMode.REACTION in adapter.capabilities.ack:
            rec.reacts = True
            rec.ack = asyncio.ensure_future(adapter.acknowledge(last.msg))
        async with typing_while(adapter, last.target, rt.clock):
            ended = await self._run_agent(rec, agent, turn)
        if ended is not None:
            return ended
        if rec.ack is not None:
            await asyncio.gather(rec.ack, return_exceptions=True)
        rec.agent_s = rt.clock.monotonic() - started
        rt.metrics.turn_seconds.labels(agent=last.agent).observe(rec.agent_s)
        return None

    def _turn_for(self, rec: TurnRecord) -> Turn:
        last, session, stream = rec.last, rec.session, rec.stream
        assert session is not None
        shown = stream or rec.status
        progress = None
        if shown is not None:
            voices = self.voices
            progress = worded(shown.progress, lambda: voices.for_message(last.msg, last.agent))
        tools = rec.tools = TurnTools(self.rt.tools, self.providers.agent_event, progress)
        rec.history_len = len(session.transcript)
        return Turn(
            session=last.session,
            history=tuple(session.transcript),
            new=rec.new,
            channel=last.msg.channel,
            sender_id=last.msg.sender_id,
            on_delta=stream.delta if stream is not None else None,
            on_event=tools.on_event,
            metadata={
                "chat_id": last.msg.chat_id,
                "thread_id": last.msg.thread_id,
                REPLY_TO: last.target.address if last.target is not None else "",
            },
            on_progress=tools.on_progress,
            parts=rec.media.parts,
            approve=self._approver(rec),
            before_model=functools.partial(self._fence, rec),
            secrets=turn_secrets(self.rt),
        )

    def _approver(self, rec: TurnRecord) -> Approve | None:
        """The turn's way to ask the chat before a tool call whose rule is `ask`."""
        desk, last = self.approvals, rec.last
        config = self.rt.config.agents.get(last.agent)
        tools = config.tools if isinstance(config, LiteLLMAgentConfig) else None
        if desk is None or tools is None or Approval.ASK not in tools.approval.values():
            return None
        language = last.msg.extra.get(USER_LANGUAGE_KEY)
        ctx = AskContext(
            key=last.msg.key,
            session=last.session,
            agent=last.agent,
            channel=last.msg.channel,
            chat_id=last.msg.chat_id,
            sender_id=last.msg.sender_id,
            target=last.target,
            language=language if isinstance(language, str) else None,
            timeout_s=tools.approval_timeout_s,
            approver=tools.approver,
            control=rec.control,
        )

        async def approve(ask: ApprovalAsk) -> ApprovalAnswer:
            ctx.deadline.timeout = rec.deadline
            return await desk.ask(ctx, ask)

        return approve

    async def _fence(self, rec: TurnRecord) -> None:
        """Right before each model request: is the session's turn lock still this turn's? One
        compare-and-extend in the lock's store. A replica that stalled past the lock's TTL finds
        it lost (another replica may be running the session): no request, the batch goes back
        through the open step (lock, ownership, session) instead."""
        if rec.lease is None:
            return
        ttl = self.rt.config.gateway.turn_lock.ttl_s
        if not await self.rt.turn_lock.renew(rec.lease, ttl):
            raise TurnFenced(rec.lease.key)

    async def _run_agent(self, rec: TurnRecord, agent: Agent, turn: Turn) -> TurnExit | None:
        """The agent call itself (the slot for a tool loop). It runs inline, not in a task of its
        own: /stop and the interrupt policy cancel this task, which lands here."""
        kept = self.unsaved.take([job.msg.key for job in rec.batch], rec.history_len)
        if kept is not None:
            log.info(
                "answer kept from a run whose state write failed; the model is not asked again",
                extra={"session": rec.last.session, "key": rec.last.msg.key},
            )
            rec.reply = kept
            return None
        control = rec.control
        control.enter_agent()
        try:
            async with asyncio.timeout(rec.deadline_s) as rec.deadline:
                reply = masked_reply(await agent.run(turn), turn.secrets)
            reply = await self._spoken(rec, reply)  # its own timeout; never fails the turn
            voice = self.voices.for_message(rec.last.msg, rec.last.agent)
            rec.reply = await store_files(reply, self.rt.delivery.files, voice)
        except asyncio.CancelledError:
            if control.reason is None:
                raise
            ended = CANCEL_EXITS.get(control.reason)
            if ended is not None:
                return ended
            rec.failure = AgentError(FailureReason.CANCELLED, "stopped by /stop")
        except TurnFenced:
            log.warning(
                "turn lock lost before a model request; running the batch again",
                extra={"session": rec.last.session, "key": rec.last.msg.key},
            )
            return TurnExit.RETRY
        except StateUnavailable:
            raise  # fail closed, as when the lock cannot be taken: callers answer "retry later"
        except AgentError as exc:
            rec.failure = exc
        except TimeoutError:
            rec.failure = AgentError(FailureReason.TIMEOUT, "agent exceeded timeout_s")
        except Exception as exc:
            log.exception("agent raised", extra={"agent": rec.last.agent, "session": turn.session})
            rec.failure = AgentError(FailureReason.UNKNOWN, type(exc).__name__)
        finally:
            control.leave_agent()
        return None

    async def _spoken(self, rec: TurnRecord, reply: AgentReply) -> AgentReply:
        """The answer with a voice note when the agent's `voice_reply` asks for one."""
        config = self.rt.config.agents.get(rec.last.agent)
        if not isinstance(config, LiteLLMAgentConfig) or config.voice_reply == "never":
            return reply
        heard = any(a.kind == "voice" for job in rec.batch for a in job.msg.attachments)
        spoken, reason = await with_voice(reply, config, user_sent_voice=heard)
        channel = rec.last.msg.channel
        if reason is None:
            self.rt.metrics.count("voice_reply_sent", channel=channel)
        elif reason in SPEECH_FAILURES:
            self.rt.metrics.count(reason.value, channel=channel)
        return spoken

    async def conclude(self, rec: TurnRecord) -> TurnExit | None:
        """The outcome, and one journal write: ANSWERED with the reply kept (a restart re-sends
        it), or DONE at once when nothing is left to deliver (a sync webhook answers in its HTTP
        response); the transcript lines go in the same write where the backend can."""
        rt, last, session = self.rt, rec.last, rec.session
        assert session is not None
        voice = self.voices.for_message(last.msg, last.agent)
        kind, message, reason = decide(rec.reply, rec.failure, rt.config.gateway, voice)
        message = rec.media.annotate(message, voice)  # a refused or failed file is never silent
        self._tell_operator(rec)
        stopped = rec.control.reason is CancelReason.STOP
        final = last.target is None and rec.stream is None
        outcome = rec.outcome = Outcome(kind, message, reason, stopped=stopped, final=final)
        # A one-shot session is never read again; the journal keeps its message and reply.
        persist = [] if rec.one_shot else to_persist(rec.new, kind, rec.reply, rec.failure)
        reply = answered(outcome, persist) | rec.media.journal_fields()
        if rec.tools is not None:
            rec.tools.record(reply)  # the tool trail `chatgate why` shows
        keys = [j.msg.key for j in rec.batch]
        mark = JournalMark(
            JournalState.DONE if final else JournalState.ANSWERED,
            rt.clock.time(),
            stage=Stage.TURN.value,
            session=last.session,
            reason=reason,
            reply=reply,
            delivery=outcome.unsent.value if final else None,
            delivery_ids=[] if final else None,
        )
        try:
            await self.persistence.write(keys, mark, session, persist)
        except StateUnavailable:  # the re-run (retry, resume) sends this answer, asks no model
            if rec.reply is not None and rec.failure is None:
                # keyed by the warm transcript as this failure leaves it (the lines may be held
                # unflushed): a re-run that starts from exactly there reuses the answer
                self.unsaved.keep(keys, len(session.transcript), rec.reply)
            raise
        return None

    def _tell_operator(self, rec: TurnRecord) -> None:
        """The operator's side of a failure the chat was told about: the log line and, when
        configured, the operator chat (rate-limited)."""
        failed = failure_of(rec.reply, rec.failure)
        if failed is None:
            return
        last = rec.last
        log.warning(
            "turn failed",
            extra={"session": last.session, "reason": failed.reason.value, "detail": failed.detail},
        )
        self.notifier.failed(failed, f"{last.msg.channel}:{last.msg.chat_id}", last.agent)

    async def hand_over(self, rec: TurnRecord) -> TurnExit | None:
        """Deliver (or leave the answer to the replica now holding the channel), mark the
        reaction done, mark the batch DONE and resolve its futures."""
        rt, last, outcome, adapter = self.rt, rec.last, rec.outcome, rec.adapter
        assert outcome is not None
        rt.metrics.turns.labels(
            agent=last.agent, outcome=outcome.kind.value, reason=outcome.reason
        ).inc()
        if rec.agent is not None:
            self.providers.track(rec.agent.provider_id(), last.agent, rec.failure, rec.reply)
        if not outcome.final and await self.handover.hand_off(last):
            report = DeliveryReport(DeliveryStatus.HANDED_OFF)
        else:
            drafted = rec.stream or rec.status  # the answer replaces what was shown
            report = await self.handover.deliver(last, outcome.shown, rec.agent_s, drafted)
        rec.report = report
        if adapter is not None and rec.reacts:
            failed = outcome.kind is OutcomeKind.FAILURE or report.kind is not None
            await asyncio.gather(
                adapter.acknowledge_done(last.msg, failed=failed), return_exceptions=True
            )
        await self.handover.finish(
            rec.batch, Stage.TURN, outcome.reason, outcome.message, report, journaled=outcome.final
        )
        return None

    async def announce(self, rec: TurnRecord) -> TurnExit | None:
        """The turn_finished event and the turn's one log line."""
        rt, last, outcome, report, reply = self.rt, rec.last, rec.outcome, rec.report, rec.reply
        assert outcome is not None and report is not None
        rt.events.emit(
            EventName.TURN_FINISHED,
            rt.clock.time(),
            channel=last.msg.channel,
            agent=last.agent,
            outcome=outcome.kind.value,
            reason=outcome.reason,
            delivery=report.status.value,
            agent_s=rec.agent_s,
            latency_s=rt.clock.monotonic() - last.accepted_at,  # accepted → delivered
        )
        log.info(
            "turn",
            extra={
                "channel": last.msg.channel,
                "chat": last.msg.chat_id,
                "key": last.msg.key,
                "session": last.session,
                "agent": last.agent,
                "model": reply.model if reply else None,
                "messages": len(rec.batch),
                "outcome": outcome.kind.value,
                "reason": outcome.reason,
                "delivery": report.status.value,
                "send_error": report.kind.value if report.kind else None,
                "agent_ms": round(rec.agent_s * 1000, 1),
            },
        )
        return None
