"""The named steps of one agent turn, in order (the turn side of `gateway/intake/stages.py`).

Steps run while the turn holds its lock and session: open → prepare → budget → prepare_input →
call_agent → conclude → deliver (an answer handed off to another replica takes the lock along,
so no later answer of the session overtakes it). A step returns None to go on, or a `TurnExit`
that ends the turn there. After the lock and session are released: announce. Each step reads
and fills in the `TurnRecord`; the `TurnRunner` only runs them.
"""

from __future__ import annotations

import asyncio
import functools
import logging
from collections.abc import Awaitable, Callable

from chatgate.agents.base import REPLY_TO, Agent, AgentError, AgentReply, Turn, TurnFenced
from chatgate.agents.tools.runtime import TurnTools
from chatgate.channels.capabilities import AckMode
from chatgate.config.agent_models import LiteLLMAgentConfig
from chatgate.config.masking import masker_for
from chatgate.feature.operator_notify import OperatorNotifier
from chatgate.feature.turns import CancelReason, ToolApprover, TurnMeters
from chatgate.feature.voices import Voices
from chatgate.gateway.delivery.presence import typing_while
from chatgate.gateway.delivery.status_line import StatusLine, worded
from chatgate.gateway.delivery.streaming import StreamingReply
from chatgate.gateway.events import EventName
from chatgate.gateway.logs import log_fields
from chatgate.gateway.runtime import Runtime
from chatgate.gateway.turn.answering import Answering
from chatgate.gateway.turn.asking import chat_approver
from chatgate.gateway.turn.conclusion import Outcome, answered, decide, failure_of, to_persist
from chatgate.gateway.turn.job import Job
from chatgate.gateway.turn.lines import shows_tools, turn_usage, user_message
from chatgate.gateway.turn.masking import masked, masked_reply, turn_secrets
from chatgate.gateway.turn.persist import TurnPersistence
from chatgate.gateway.turn.provider import ProviderWatch
from chatgate.gateway.turn.record import CANCEL_EXITS, TurnExit, TurnRecord
from chatgate.gateway.turn.resume import StateAway, still_open
from chatgate.gateway.turn.unsaved import UnsavedAnswers
from chatgate.media.outgoing import store_files
from chatgate.media.speech import with_voice
from chatgate.media.step import prepare_turn_input
from chatgate.model.errors import GaveWay, StateUnavailable
from chatgate.model.reasons import DeliveryStatus, FailureReason, OutcomeKind
from chatgate.model.results import DeliveryReport, Stage
from chatgate.policies.voice_reply import SPEECH_FAILURES
from chatgate.state.records import JournalMark, JournalState

log = logging.getLogger("chatgate.turn")
Step = Callable[[TurnRecord], Awaitable[TurnExit | None]]


class TurnSteps:
    def __init__(
        self,
        runtime: Runtime,
        answering: Answering,
        persistence: TurnPersistence,
        redeliver: Callable[[Job], Awaitable[object]],
    ) -> None:
        self.rt = runtime
        self.answering = answering
        self.persistence = persistence
        self.redeliver = redeliver  # sends an answer stored in the journal (no agent call)
        self.providers = ProviderWatch(runtime)
        self.voices = Voices(runtime)
        self.notifier = OperatorNotifier(runtime, runtime.clock, runtime.delivery.deliver)
        self.approvals: ToolApprover | None = None  # asks the chat before `ask` tool calls
        self.meters: TurnMeters | None = None  # the spend budgets (admit, charge, degrade)
        self.unsaved = UnsavedAnswers()
        self.state_away = StateAway(runtime)
        self.held: tuple[Step, ...] = (
            self.open,
            self.prepare,
            self.budget,
            self.prepare_input,
            self.call_agent,
            self.conclude,
            self.deliver,  # under the lock: no later turn of the session is sent first
        )
        self.after: tuple[Step, ...] = (self.announce,)

    def applies(self, step: Step, metered: bool, media: bool) -> bool:
        """Whether a turn of this kind enters ``step``: the budget step only with budget rules,
        the media step only with attachments; any other (a replaced one too) always."""
        return metered if step == self.budget else media if step == self.prepare_input else True

    async def open(self, record: TurnRecord) -> TurnExit | None:
        """Take the session's turn lock, drop resumed messages answered meanwhile, take the
        warm session (a one-shot turn gets a transient one, never cached)."""
        runtime = self.rt
        record.agent = runtime.agents[
            record.last.agent
        ]  # as configured when the turn began (reloads swap it)
        record.deadline_s = TurnTools.deadline_s(runtime.config.agents[record.last.agent])
        first, control = record.batch[0], record.control
        lock = runtime.turn_lock.hold(
            record.last.session,
            owner=runtime.owner,
            ttl=runtime.config.gateway.turn_lock.ttl_s,
            after=first.msg.key,  # a lock passed on with this message is this turn's
            give_way=lambda: control.giving_way,
            batch=[job.msg.key for job in record.batch],
        )
        try:
            record.lease = await record.held.enter_async_context(lock)
        except GaveWay:  # an earlier message of the session was taken up: it goes first
            return TurnExit.RETRY
        except StateUnavailable:  # fail closed: never two turns of one session
            voice = self.voices.for_message(record.last.msg, record.last.agent)
            await self.state_away.notify(record.batch, voice)
            raise  # the journal keeps the batch; the guard's resume answers it
        record.batch = await still_open(runtime, self.answering, record.batch, self.redeliver)
        if not record.batch:
            return TurnExit.SETTLED
        record.new = [user_message(job) for job in record.batch]
        last, now = record.last, runtime.clock.time()
        if record.one_shot:  # e.g. a webhook delivery without a session template
            record.session = runtime.cache.transient(last.session, now)
        else:
            record.session = await runtime.cache.acquire(last.session, now)
        runtime.metrics.active_turns.inc()
        record.held.callback(self._close, record)
        return None

    def _close(self, record: TurnRecord) -> None:
        self.rt.metrics.active_turns.dec()
        if not record.one_shot and record.session is not None:
            self.rt.cache.release(record.session)

    async def prepare(self, record: TurnRecord) -> TurnExit | None:
        """The reply's channel adapter, and a streaming draft where the channel edits in place
        (else, for an agent that shows its tools, a status line the answer replaces)."""
        target = record.last.target
        adapter = await self.rt.channels.ready_adapter(target.channel) if target else None
        record.adapter = adapter
        if adapter is not None and target is not None:
            caps, runtime = adapter.capabilities, self.rt
            if caps.stream and caps.edits:
                record.stream = StreamingReply(
                    adapter, target, runtime.delivery, runtime.clock, caps.min_edit_interval_s
                )
            elif caps.edits and shows_tools(runtime.config.agents.get(record.last.agent)):
                record.status = StatusLine(
                    adapter, target, runtime.delivery, runtime.clock, caps.min_edit_interval_s
                )
        return None

    async def prepare_input(self, record: TurnRecord) -> TurnExit | None:
        """The media step: the batch's attachments fetched by their channel and understood
        (image parts, transcripts, document text, coded notes); rewrites ``rec.new``."""
        if record.failure is not None or not any(job.msg.attachments for job in record.batch):
            return None
        runtime, last = self.rt, record.last
        channel = last.msg.channel
        fetcher = await runtime.channels.file_source(channel)
        msgs = [job.msg for job in record.batch]
        agent_cfg = runtime.config.agents[last.agent]
        files = runtime.channels.registry.descriptor(last.msg.platform).limits.files
        cap = files.max_download_bytes if files is not None else None
        meter = record.metered.meter if record.metered is not None else None
        record.media = await prepare_turn_input(
            msgs, fetcher, agent_cfg, runtime.state_dir, cap, meter
        )
        record.new = record.media.apply(record.new)
        for o in record.media.outcomes:
            runtime.metrics.media.labels(channel=channel, kind=o.kind, reason=o.reason.value).inc()
        return None

    async def call_agent(self, record: TurnRecord) -> TurnExit | None:
        """Run the agent inline under its timeout while the channel shows life (reaction ack,
        typing); a cancelled call ends as its `TurnExit` or as the /stop failure."""
        runtime, last, adapter = self.rt, record.last, record.adapter
        if record.failure is not None:
            return None  # refused by a spend budget: no model call
        agent = record.agent
        assert agent is not None
        turn = self._turn_for(record)
        prewarm = getattr(agent, "prewarm", None)  # a one-time warm-up must not eat the timeout
        if prewarm is not None:
            await prewarm()
        started = runtime.clock.monotonic()
        if adapter is not None and AckMode.REACTION in adapter.capabilities.ack:
            record.reacts = True
            record.ack = asyncio.ensure_future(adapter.acknowledge(last.msg))
        async with typing_while(adapter, last.target, runtime.clock):
            ended = await self._run_agent(record, agent, turn)
        if ended is not None:
            return ended
        if record.ack is not None:
            await asyncio.gather(record.ack, return_exceptions=True)
        record.agent_s = runtime.clock.monotonic() - started
        runtime.metrics.turn_seconds.labels(agent=last.agent).observe(record.agent_s)
        return None

    async def budget(self, record: TurnRecord) -> TurnExit | None:
        """Ask the spend budgets how the turn may run: refused (no model call, not even for its
        media), or on which agent, every model call metered."""
        if self.meters is None:
            return None
        last = record.last
        metered = record.metered = await self.meters.begin(
            last.msg, last.agent, last.session, last.target
        )
        if metered.release is not None:  # a reservation no model call used goes back
            record.held.push_async_callback(metered.release)
        if metered.refusal is not None:
            record.failure = metered.refusal
            return None
        cheaper = self.rt.agents.get(metered.agent)
        if metered.agent != last.agent and cheaper is not None:
            record.agent = cheaper
            self.providers.agent_event(
                EventName.MODEL_FALLBACK,
                {
                    "agent": last.agent,
                    "to_agent": metered.agent,
                    "reason": FailureReason.BUDGET_EXHAUSTED.value,
                    "fallback_index": 0,
                },
            )
        return None

    def _turn_for(self, record: TurnRecord) -> Turn:
        last, session, stream = record.last, record.session, record.stream
        assert session is not None
        shown = stream or record.status
        progress = None
        if shown is not None:
            voices = self.voices
            progress = worded(shown.progress, lambda: voices.for_message(last.msg, last.agent))
        tools = record.tools = TurnTools(self.rt.tools, self.providers.agent_event, progress)
        record.history_len = len(session.transcript)
        secrets = turn_secrets(self.rt)
        # Document text, transcripts and pasted input: masked before the model or the
        # transcript sees them.
        record.new = masked(record.new, masker_for(secrets))
        return Turn(
            session=last.session,
            history=tuple(session.transcript),
            new=record.new,
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
            parts=record.media.parts,
            approve=chat_approver(
                self.rt.config.agents.get(record.last.agent), self.approvals, record
            ),
            before_model=functools.partial(self._fence, record),
            secrets=secrets,
            meter=record.metered.meter if record.metered is not None else None,
        )

    async def _fence(self, record: TurnRecord) -> None:
        """Right before each model request: is the session's turn lock still this turn's? One
        compare-and-extend in the lock's store. A replica that stalled past the lock's TTL finds
        it lost (another replica may be running the session): no request, the batch goes back
        through the open step (lock, ownership, session) instead."""
        if record.lease is None:
            return
        ttl = self.rt.config.gateway.turn_lock.ttl_s
        if not await self.rt.turn_lock.renew(record.lease, ttl):
            raise TurnFenced(record.lease.key)

    async def _run_agent(self, record: TurnRecord, agent: Agent, turn: Turn) -> TurnExit | None:
        """The agent call itself (the slot for a tool loop). It runs inline, not in a task of its
        own: /stop and the interrupt policy cancel this task, which lands here."""
        kept = self.unsaved.take([job.msg.key for job in record.batch], record.history_len)
        if kept is not None:
            log.info(
                "answer kept from a run whose state write failed; the model is not asked again",
                extra={"session": record.last.session, "key": record.last.msg.key},
            )
            record.reply = kept
            return None
        control = record.control
        control.enter_agent()
        try:
            async with asyncio.timeout(record.deadline_s) as record.deadline:
                reply = masked_reply(await agent.run(turn), turn.secrets)
            reply = await self._spoken(record, reply)  # its own timeout; never fails the turn
            voice = record.voice_in(self.voices)
            record.reply = await store_files(reply, self.rt.delivery.files, voice)
        except asyncio.CancelledError:
            if control.reason is None:
                raise
            ended = CANCEL_EXITS.get(control.reason)
            if ended is not None:
                return ended
            record.failure = AgentError(FailureReason.CANCELLED, "stopped by /stop")
        except TurnFenced:
            log.warning(
                "turn lock lost before a model request; running the batch again",
                extra={"session": record.last.session, "key": record.last.msg.key},
            )
            return TurnExit.RETRY
        except StateUnavailable:
            raise  # fail closed, as when the lock cannot be taken: callers answer "retry later"
        except AgentError as exc:
            record.failure = exc
        except TimeoutError:
            record.failure = AgentError(FailureReason.TIMEOUT, "agent exceeded timeout_s")
        except Exception as exc:
            log.exception(
                "agent raised", extra={"agent": record.last.agent, "session": turn.session}
            )
            record.failure = AgentError(FailureReason.UNKNOWN, type(exc).__name__)
        finally:
            control.leave_agent()
        return None

    async def _spoken(self, record: TurnRecord, reply: AgentReply) -> AgentReply:
        """The answer with a voice note when the agent's `voice_reply` asks for one."""
        config = self.rt.config.agents.get(record.last.agent)
        if not isinstance(config, LiteLLMAgentConfig) or config.voice_reply == "never":
            return reply
        heard = any(a.kind == "voice" for job in record.batch for a in job.msg.attachments)
        meter = record.metered.meter if record.metered is not None else None
        spoken, reason = await with_voice(reply, config, user_sent_voice=heard, meter=meter)
        channel = record.last.msg.channel
        if reason is None:
            self.rt.metrics.count("voice_reply_sent", channel=channel)
        elif reason in SPEECH_FAILURES:
            self.rt.metrics.count(reason.value, channel=channel)
        return spoken

    async def conclude(self, record: TurnRecord) -> TurnExit | None:
        """The outcome, and one journal write: ANSWERED with the reply kept (a restart re-sends
        it), or DONE at once when nothing is left to deliver (a sync webhook answers in its HTTP
        response); the transcript lines go in the same write where the backend can."""
        runtime, last, session = self.rt, record.last, record.session
        assert session is not None
        voice = record.voice_in(self.voices)
        kind, message, reason = decide(record.reply, record.failure, runtime.config.gateway, voice)
        message = record.media.annotate(message, voice)  # a refused or failed file is never silent
        self._tell_operator(record)
        stopped = record.control.reason is CancelReason.STOP
        final = last.target is None and record.stream is None
        outcome = record.outcome = Outcome(kind, message, reason, stopped=stopped, final=final)
        usage = turn_usage(record)
        # A one-shot session is never read again; the journal keeps its message and reply.
        persist = (
            [] if record.one_shot else to_persist(record.new, kind, record.reply, record.failure)
        )
        reply = answered(outcome, persist) | record.media.journal_fields() | usage
        if record.tools is not None:
            record.tools.record(reply)  # the tool trail `chatgate why` shows
        keys = [j.msg.key for j in record.batch]
        mark = JournalMark(
            JournalState.DONE if final else JournalState.ANSWERED,
            runtime.clock.time(),
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
            if record.reply is not None and record.failure is None:
                # keyed by the warm transcript as this failure leaves it (the lines may be held
                # unflushed): a re-run that starts from exactly there reuses the answer
                self.unsaved.keep(keys, len(session.transcript), record.reply)
            raise
        for job in record.batch:  # what this process still holds carries its answer from here
            job.stored_reply = reply  # (a store that loses its data gets it back answered)
        return None

    def _tell_operator(self, record: TurnRecord) -> None:
        """The operator's side of a failure the chat was told about: the log line and, when
        configured, the operator chat (rate-limited)."""
        failed = failure_of(record.reply, record.failure)
        if failed is None:
            return
        last = record.last
        log.warning(
            "turn failed",
            extra={"session": last.session, "reason": failed.reason.value, "detail": failed.detail},
        )
        self.notifier.failed(failed, f"{last.msg.channel}:{last.msg.chat_id}", last.agent)

    async def deliver(self, record: TurnRecord) -> TurnExit | None:
        """Deliver (or leave the answer to the replica now holding the channel), mark the
        reaction done, mark the batch DONE and resolve its futures."""
        runtime, last, outcome, adapter = self.rt, record.last, record.outcome, record.adapter
        assert outcome is not None
        runtime.metrics.turns.labels(
            agent=last.agent, outcome=outcome.kind.value, reason=outcome.reason
        ).inc()
        if record.agent is not None:
            self.providers.track(
                record.agent.provider_id(), last.agent, record.failure, record.reply
            )
        if not outcome.final and await self.answering.hand_off(last):
            report = DeliveryReport(DeliveryStatus.HANDED_OFF)
        else:
            drafted = record.stream or record.status  # the answer replaces what was shown
            voice = record.voice_in(self.voices)
            report = await self.answering.deliver(
                last, outcome.shown, record.agent_s, drafted, voice
            )
        record.report = report
        handed = self.answering.handed_off(last.msg.key)
        adopted = self.answering.adopted_elsewhere(last.msg.key)
        if handed and record.lease is not None:
            runtime.turn_lock.pass_on(record.lease, last.msg.key)  # the order goes with it
        elif adopted and record.lease is not None:  # the adopter's turn of this batch is next
            runtime.turn_lock.pass_on(record.lease, record.batch[0].msg.key)
        if adapter is not None and record.reacts:
            failed = outcome.kind is OutcomeKind.FAILURE or report.kind is not None
            await asyncio.gather(
                adapter.acknowledge_done(last.msg, failed=failed), return_exceptions=True
            )
        await self.answering.finish(
            record.batch,
            Stage.TURN,
            outcome.reason,
            outcome.message,
            report,
            journaled=outcome.final,
        )
        return None

    async def announce(self, record: TurnRecord) -> TurnExit | None:
        """The turn_finished event and the turn's one log line."""
        runtime, last, outcome, report, reply = (
            self.rt,
            record.last,
            record.outcome,
            record.report,
            record.reply,
        )
        assert outcome is not None and report is not None
        runtime.events.emit(
            EventName.TURN_FINISHED,
            runtime.clock.time(),
            channel=last.msg.channel,
            agent=last.agent,
            outcome=outcome.kind.value,
            reason=outcome.reason,
            delivery=report.status.value,
            agent_s=record.agent_s,
            latency_s=runtime.clock.monotonic() - last.accepted_at,  # accepted → delivered
        )
        log_fields(
            log,
            logging.INFO,
            "turn",
            {
                "channel": last.msg.channel,
                "chat": last.msg.chat_id,
                "key": last.msg.key,
                "session": last.session,
                "agent": last.agent,
                "model": reply.model if reply else None,
                "messages": len(record.batch),
                "outcome": outcome.kind.value,
                "reason": outcome.reason,
                "delivery": report.status.value,
                "send_error": report.kind.value if report.kind else None,
                "agent_ms": round(record.agent_s * 1000, 1),
            },
        )
        return None
