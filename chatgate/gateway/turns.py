"""Runs one batch from a session queue: the agent turn, its outcome, persistence and delivery."""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any, TypeGuard

from chatgate.agents.base import AgentError, AgentReply, ChatMessage, Turn
from chatgate.channels.base import ChannelAdapter
from chatgate.channels.outcome import Stage, TurnResult
from chatgate.channels.types import AckMode
from chatgate.gateway.degraded import OwnerKind
from chatgate.gateway.delivery import DeliveryReport
from chatgate.gateway.events import EventName
from chatgate.gateway.operator_notify import OperatorNotifier
from chatgate.gateway.presence import typing_while
from chatgate.gateway.runtime import Runtime
from chatgate.gateway.session_queue import CancelReason, Job, JobKind, TurnControl
from chatgate.gateway.sessions import WarmSession
from chatgate.gateway.streaming import StreamingReply
from chatgate.gateway.voices import Voices
from chatgate.policies.failure import failure_reply
from chatgate.policies.outcome import EMPTY_REPLY_FALLBACK, classify_final
from chatgate.policies.reasons import DeliveryStatus, FailureReason, OutcomeKind
from chatgate.presentation.model import OutboundMessage, message_from_dict, message_to_dict
from chatgate.state.protocols import StateUnavailable, TranscriptAppend, TurnJournal
from chatgate.state.records import JournalState
from chatgate.texts import TextId

log = logging.getLogger("chatgate.turn")
AUTH_FAILURES = frozenset({FailureReason.AUTH_PERMANENT, FailureReason.AUTH_EXPIRED})


class TurnRunner:
    def __init__(self, rt: Runtime) -> None:
        self.rt = rt
        self.voices = Voices(rt)
        self.notifier = OperatorNotifier(rt)
        self._checked: tuple[object, bool] = (None, False)

    def _one_write(self, journal: object) -> TypeGuard[TurnJournal]:
        """Whether ``journal`` writes a turn in one call (a Protocol isinstance costs ~5 µs)."""
        if self._checked[0] is not journal:
            self._checked = (journal, isinstance(journal, TurnJournal))
        return self._checked[1]

    async def execute(self, batch: list[Job], control: TurnControl) -> bool:
        kind = batch[0].kind
        if kind is JobKind.TURN:
            return await self._turn(batch, control)
        if kind is JobKind.OBSERVE:
            await self._observe(batch[0])
        elif kind is JobKind.NEW_SESSION:
            await self._new_session(batch[0])
        elif kind is JobKind.REDELIVER:
            await self._redeliver(batch[0])
        return True

    async def _turn(self, batch: list[Job], control: TurnControl) -> bool:
        rt = self.rt
        last = batch[-1]
        agent = rt.agents[last.agent]
        agent_cfg = rt.config.agents[last.agent]
        new = [_user_message(job) for job in batch]
        reply: AgentReply | None = None
        failure: AgentError | None = None
        async with contextlib.AsyncExitStack() as held:
            try:
                await held.enter_async_context(
                    rt.turn_lock.hold(
                        last.session, owner=rt.owner, ttl=rt.config.gateway.turn_lock.ttl_s
                    )
                )
            except StateUnavailable as exc:  # fail closed: never two turns of one session
                await self._lock_unavailable(batch, exc)
                return True
            if any(job.resumed for job in batch):
                batch = await self._still_open(batch)
                if not batch:
                    return True
                last, new = batch[-1], [_user_message(job) for job in batch]
            one_shot = last.ephemeral  # e.g. a webhook delivery without a session template
            session = (
                rt.cache.transient(last.session, rt.clock.time())
                if one_shot
                else await rt.cache.acquire(last.session, rt.clock.time())
            )
            rt.metrics.active_turns.inc()
            try:
                adapter = (
                    await rt.channels.ready_adapter(last.target.channel) if last.target else None
                )
                stream = self._stream_for(last, adapter)
                turn = Turn(
                    session=last.session,
                    history=tuple(session.transcript),
                    new=new,
                    channel=last.msg.channel,
                    sender_id=last.msg.sender_id,
                    on_delta=stream.delta if stream is not None else None,
                    on_event=self._agent_event,
                    metadata={"chat_id": last.msg.chat_id, "thread_id": last.msg.thread_id},
                )
                # A one-time warm-up (the litellm import) must not eat the turn's timeout.
                prepare = getattr(agent, "prewarm", None)
                if prepare is not None:
                    await prepare()
                started = rt.clock.monotonic()
                reacts = adapter is not None and AckMode.REACTION in adapter.capabilities.ack
                ack = (
                    asyncio.ensure_future(adapter.acknowledge(last.msg))
                    if adapter is not None and reacts
                    else None
                )
                typing = typing_while(adapter, last.target, rt.clock)
                async with typing:
                    # The agent runs inline (no task of its own); while it does, /stop and the
                    # interrupt policy cancel this task, which lands inside the agent call.
                    control.enter_agent()
                    try:
                        async with asyncio.timeout(agent_cfg.timeout_s + 5.0):
                            reply = await agent.run(turn)
                    except asyncio.CancelledError:
                        if control.reason is None:
                            raise
                        if control.reason is CancelReason.INTERRUPT:
                            return False
                        if control.reason is CancelReason.SHUTDOWN:
                            return True  # left pending in the journal; the next start resumes it
                        failure = AgentError(FailureReason.CANCELLED, "stopped by /stop")
                    except AgentError as exc:
                        failure = exc
                    except TimeoutError:
                        failure = AgentError(FailureReason.TIMEOUT, "agent exceeded timeout_s")
                    except Exception as exc:
                        log.exception(
                            "agent raised", extra={"agent": last.agent, "session": last.session}
                        )
                        failure = AgentError(FailureReason.UNKNOWN, type(exc).__name__)
                    finally:
                        control.leave_agent()
                if ack is not None:
                    await asyncio.gather(ack, return_exceptions=True)
                agent_s = rt.clock.monotonic() - started
                rt.metrics.turn_seconds.labels(agent=last.agent).observe(agent_s)
                outcome, message, reason = self._outcome(last, reply, failure)
                # A one-shot session is never read again; the journal keeps its message and reply.
                persist = [] if one_shot else _to_persist(new, outcome, reply, failure)
                answered = {
                    "outcome": outcome.value,
                    "reason": reason,
                    "message": message_to_dict(message) if message else None,
                    "persist": [m.to_dict() for m in persist],
                    "stopped": control.reason is CancelReason.STOP,
                }
                now = rt.clock.time()
                # Nothing to deliver (a sync webhook answers in its HTTP response): the answer is
                # also the final mark, one journal write instead of ANSWERED now and DONE later.
                final = last.target is None and stream is None
                suppress = control.reason is CancelReason.STOP or outcome is OutcomeKind.SILENCE
                unsent = DeliveryStatus.SUPPRESSED if suppress or message is None else None
                await self._record(
                    batch,
                    session,
                    persist,
                    JournalState.DONE if final else JournalState.ANSWERED,
                    now,
                    reason=reason,
                    reply=answered,
                    delivery=(unsent or DeliveryStatus.NO_TARGET).value if final else None,
                    delivery_ids=[] if final else None,
                )
            finally:
                rt.metrics.active_turns.dec()
                if not one_shot:
                    rt.cache.release(session)
        rt.metrics.turns.labels(agent=last.agent, outcome=outcome.value, reason=reason).inc()
        self._track_provider(agent.provider_id(), last.agent, failure, reply)
        if not final and await self._hand_off(last):
            report = DeliveryReport(DeliveryStatus.HANDED_OFF)
        else:
            report = await self._deliver(last, None if suppress else message, agent_s, stream)
        if adapter is not None and reacts:
            failed = outcome is OutcomeKind.FAILURE or report.kind is not None
            await asyncio.gather(
                adapter.acknowledge_done(last.msg, failed=failed), return_exceptions=True
            )
        await self._finish(batch, Stage.TURN, reason, message, report, journaled=final)
        rt.events.emit(
            EventName.TURN_FINISHED,
            rt.clock.time(),
            channel=last.msg.channel,
            agent=last.agent,
            outcome=outcome.value,
            reason=reason,
            delivery=report.status.value,
            agent_s=agent_s,
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
                "messages": len(batch),
                "outcome": outcome.value,
                "reason": reason,
                "delivery": report.status.value,
                "send_error": report.kind.value if report.kind else None,
                "agent_ms": round(agent_s * 1000, 1),
            },
        )
        return True

    async def _still_open(self, batch: list[Job]) -> list[Job]:
        """Drop resumed messages another replica answered meanwhile (it was only stalled, not
        dead, when this one adopted them; the session lock made this turn wait for it)."""
        keep = []
        for job in batch:
            entry = await self.rt.journal.get(job.msg.key) if job.resumed else None
            if entry is None or entry.state is JournalState.PENDING:
                keep.append(job)
                continue
            log.warning(
                "adopted message was answered by its first replica; not run again",
                extra={"key": job.msg.key, "session": job.session},
            )
            if not job.future.done():
                job.future.set_result(
                    TurnResult(
                        job.msg.key,
                        entry.stage or Stage.TURN.value,
                        entry.reason or "",
                        None,
                        entry.session,
                        entry.delivery,
                    )
                )
        return keep

    async def _lock_unavailable(self, batch: list[Job], exc: StateUnavailable) -> None:
        """The turn lock cannot be taken: answer `unavailable` rather than risk a second turn."""
        last = batch[-1]
        reason = FailureReason.UNAVAILABLE
        text = self.voices.for_message(last.msg, last.agent).failure(failure_reply(reason))
        message = OutboundMessage.from_text(text)
        log.warning(
            "turn lock unavailable; answered unavailable",
            extra={"session": last.session, "key": last.msg.key, "error": str(exc)},
        )
        self.rt.metrics.turns.labels(
            agent=last.agent, outcome=OutcomeKind.FAILURE.value, reason=reason.value
        ).inc()
        report = await self._deliver(last, message, 0.0)
        await self._finish(batch, Stage.TURN, reason.value, message, report)

    def _outcome(
        self, job: Job, reply: AgentReply | None, failure: AgentError | None
    ) -> tuple[OutcomeKind, OutboundMessage | None, str]:
        gateway = self.rt.config.gateway
        if failure is not None or reply is None:
            reason = failure.reason if failure is not None else FailureReason.UNKNOWN
            fr = failure_reply(reason, retry_after_s=failure.retry_after_s if failure else None)
            text = self.voices.for_message(job.msg, job.agent).failure(fr)
            log.warning(  # the operator's side of what the chat was told
                "turn failed",
                extra={"session": job.session, "reason": reason.value, "detail": fr.detail},
            )
            self.notifier.failed(fr, f"{job.msg.channel}:{job.msg.chat_id}", job.agent)
            return OutcomeKind.FAILURE, OutboundMessage.from_text(text), reason.value
        kind = classify_final(reply.text, frozenset(gateway.silence_markers))
        if kind is OutcomeKind.SILENCE:
            return kind, None, kind.value
        if kind is OutcomeKind.EMPTY:  # also blocks with nothing visible: no answer is no answer
            return (
                kind,
                OutboundMessage.from_text(gateway.empty_reply_text or EMPTY_REPLY_FALLBACK),
                kind.value,
            )
        return (
            OutcomeKind.TEXT,
            reply.message or OutboundMessage.from_text(reply.text),
            OutcomeKind.TEXT.value,
        )

    async def _record(
        self,
        batch: Sequence[Job],
        session: WarmSession,
        messages: Sequence[ChatMessage],
        state: JournalState,
        now: float,
        *,
        reason: str,
        reply: dict[str, Any],
        delivery: str | None,
        delivery_ids: list[str] | None,
    ) -> None:
        """The turn's answer in the journal and its lines in the transcript, in one write where
        the backend can (one round trip and one commit per turn)."""
        rt = self.rt
        journal = rt.journal
        if not self._one_write(journal):
            writes = [
                journal.settle(
                    j.msg.key,
                    state,
                    now,
                    stage=Stage.TURN,
                    reason=reason,
                    session=j.session,
                    reply=reply,
                    delivery=delivery,
                    delivery_ids=delivery_ids,
                )
                for j in batch
            ]
            if messages or session.unflushed:
                writes.append(self._persist(session, messages))
            await asyncio.gather(*writes)
            return
        pending = [*session.unflushed, *messages]
        failed = await journal.settle_turn(
            [j.msg.key for j in batch],
            state,
            now,
            stage=Stage.TURN,
            reason=reason,
            session=batch[-1].session,
            reply=reply,
            delivery=delivery,
            delivery_ids=delivery_ids,
            transcript=TranscriptAppend(session.key, session.epoch, pending) if pending else None,
        )
        if failed is None:
            session.unflushed.clear()
        else:
            await self._persist_failed(session, messages, failed)
        rt.cache.extend(session, messages)

    async def _persist(self, session: WarmSession, messages: Sequence[ChatMessage]) -> None:
        """Append to the store; on failure spill to a file, keep the session unflushed, raise an event."""
        rt = self.rt
        pending = [*session.unflushed, *messages]
        if not pending:
            return
        try:
            await rt.cache.store.append(session.key, session.epoch, pending, rt.clock.time())
            session.unflushed.clear()
        except Exception as exc:
            await self._persist_failed(session, messages, exc)
        rt.cache.extend(session, messages)

    async def _persist_failed(
        self, session: WarmSession, messages: Sequence[ChatMessage], exc: BaseException
    ) -> None:
        rt = self.rt
        path = await asyncio.to_thread(
            _spill, rt.state_dir, session, messages, rt.clock.time(), exc
        )
        session.unflushed.extend(messages)
        rt.metrics.persist_failed.inc()
        log.error(
            "session write failed; turn spilled to file",
            extra={
                "session": session.key,
                "spill": str(path) if path else None,
                "error": type(exc).__name__,
            },
        )
        rt.events.emit(
            EventName.SESSION_PERSIST_FAILED,
            rt.clock.time(),
            session=session.key,
            error=type(exc).__name__,
            spilled=path is not None,
            spill_path=str(path) if path else None,
        )

    async def _deliver(
        self,
        job: Job,
        message: OutboundMessage | None,
        agent_s: float,
        stream: StreamingReply | None = None,
    ) -> DeliveryReport:
        edit_ids: list[str] = []
        if stream is not None and stream.started:
            await stream.settle()
            edit_ids = stream.message_ids
            if message is None:  # stopped or silent after a visible draft: keep what was shown
                message = OutboundMessage.from_text(stream.text or "…")
        if message is None:
            return DeliveryReport(DeliveryStatus.SUPPRESSED)
        if job.target is None:
            return DeliveryReport(DeliveryStatus.NO_TARGET)
        rt = self.rt

        def first_send() -> None:
            overhead = rt.clock.monotonic() - job.accepted_at - agent_s
            rt.metrics.overhead_seconds.observe(max(0.0, overhead))

        return await rt.delivery.deliver(
            job.target,
            message,
            inbound_key=job.msg.key,
            session=job.session,
            on_first_send=first_send,
            edit_ids=edit_ids,
        )

    async def _hand_off(self, job: Job) -> bool:
        """The reply's channel is held by another replica now (this one lost the lease while
        the turn ran): leave the answered entry to that replica instead of the DLQ."""
        rt, target = self.rt, job.target
        if target is None or await rt.channels.ready_adapter(target.channel) is not None:
            return False  # (waits out a restart of the channel)
        if target.channel not in rt.channels.standby():
            return False
        if not await rt.journal.hand_off(job.msg.key):
            return False
        log.warning(
            "channel held by another replica; answer handed off",
            extra={"channel": target.channel, "key": job.msg.key, "session": job.session},
        )
        return True

    def _stream_for(self, job: Job, adapter: ChannelAdapter | None) -> StreamingReply | None:
        if adapter is None or job.target is None:
            return None
        caps = adapter.capabilities
        if not (caps.stream and caps.edits):
            return None
        rt = self.rt
        return StreamingReply(adapter, job.target, rt.delivery, rt.clock, caps.min_edit_interval_s)

    async def _finish(
        self,
        batch: Sequence[Job],
        stage: Stage,
        reason: str,
        message: OutboundMessage | None,
        report: DeliveryReport,
        *,
        journaled: bool = False,
    ) -> None:
        """Mark ``batch`` DONE (unless the answer already was, ``journaled``) and resolve it."""
        rt = self.rt
        now = rt.clock.time()
        failed = report.kind is not None
        for job in () if journaled else batch:  # nothing downstream waits for the DONE mark
            if report.status is DeliveryStatus.HANDED_OFF and job is batch[-1]:
                continue  # the replica holding the channel finishes it
            await rt.journal.finish(
                job.msg.key,
                now,
                stage=Stage.DELIVERY if failed else stage,
                reason=report.kind.value if report.kind is not None else reason,
                delivery=report.status.value,
                delivery_ids=report.message_ids,
            )
        text = message.plain_text if message is not None else None
        for job in batch:
            if not job.future.done():
                job.future.set_result(
                    TurnResult(
                        job.msg.key, stage.value, reason, text, job.session, report.status.value
                    )
                )

    async def _observe(self, job: Job) -> None:
        rt = self.rt
        session = await rt.cache.acquire(job.session, rt.clock.time())
        try:
            await self._persist(session, [_user_message(job)])
        finally:
            rt.cache.release(session)
        await self._finish(
            [job], Stage.OBSERVE, "observe", None, DeliveryReport(DeliveryStatus.SUPPRESSED)
        )

    async def _new_session(self, job: Job) -> None:
        rt = self.rt
        session = await rt.cache.acquire(job.session, rt.clock.time())
        try:
            epoch = await rt.cache.store.reset(job.session, rt.clock.time())
            rt.cache.reset(session, epoch)
        finally:
            rt.cache.release(session)
        message = OutboundMessage.from_text(
            self.voices.for_message(job.msg, job.agent).text(TextId.NEW_SESSION)
        )
        report = await self._deliver(job, message, 0.0)
        await self._finish([job], Stage.COMMAND, "new_session", message, report)

    async def _redeliver(self, job: Job) -> None:
        """Finish a turn a previous process answered but did not deliver (no second agent call)."""
        rt = self.rt
        stored = job.stored_reply or {}
        persist = [ChatMessage.from_dict(m) for m in stored.get("persist", [])]
        if persist:
            session = await rt.cache.acquire(job.session, rt.clock.time())
            try:
                session.transcript = [m for m in session.transcript if m.source != job.msg.key]
                await self._persist(session, persist)
            finally:
                rt.cache.release(session)
        data = stored.get("message")
        message = message_from_dict(data) if data and not stored.get("stopped") else None
        if await self._hand_off(job):
            report = DeliveryReport(DeliveryStatus.HANDED_OFF)
        else:
            report = await self._deliver(job, message, 0.0)
        await self._finish([job], Stage.TURN, str(stored.get("reason", "text")), message, report)

    def _track_provider(
        self, provider: str | None, agent: str, failure: AgentError | None, reply: AgentReply | None
    ) -> None:
        """A provider that rejects its credentials is degraded (read fail-closed); success clears it."""
        if provider is None:
            return
        rt = self.rt
        if failure is not None and failure.reason in AUTH_FAILURES:
            probe = rt.config.gateway.supervision.provider_probe_s
            rt.degraded.mark(
                OwnerKind.PROVIDER,
                provider,
                f"the model provider for agent '{agent}' rejected its credentials ({failure.reason.value})",
                f"fix agents.{agent}.api_key in gateway.yaml and run `chatgate reload`; "
                f"chatgate retries the provider every {probe:.0f} s",
                rt.clock.monotonic(),
                probe_every_s=probe,
            )
            log.error(
                "provider degraded",
                extra={"provider": provider, "agent": agent, "reason": failure.reason.value},
            )
        elif reply is not None and rt.degraded.clear(OwnerKind.PROVIDER, provider):
            log.info("provider recovered", extra={"provider": provider, "agent": agent})

    def _agent_event(self, name: str, data: Mapping[str, Any]) -> None:
        rt = self.rt
        if name == EventName.MODEL_FALLBACK:
            rt.metrics.fallbacks.labels(
                agent=str(data.get("agent")), reason=str(data.get("reason"))
            ).inc()
            log.warning("model fallback", extra=dict(data))
            rt.events.emit(EventName.MODEL_FALLBACK, rt.clock.time(), **data)


def _user_message(job: Job) -> ChatMessage:
    return ChatMessage("user", job.msg.text, job.msg.sender_name or None, job.msg.key)


def _to_persist(
    new: list[ChatMessage],
    outcome: OutcomeKind,
    reply: AgentReply | None,
    failure: AgentError | None,
) -> list[ChatMessage]:
    if failure is not None and failure.reason is FailureReason.CANCELLED:
        return []
    out = list(new)
    if reply is not None and outcome in (OutcomeKind.TEXT, OutcomeKind.SILENCE):
        out.append(ChatMessage("assistant", reply.text, None, new[-1].source))
    return out


def _spill(
    state_dir: Path,
    session: WarmSession,
    messages: Sequence[ChatMessage],
    now: float,
    exc: BaseException,
) -> Path | None:
    try:
        spill_dir = state_dir / "spill"
        spill_dir.mkdir(parents=True, exist_ok=True)
        path = spill_dir / "transcripts.jsonl"
        record = {
            "at": now,
            "session": session.key,
            "epoch": session.epoch,
            "error": type(exc).__name__,
            "messages": [m.to_dict() for m in messages],
        }
        with path.open("a", encoding="utf-8") as fh:
            fh.write(json.dumps(record, ensure_ascii=False) + "\n")
        return path
    except OSError:
        log.exception("spill file write failed too")
        return None
