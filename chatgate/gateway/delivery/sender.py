"""Delivery: adapt → render → send with retry per SendErrorKind; dead targets and the DLQ.

Permanent failures are never retried; forbidden/not-found also mark the target dead so later
replies skip the platform. Anything undelivered lands in the DLQ with the reason, from where
`chatgate dlq replay` can send it again.
"""

from __future__ import annotations

import logging
import random
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass
from typing import Protocol

from chatgate import tracing
from chatgate.channels.base import ChannelAdapter, Rendered
from chatgate.channels.files import DATA_KEY, upload_of
from chatgate.clock import Clock
from chatgate.gateway.events import EventBus, EventName
from chatgate.gateway.metrics import Metrics
from chatgate.media.outgoing import FileMissing, OutgoingFiles
from chatgate.model.messages import SendResult, Target
from chatgate.model.outbound import OutboundMessage, message_to_dict
from chatgate.model.reasons import DegradeReason, DeliveryStatus, SendErrorKind
from chatgate.model.results import DeliveryReport
from chatgate.model.text_ids import TextId
from chatgate.policies.send_errors import DEAD_TARGET_KINDS, RetryPolicy, decide_retry
from chatgate.presentation.degrade import CallbackStore, DegradedDelivery, adapt, with_note
from chatgate.state.protocols import DeadLetterStore, DeadTargetStore
from chatgate.texts.voice import Voice

log = logging.getLogger("chatgate.delivery")
MAX_CHAT_MOVES = 3  # a chat migrates once (group → supergroup); more means something is wrong


class VoiceLookup(Protocol):
    def for_channel(self, channel: str) -> Voice: ...


class ChannelLookup(Protocol):
    async def ready_adapter(self, name: str) -> ChannelAdapter | None: ...

    async def connection_left(self, name: str) -> bool: ...


@dataclass
class _Job:
    """One delivery in progress: what is sent where, its hooks, and the attempts so far (the
    target moves when the platform migrated the chat)."""

    target: Target
    message: OutboundMessage
    inbound_key: str | None
    session: str | None
    first_chunk: int
    on_first_send: Callable[[], None] | None
    edit_ids: Sequence[str]
    still_mine: Callable[[], Awaitable[bool]] | None
    may_send: Callable[[], Awaitable[bool]] | None
    hand_off: Callable[[], Awaitable[bool]] | None
    attempts: int = 0


class Delivery:
    def __init__(
        self,
        channels: ChannelLookup,
        dlq: DeadLetterStore,
        dead: DeadTargetStore,
        policy: RetryPolicy,
        clock: Clock,
        events: EventBus,
        metrics: Metrics,
        callback_store: CallbackStore | None = None,
        rng: random.Random | None = None,
        files: OutgoingFiles | None = None,
    ) -> None:
        self.channels = channels
        self.dlq = dlq
        self.dead = dead
        self.policy = policy
        self.clock = clock
        self.events = events
        self.metrics = metrics
        self.callback_store = callback_store
        self.rng = rng or random.Random()
        self.files = files
        self.voices: VoiceLookup | None = None  # set by the builder: notices in the chat's words

    def apply(self, policy: RetryPolicy) -> None:
        """Hot reload of gateway.delivery."""
        self.policy = policy

    async def deliver(
        self,
        target: Target,
        message: OutboundMessage,
        *,
        inbound_key: str | None = None,
        session: str | None = None,
        first_chunk: int = 0,
        on_first_send: Callable[[], None] | None = None,
        edit_ids: Sequence[str] = (),
        still_mine: Callable[[], Awaitable[bool]] | None = None,
        describe: Callable[[DegradedDelivery], str] | None = None,
        may_send: Callable[[], Awaitable[bool]] | None = None,
        hand_off: Callable[[], Awaitable[bool]] | None = None,
    ) -> DeliveryReport:
        """Send ``message`` to ``target``; never raises for platform failures.

        With ``edit_ids`` (a streamed draft) the first chunks replace those messages in place.
        ``may_send`` (else ``still_mine``) is asked right before the first chunk goes out: False
        (another replica adopted the message while this one stalled, or its stalled first
        replica sent it) sends nothing (`handed_off`); ``still_mine`` before dead-lettering.
        ``describe`` words the note on what the channel could not show, for the reader (their
        language). ``hand_off`` is asked when the channel has no connection here, or the first
        chunk failed because its connection left this replica mid-send (its lease moved): True
        leaves the answer to the replica serving the channel next (`handed_off`), not the DLQ.
        """
        job = _Job(
            target, message, inbound_key, session, first_chunk, on_first_send, edit_ids,
            still_mine, may_send, hand_off,
        )  # fmt: skip
        adapter = await self.channels.ready_adapter(target.channel)
        if adapter is None:
            return await self._no_channel(job)
        dead_kind = await self.dead.kind(target)
        if dead_kind is not None:
            return await self._failed(
                job, SendErrorKind(dead_kind), "target is marked dead", first_chunk, dead=True
            )
        chunks, degraded = self.render(adapter, target, message, describe)
        ids: list[str] = []
        for index in range(first_chunk, len(chunks)):
            if index == first_chunk and not await self._first_goes(job):
                return self._not_mine(job.target, inbound_key, session)
            sent = await self._chunk(adapter, job, chunks[index], index)
            if isinstance(sent, DeliveryReport):
                return sent
            ids.extend(sent)
        return await self._sent(job, chunks, ids, degraded)

    async def _no_channel(self, job: _Job) -> DeliveryReport:
        """No connection here for the channel: not this replica's answer any more, or left to
        the replica now serving the channel (this one lost its lease), else the DLQ."""
        if job.still_mine is not None and not await job.still_mine():
            return self._not_mine(job.target, job.inbound_key, job.session)
        if job.hand_off is not None and await job.hand_off():
            return DeliveryReport(DeliveryStatus.HANDED_OFF, attempts=job.attempts)
        error = f"channel '{job.target.channel}' is not running"
        return await self._failed(job, SendErrorKind.TRANSIENT, error, job.first_chunk)

    async def _first_goes(self, job: _Job) -> bool:
        """Right before the first chunk: is the answer still this replica's to send?"""
        claim = job.may_send or job.still_mine
        if claim is not None and not await claim():
            return False
        if job.on_first_send is not None:
            job.on_first_send()
        return True

    async def _chunk(
        self, adapter: ChannelAdapter, job: _Job, chunk: Rendered, index: int
    ) -> list[str] | DeliveryReport:
        """Send one chunk: its message ids, or the report that ends the delivery."""
        edit_id = job.edit_ids[index] if index < len(job.edit_ids) else None
        if upload_of(chunk) is not None:
            chunk, edit_id = await self._with_bytes(adapter, job.target, chunk), None
        left = job.hand_off is not None and index == job.first_chunk
        result, attempts, job.target = await self.send_chunk(
            adapter, job.target, chunk, edit_id=edit_id, stop_if_left=left
        )
        job.attempts += attempts
        if result.ok:
            return list(result.message_ids)
        if left and job.hand_off is not None and await job.hand_off():
            return DeliveryReport(DeliveryStatus.HANDED_OFF, attempts=job.attempts)
        kind = result.kind or SendErrorKind.UNKNOWN
        dead = kind in DEAD_TARGET_KINDS
        if dead:
            await self.dead.mark(job.target, kind, result.error, self.clock.time())
        return await self._failed(job, kind, result.error, index, dead=dead, attempts=attempts)

    async def _failed(
        self,
        job: _Job,
        kind: SendErrorKind,
        error: str,
        chunk: int,
        *,
        dead: bool = False,
        attempts: int = 0,
    ) -> DeliveryReport:
        """Record a delivery that ended undelivered; ``attempts`` are the failed chunk's (the
        earlier chunks were sent)."""
        return await self._undelivered(
            job.target,
            job.message,
            kind,
            error,
            attempts,
            job.inbound_key,
            job.session,
            chunk,
            status=DeliveryStatus.DEAD_TARGET if dead else DeliveryStatus.UNDELIVERED,
        )

    async def _sent(
        self, job: _Job, chunks: list[Rendered], ids: list[str], degraded: tuple[str, ...]
    ) -> DeliveryReport:
        target = job.target
        if self.files is not None and any(upload_of(c) for c in chunks):
            await self.files.discard(job.message)  # uploaded: linked files expire on their own
        self.metrics.delivery.labels(channel=target.channel, status="sent", kind="").inc()
        self.events.emit(
            EventName.MESSAGE_SENT,
            self.clock.time(),
            target=target.address,
            message_ids=ids,
            inbound_key=job.inbound_key,
            session=job.session,
            degraded=list(degraded),
        )
        return DeliveryReport(
            DeliveryStatus.SENT, ids, attempts=job.attempts, degraded=degraded, target=target
        )

    def _not_mine(self, target: Target, key: str | None, session: str | None) -> DeliveryReport:
        log.warning(
            "answer not sent: another replica owns the message now",
            extra={"channel": target.channel, "key": key, "session": session},
        )
        return DeliveryReport(DeliveryStatus.HANDED_OFF)

    def render(
        self,
        adapter: ChannelAdapter,
        target: Target,
        message: OutboundMessage,
        describe: Callable[[DegradedDelivery], str] | None = None,
    ) -> tuple[list[Rendered], tuple[str, ...]]:
        """Adapt to the channel's limits (recording what degraded), then render natively."""
        adapted, report = adapt(
            message, adapter.capabilities.limits, callback_store=self.callback_store
        )
        degraded: tuple[str, ...] = ()
        if report is not None:
            adapted = with_note(adapted, report, describe)
            degraded = tuple(r.value for r in report.reasons)
            for reason in degraded:
                self.metrics.degraded.labels(channel=target.channel, reason=reason).inc()
        return adapter.render(adapted), degraded

    async def _with_bytes(
        self, adapter: ChannelAdapter, target: Target, chunk: Rendered
    ) -> Rendered:
        """An upload chunk with its stored bytes; a file no longer stored becomes a notice."""
        upload = upload_of(chunk)
        assert upload is not None
        file = upload[0]
        try:
            if self.files is None:
                raise FileMissing("no outgoing-file store")
            data = await self.files.read(file.ref)
        except FileMissing as exc:
            reason = DegradeReason.FILE_MISSING.value
            self.metrics.degraded.labels(channel=target.channel, reason=reason).inc()
            log.warning("reply file missing", extra={"file": file.name, "error": str(exc)})
            voice = self.voices.for_channel(target.channel) if self.voices else Voice()
            notice = OutboundMessage.from_text(voice.text(TextId.FILE_GONE, name=file.name))
            return adapter.render(notice)[0]
        return Rendered(chunk.text, chunk.format, {**chunk.native, DATA_KEY: data})

    async def send_chunk(
        self,
        adapter: ChannelAdapter,
        target: Target,
        chunk: Rendered,
        *,
        edit_id: str | None = None,
        stop_if_left: bool = False,
    ) -> tuple[SendResult, int, Target]:
        """Send (or edit in place) one chunk, retrying per SendErrorKind; returns the final target.
        ``stop_if_left``: no retry once the channel's connection has left this replica (its
        client is stopped; another replica sends it)."""
        attempt = 0
        moves = 0
        upload = upload_of(chunk) is not None
        while True:
            attempt += 1
            timed_out = False
            try:
                if edit_id is not None:
                    result = await adapter.edit(target, edit_id, chunk)
                else:
                    result = await adapter.send(target, chunk)
            except Exception as exc:
                result = adapter.classify_error(exc)
                timed_out = upload and result.timed_out
            if result.ok:
                return result, attempt, target
            if result.moved_to is not None and moves < MAX_CHAT_MOVES:
                moves += 1
                log.info(
                    "chat moved", extra={"old": target.address, "new": result.moved_to.address}
                )
                target = result.moved_to
                continue
            kind = result.kind or SendErrorKind.UNKNOWN
            decision = decide_retry(
                kind,
                attempt,
                self.policy,
                result.retry_after_s,
                self.rng,
                upload_timed_out=timed_out,
            )
            left = stop_if_left and decision.retry
            if left and await self.channels.connection_left(target.channel):
                return result, attempt, target
            if not decision.retry:
                if timed_out:
                    error = "the upload timed out and may have arrived; not sent again"
                    result = SendResult.failed(kind, error)
                return result, attempt, target
            self.metrics.send_retries.labels(channel=target.channel, kind=kind.value).inc()
            tracing.current().event(
                "chatgate.send_retry", kind=kind.value, attempt=attempt, delay_s=decision.delay_s
            )
            log.info(
                "send failed, retrying",
                extra={
                    "target": target.address,
                    "kind": kind.value,
                    "attempt": attempt,
                    "delay_s": round(decision.delay_s, 2),
                },
            )
            await self.clock.sleep(decision.delay_s)

    async def _undelivered(
        self,
        target: Target,
        message: OutboundMessage,
        kind: SendErrorKind,
        error: str,
        attempts: int,
        inbound_key: str | None,
        session: str | None,
        first_chunk: int,
        *,
        status: DeliveryStatus = DeliveryStatus.UNDELIVERED,
    ) -> DeliveryReport:
        tracing.current().fail(status.value)  # dead-lettered: the delivery step failed
        payload = message_to_dict(message)
        payload["first_chunk"] = first_chunk
        entry = await self.dlq.add(
            target,
            payload,
            kind,
            error,
            attempts,
            self.clock.time(),
            inbound_key=inbound_key,
            session=session,
        )
        self.metrics.delivery.labels(
            channel=target.channel, status=status.value, kind=kind.value
        ).inc()
        self.metrics.dlq_size.set(await self.dlq.count())
        log.warning(
            "reply undelivered",
            extra={
                "target": target.address,
                "kind": kind.value,
                "status": status.value,
                "dlq_id": entry,
                "error": error[:200],
            },
        )
        self.events.emit(
            EventName.MESSAGE_UNDELIVERED,
            self.clock.time(),
            target=target.address,
            kind=kind.value,
            error=error[:200],
            dlq_id=entry,
            inbound_key=inbound_key,
            session=session,
        )
        return DeliveryReport(status, kind=kind, error=error, attempts=attempts, target=target)
