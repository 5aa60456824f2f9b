"""A human takes over a chat: pause and resume it, reply in it as the bot, list paused chats.

The message-path side is `gate`, a gate right after admission: a message in a
paused chat is journaled and kept in the transcript as context (an observed message with reason
`paused`), never answered; an operator's `/bot off` / `/bot on` switches the chat. An operator's
reply goes out through the gateway's delivery (retries, dead targets, DLQ) and, once sent, joins
the session's transcript as an assistant line marked human, so the model reads it as its own
words on the next turn (also when it is sent later, by a DLQ replay). Pauses live in the state's
`PauseStore` (SQLite, or Redis for replicas).

A pause also reaches work already in the session queue: the chat's waiting turns are held (kept
as context, journaled `paused`), and with `gateway.takeover.interrupt_running` its running agent
call is cancelled the same way. `run` resumes pauses as they run out, on the injected clock, and
tells the operator chat; on Redis it also polls the store, so a pause taken on another replica
holds this replica's queued turns too.
"""

from __future__ import annotations

import asyncio
import logging
import uuid
from collections.abc import Awaitable
from typing import Any

from prometheus_client import Counter

from chatgate.feature.context import FeatureContext
from chatgate.feature.intake import Inbound, Verdict
from chatgate.feature.ports import HeldAs
from chatgate.model.chat import ChatMessage
from chatgate.model.errors import StateUnavailable
from chatgate.model.messages import InboundMessage, Target
from chatgate.model.outbound import OutboundMessage, message_from_dict
from chatgate.model.reasons import DeliveryStatus, TakeoverReason
from chatgate.model.results import DeliveryReport, Stage
from chatgate.model.text_ids import TextId
from chatgate.policies.schedules import SCHEDULE_PLATFORM
from chatgate.policies.takeover import (
    BotSwitch,
    Pause,
    chat_address,
    human_by,
    human_key,
    is_paused,
    kept_as_context,
    may_switch,
    next_resume,
    parse_switch,
    pause_until,
    ran_out_text,
    resume_due,
    session_chat,
)
from chatgate.state.outage import OutageReporter
from chatgate.state.protocols import PauseStore
from chatgate.state.records import DeadLetter, JournalState

log = logging.getLogger("chatgate.takeover")
HUMAN_META = "human"  # ChatMessage.meta key: who wrote this assistant line (not the model)
RECENT_SESSIONS = 200  # how far back a reply looks for the chat's conversation
MAX_TEXT = 20_000
POLL_S = 15.0  # replicas: how often the store is read for pauses taken elsewhere


class TakeoverError(ValueError):
    """An operator's request that cannot be done as asked (the message says why)."""


class Takeover:
    def __init__(self, context: FeatureContext) -> None:
        self.context = context
        self.voices = context.voices
        self.counter = Counter(
            "chatgate_takeover_total",
            "Human takeover: pauses, resumes, replies, and messages kept unanswered (paused)",
            ["channel", "reason"],
            registry=context.metrics,
        )
        # One process owns a SQLite state: its pauses are mirrored here, so a message in a chat
        # nobody paused costs no store read. Replicas (Redis) ask the store every time.
        self._mirror: dict[str, Pause] | None = None
        self._held: set[tuple[str, float]] = set()  # pauses whose queued turns were held here
        self._wake = asyncio.Event()  # a new pause: its end may come before the next wake-up
        self.notifier = context.operators
        self.next_resume_at: float | None = None  # when `run` next resumes a pause by itself
        self.outage = OutageReporter(log, "pause check", now=context.clock.monotonic)

    @property
    def store(self) -> PauseStore:
        return self.context.state.pauses

    async def open(self) -> None:
        if not self.context.state.leases.shared:
            self._mirror = {p.chat: p for p in await self.store.all()}

    # -- the message path -----------------------------------------------------------------

    def gate(self, inbound: Inbound) -> Awaitable[Verdict | None] | None:
        """A chat a human took over: its messages are kept as context, not answered; an
        operator's `/bot off` / `/bot on` switches it."""
        if inbound.held is not None:  # an album part: its album's turn decides
            return None
        msg = inbound.msg
        chat = chat_address(msg.channel, msg.chat_id)
        switch = parse_switch(msg.text) if msg.text.startswith("/") else None
        operators = self.context.config.gateway.operators
        if (
            switch is not None
            and not msg.sender_is_bot
            and may_switch(msg.channel, msg.sender_id, operators)
        ):
            return self._switch(inbound, chat, switch)
        mirror = self._mirror
        if mirror is not None and not mirror:  # nothing paused (the common case): no lookups
            return None
        into = answers_into(msg)
        if mirror is not None and chat not in mirror and into not in mirror:
            return None
        return self._check(inbound, [chat] if into == chat else [chat, into])

    async def _check(self, inbound: Inbound, chats: list[str]) -> Verdict | None:
        """``chats``: the message's own chat and the one its answer goes to, when they differ
        (a webhook delivering into a chat); a pause of either holds it."""
        for chat in chats:
            pause = await self._get(chat)
            if pause is None:
                continue
            if resume_due(pause, self.context.clock.time()):
                await self._ended(pause, TakeoverReason.AUTO_RESUME, "auto")
                continue
            return self._paused(inbound, chat)
        return None

    def _paused(self, inbound: Inbound, chat: str) -> Verdict | None:
        self.counter.labels(channel=inbound.msg.channel, reason=TakeoverReason.PAUSED.value).inc()
        if not _kept(inbound.msg):
            log.info("run into a paused chat held", extra={"chat": chat, "key": inbound.msg.key})
            return Verdict(
                Stage.OBSERVE, TakeoverReason.PAUSED, state=JournalState.DONE, counted=False
            )
        inbound.observe = True
        inbound.observed = TakeoverReason.PAUSED
        log.info(
            "kept as context",
            extra={"chat": chat, "key": inbound.msg.key, "reason": TakeoverReason.PAUSED.value},
        )
        return None

    async def _switch(self, inbound: Inbound, chat: str, switch: BotSwitch) -> Verdict:
        msg = inbound.msg
        voice = self.voices.for_message(msg, inbound.agent or None)
        by = f"{msg.channel}:{msg.sender_id}"
        if switch is BotSwitch.ON:
            await self.resume(chat, by)
            text = voice.text(TextId.TAKEOVER_RESUMED)
            return Verdict.answered(Stage.COMMAND, TakeoverReason.RESUME, text)
        pause = await self.pause(chat, by)
        on = voice.commands.form("bot on")
        if pause.until is None:
            text = voice.text(TextId.TAKEOVER_PAUSED, on=on)
        else:
            text = voice.text(
                TextId.TAKEOVER_PAUSED_FOR, on=on, wait=voice.wait(pause.until - pause.since)
            )
        return Verdict.answered(Stage.COMMAND, TakeoverReason.PAUSE, text)

    # -- operator actions -----------------------------------------------------------------

    def _chat(self, address: str) -> tuple[str, Target]:
        try:
            target = Target.parse(address)
        except ValueError as exc:
            raise TakeoverError(str(exc)) from None
        if target.channel not in self.context.loaded.channels:
            raise TakeoverError(f"channel '{target.channel}' is not configured")
        return chat_address(target.channel, target.chat_id), target

    async def pause(self, address: str, by: str, for_s: float | None = None) -> Pause:
        """Pause the chat (again: a new end); until ``for_s`` or the configured auto resume."""
        if for_s is not None and for_s < 0:
            raise TakeoverError("for_s must be 0 (until resumed) or more seconds")
        chat, _ = self._chat(address)
        now = self.context.clock.time()
        pause = Pause(
            chat,
            now,
            pause_until(now, for_s, self.context.config.gateway.takeover.auto_resume_s),
            by,
        )
        await self.store.put(pause)
        if self._mirror is not None:
            self._mirror[chat] = pause
        self._count(chat, TakeoverReason.PAUSE)
        log.info("chat paused", extra={"chat": chat, "by": by, "until": pause.until})
        self._hold(pause)
        self._wake.set()
        return pause

    def _hold(self, pause: Pause) -> None:
        """The chat's turns already queued here are held (kept as context, not answered); its
        running agent call too when `interrupt_running` says so."""
        self._held.add((pause.chat, pause.since))
        interrupt = self.context.config.gateway.takeover.interrupt_running
        waiting, running = self.context.queue.hold(
            lambda msg: pause.chat in (chat_address(msg.channel, msg.chat_id), answers_into(msg)),
            HeldAs(TakeoverReason.PAUSED.value, _kept, self._on_held),
            interrupt=interrupt,
        )
        if waiting or running:
            log.info(
                "queued turns held",
                extra={"chat": pause.chat, "waiting": waiting, "interrupted": running},
            )

    def _on_held(self, msg: InboundMessage) -> None:
        self._count(chat_address(msg.channel, msg.chat_id), TakeoverReason.PAUSED)

    async def resume(self, address: str, by: str) -> bool:
        """Resume the chat; False when it was not paused."""
        chat, _ = self._chat(address)
        pause = await self._get(chat)
        if pause is None:
            return False
        await self._ended(pause, TakeoverReason.RESUME, by)
        return True

    async def _ended(self, pause: Pause, reason: TakeoverReason, by: str) -> None:
        ran_out = reason is TakeoverReason.AUTO_RESUME
        removed = await self.store.delete(pause.chat, pause.since if ran_out else None)
        if self._mirror is not None and self._mirror.get(pause.chat) == pause:
            del self._mirror[pause.chat]
        self._held.discard((pause.chat, pause.since))
        if not removed:
            return  # resumed (or paused anew) elsewhere meanwhile
        self._count(pause.chat, reason)
        log.info("chat resumed", extra={"chat": pause.chat, "by": by, "reason": reason.value})
        if ran_out:
            self.notifier.tell(ran_out_text(pause))

    async def _get(self, chat: str) -> Pause | None:
        if self._mirror is not None:
            return self._mirror.get(chat)
        return await self.store.get(chat)

    async def paused(self) -> list[Pause]:
        """The chats paused now (a pause that ran out resumes here)."""
        now = self.context.clock.time()
        found = list(self._mirror.values()) if self._mirror is not None else await self.store.all()
        for pause in found:
            if resume_due(pause, now):
                await self._ended(pause, TakeoverReason.AUTO_RESUME, "auto")
        return [p for p in found if is_paused(p, now)]

    async def run(self) -> None:
        """Resume each pause as it runs out (not only at the chat's next message), so status,
        dashboard and metrics show it on time; on replicas, also hold queued turns of pauses
        taken on another replica. Until cancelled."""
        shared = self._mirror is None
        while True:
            self._wake.clear()
            wake_at: float | None = None
            try:
                pauses = await self.paused()
                self._held &= {(p.chat, p.since) for p in pauses}  # resumed on another replica
                for pause in pauses:
                    if (pause.chat, pause.since) not in self._held:
                        self._hold(pause)
                wake_at = next_resume(pauses)
                self.outage.ok()
            except StateUnavailable as exc:  # said once, reminded once a minute, and its end
                self.outage.failed(exc)
            except Exception:
                log.exception("pause check failed")
            self.next_resume_at = wake_at
            now = self.context.clock.time()
            delay = POLL_S if shared else None
            if wake_at is not None:
                until_end = max(0.0, wake_at - now)
                delay = until_end if delay is None else min(delay, until_end)
            await self._sleep(delay)

    async def _sleep(self, delay: float | None) -> None:
        waker = asyncio.ensure_future(self._wake.wait())
        waits: set[asyncio.Future[Any]] = {waker}
        if delay is not None:
            waits.add(asyncio.ensure_future(self.context.clock.sleep(max(0.0, delay))))
        try:
            await asyncio.wait(waits, return_when=asyncio.FIRST_COMPLETED)
        finally:
            for waiting in waits:
                waiting.cancel()

    async def reply(self, address: str, text: str, by: str) -> dict[str, Any]:
        """Send ``text`` to the chat as the bot; once sent, it joins the transcript as the
        assistant's line marked human."""
        if not text.strip() or len(text) > MAX_TEXT:
            raise TakeoverError(f"text must be 1–{MAX_TEXT} characters")
        chat, target = self._chat(address)
        session_key = await self._session_for(target)
        key = human_key(by, uuid.uuid4().hex)
        report = await self.context.deliver(
            target, OutboundMessage.from_text(text), inbound_key=key, session=session_key
        )
        sent = report.status is DeliveryStatus.SENT
        if sent:
            await self.context.transcripts.append(
                session_key, _human_line(key, text, by, report.message_ids)
            )
        self._count(chat, TakeoverReason.HUMAN_REPLY)
        log.info(
            "human reply",
            extra={
                "chat": chat,
                "target": target.address,
                "by": by,
                "session": session_key,
                "status": report.status.value,
            },
        )
        answer: dict[str, Any] = {
            "delivered": sent,
            "status": report.status.value,
            "message_ids": report.message_ids,
            "target": target.address,
            "session": session_key,
        }
        if not sent:
            answer["reason_code"] = report.kind.value if report.kind else report.status.value
            answer["error"] = report.error[:200] or "not delivered (see chatgate dlq list)"
        return answer

    async def _session_for(self, target: Target) -> str:
        """The chat's conversation: its most recent session, else the one its first message
        would open (the channel's agent, per the configured routes)."""
        recent = await self.context.state.sessions.recent(RECENT_SESSIONS)
        chat = chat_address(target.channel, target.chat_id)
        fallback: str | None = None
        for info in recent:
            found = session_chat(info.key)
            if found is None or found[0] != chat:
                continue
            if found[1] == target.address:
                return info.key
            fallback = fallback or info.key
        if fallback is not None and target.thread_id is None:
            return fallback
        return self.context.routing.session_for(target)

    async def replayed(self, entry: DeadLetter, report: DeliveryReport) -> None:
        """A dead letter was sent again (`chatgate dlq replay`): an operator's reply joins its
        conversation's transcript now, as it would have when first sent."""
        by = human_by(entry.inbound_key)
        if by is None or entry.session is None or report.status is not DeliveryStatus.SENT:
            return
        assert entry.inbound_key is not None
        text = message_from_dict(entry.message).plain_text
        line = _human_line(entry.inbound_key, text, by, report.message_ids)
        await self.context.transcripts.append(entry.session, line)
        log.info(
            "human reply replayed",
            extra={"target": entry.target.address, "by": by, "session": entry.session},
        )

    async def recent_chats(self, limit: int = 30) -> list[dict[str, Any]]:
        """The chats of the most recent sessions (newest first), each once."""
        seen: dict[str, dict[str, Any]] = {}
        for info in await self.context.state.sessions.recent(RECENT_SESSIONS):
            found = session_chat(info.key)
            if found is None or found[1] in seen:
                continue
            seen[found[1]] = {"chat": found[0], "address": found[1], "updated_at": info.updated_at}
            if len(seen) >= limit:
                break
        return list(seen.values())

    def _count(self, chat: str, reason: TakeoverReason) -> None:
        self.counter.labels(channel=chat.split(":", 1)[0], reason=reason.value).inc()

    async def view(self) -> dict[str, Any]:
        """Paused chats (each with its transcript's tail, human lines marked) and the recent
        chats with whether each is paused: what the dashboard and `chats list` show."""
        paused = await self.paused()
        views = []
        for pause in paused:
            channel, _, chat_id = pause.chat.partition(":")
            key = await self._session_for(Target(channel, chat_id, None))
            lines = await self.context.state.sessions.transcript(key) or []
            views.append(
                pause.to_dict() | {"session": key, "tail": [x.to_dict() for x in lines[-6:]]}
            )
        chats = {p.chat for p in paused}
        recent = [r | {"paused": r["chat"] in chats} for r in await self.recent_chats()]
        return {"paused": views, "recent": recent, "now": self.context.clock.time()}

    async def status(self) -> dict[str, Any]:
        """`view()` for `/api/status` and the dashboard, which must answer while the state
        store is away (they are how an operator sees that it is)."""
        try:
            return await self.view()
        except StateUnavailable:
            return {
                "paused": [],
                "recent": [],
                "unavailable": True,
                "now": self.context.clock.time(),
            }


def _human_line(key: str, text: str, by: str, message_ids: list[str]) -> ChatMessage:
    """An operator's reply as the transcript keeps it: the assistant's line, marked human."""
    return ChatMessage("assistant", text, None, key, {HUMAN_META: by, "message_ids": message_ids})


def answers_into(msg: InboundMessage) -> str:
    """The chat ``msg``'s answer goes to (its own, unless a route delivers it elsewhere)."""
    target = msg.reply_target
    if target is None:
        return chat_address(msg.channel, msg.chat_id)
    return chat_address(target.channel, target.chat_id)


def _kept(msg: InboundMessage) -> bool:
    """Whether a message in a paused chat joins the transcript as context (a scheduled run or a
    message answered elsewhere does not)."""
    return kept_as_context(msg.platform == SCHEDULE_PLATFORM, msg.answers_elsewhere)
