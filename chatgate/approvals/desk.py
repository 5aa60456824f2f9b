"""The approval desk: asks the chat before a tool call whose rule is ``ask``, and takes the
answers (a button press, or a yes/no reply where there are no buttons) before the session queue.

A turn that asks journals the prompt (the approval store), posts it, and waits, bounded by
``approval_timeout_s`` (no answer = deny). An answer is judged by ``policies.approvals`` and
decided atomically in the store, so the first answer wins on any replica; the waiting turn
wakes at once on this replica, or at its next look at the store on another. After a restart
the turn runs again, the model asks for the same call, and the desk finds the prompt by its id:
a decision is used as it is, a pending prompt is waited on without asking twice.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Awaitable, Coroutine
from typing import Any

from chatgate.agents.tools.types import ApprovalAnswer, ApprovalAsk
from chatgate.feature.context import FeatureContext
from chatgate.feature.turns import AskContext, CancelReason, TurnControl
from chatgate.model.errors import StateUnavailable
from chatgate.model.messages import InboundMessage, Target
from chatgate.model.outbound import Button, Buttons, OutboundMessage, Text
from chatgate.model.reasons import ApprovalReason, DeliveryStatus, ToolCallStatus
from chatgate.model.text_ids import TextId
from chatgate.policies.approvals import (
    STATE_REASONS,
    Answer,
    ApprovalState,
    approval_id,
    deciders_for,
    judge,
    parse_press,
    parse_reply,
    press_value,
    shown_arguments,
)
from chatgate.policies.edits import EDIT_OF
from chatgate.state.approvals import KV_NAME, ApprovalRecord, ApprovalStore
from chatgate.texts.voice import Voice

log = logging.getLogger("chatgate.approvals")
RECHECK_S = 1.0  # a waiting turn looks at the store this often (answers on another replica)
_STATUS = {
    ApprovalState.APPROVED: ToolCallStatus.OK,
    ApprovalState.DENIED: ToolCallStatus.DENIED,
    ApprovalState.TIMED_OUT: ToolCallStatus.APPROVAL_TIMEOUT,
    ApprovalState.CANCELLED: ToolCallStatus.DENIED,
}
_DECIDED = {
    ApprovalReason.APPROVED: ApprovalState.APPROVED,
    ApprovalReason.DENIED: ApprovalState.DENIED,
}
_UNSEEN = (DeliveryStatus.UNDELIVERED, DeliveryStatus.DEAD_TARGET)  # a prompt nobody sees
_CLOSED_TEXT = {
    ApprovalState.APPROVED: TextId.APPROVAL_APPROVED,
    ApprovalState.DENIED: TextId.APPROVAL_DENIED,
}


class ApprovalDesk:
    def __init__(self, context: FeatureContext) -> None:
        self.context = context
        self.voices = context.voices
        store = context.state.stores.kv.get(KV_NAME)
        self.store: ApprovalStore | None = store if isinstance(store, ApprovalStore) else None
        self._wake: dict[str, asyncio.Event] = {}
        self._controls: dict[str, TurnControl] = {}
        self._released = False  # shutting down: a turn that comes to wait now stops at once
        self.tasks: set[asyncio.Task[None]] = set()  # prompt edits (drain waits for them)

    # -- the turn's side ----------------------------------------------------------------------

    async def ask(self, ctx: AskContext, ask: ApprovalAsk) -> ApprovalAnswer:
        """Post (or find) the prompt of one call and wait for its answer or its timeout."""
        started = self.context.clock.monotonic()
        target = ctx.target
        reply_to = (target.channel, target.chat_id, target.thread_id) if target else None
        who = deciders_for(ctx.approver, (ctx.channel, ctx.chat_id), ctx.sender_id, reply_to)
        if self.store is None or who is None:
            self._count(ask.agent, ApprovalReason.NO_APPROVER)
            log.warning(
                "tool call needs approval but there is nobody to ask; denied",
                extra={"tool": ask.tool, "key": ctx.key, "reason": ApprovalReason.NO_APPROVER},
            )
            return ApprovalAnswer(ToolCallStatus.DENIED, ApprovalReason.NO_APPROVER.value)
        deciders, (channel, chat, thread) = who
        now = self.context.clock.time()
        fresh = ApprovalRecord(
            id=approval_id(ctx.key, ask.tool, ask.arguments, ask.occurrence),
            key=ctx.key,
            session=ctx.session,
            agent=ask.agent,
            tool=ask.tool,
            arguments=ask.arguments,
            deciders=deciders,
            prompt=(channel, chat, thread),
            created_at=now,
            expires_at=now + ctx.timeout_s,
            language=ctx.language,
            taint=ask.taint,
        )
        record = await self.store.create(fresh)
        try:
            unposted = not record.state.decided and not record.prompt_ids
            if unposted and not await self._post(record, ctx):
                return await self._unseen(record, ctx)
            async with ctx.deadline.paused(max(0.0, record.expires_at - now)):
                record = await self._wait(record, ctx.control)
        except BaseException:
            # The turn ended first: /stop, a newer message, its deadline or budget, a crash.
            # Only a shutdown keeps the prompt open (the next start runs the turn again).
            control = ctx.control
            if control is None or control.reason is not CancelReason.SHUTDOWN:
                self._spawn(self._cancelled(fresh.id))  # this task may be cancelled: not here
            raise
        waited = self.context.clock.monotonic() - started
        reason = STATE_REASONS.get(record.state, ApprovalReason.TIMED_OUT)
        log.info(
            "tool approval",
            extra={
                "tool": ask.tool,
                "key": ctx.key,
                "session": ctx.session,
                "reason": reason.value,
                "by": record.decided_by,
            },
        )
        status = _STATUS.get(record.state, ToolCallStatus.APPROVAL_TIMEOUT)
        return ApprovalAnswer(status, reason.value, record.decided_by, waited)

    async def _wait(self, record: ApprovalRecord, control: TurnControl | None) -> ApprovalRecord:
        """Until the record is decided (here, elsewhere) or expires (then this turn times it out)."""
        assert self.store is not None
        ident = record.id
        wake = self._wake.setdefault(ident, asyncio.Event())
        if control is not None:
            self._controls[ident] = control
            if self._released:  # its prompt went out as the shutdown began
                control.cancel(CancelReason.SHUTDOWN)
        try:
            while True:
                wake.clear()  # before the read: an answer after it wakes the wait below
                try:
                    record = await self.store.get(ident) or record
                except StateUnavailable:  # a blip of the shared store: look again shortly
                    log.warning("approval store unreachable; still waiting", extra={"id": ident})
                if record.state.decided:
                    break
                now = self.context.clock.time()
                if now >= record.expires_at:
                    decided, changed = await self.store.decide(
                        ident, ApprovalState.TIMED_OUT, "", now
                    )
                    record = decided or record.decided(ApprovalState.TIMED_OUT, "", now)
                    if changed:
                        self._count(record.agent, ApprovalReason.TIMED_OUT)
                        await self._close(record, "")
                    break
                await _first(
                    wake.wait(), self.context.clock.sleep(min(RECHECK_S, record.expires_at - now))
                )
        finally:
            self._wake.pop(ident, None)
            self._controls.pop(ident, None)
        return record

    async def _cancelled(self, ident: str) -> None:
        """The asking turn ended before an answer: close the prompt (an undecided one only), so
        a later press cannot look like it ran the tool."""
        assert self.store is not None
        try:
            record, changed = await self.store.decide(
                ident, ApprovalState.CANCELLED, "", self.context.clock.time()
            )
            if changed and record is not None:
                self._count(record.agent, ApprovalReason.CANCELLED)
                await self._close(record, "")
        except Exception:
            log.warning("could not close a cancelled approval prompt", extra={"id": ident})

    def _spawn(self, coro: Coroutine[Any, Any, None]) -> None:
        task = asyncio.ensure_future(coro)
        self.tasks.add(task)
        task.add_done_callback(self.tasks.discard)

    async def _unseen(self, record: ApprovalRecord, ctx: AskContext) -> ApprovalAnswer:
        """The prompt could not be posted (the chat is gone, the channel is down): nobody can
        answer it, so the call is denied now instead of after the whole timeout."""
        assert self.store is not None
        await self.store.decide(record.id, ApprovalState.CANCELLED, "", self.context.clock.time())
        self._count(record.agent, ApprovalReason.NO_APPROVER)
        log.warning(
            "approval prompt could not be posted; the call is denied",
            extra={"tool": record.tool, "key": ctx.key, "reason": ApprovalReason.NO_APPROVER},
        )
        return ApprovalAnswer(ToolCallStatus.DENIED, ApprovalReason.NO_APPROVER.value)

    async def _post(self, record: ApprovalRecord, ctx: AskContext) -> bool:
        """Post the prompt; whether anyone can see it."""
        channel, chat, thread = record.prompt
        voice = self.voices.for_channel(channel, record.language, record.agent)
        adapter = await self.context.channels.ready_adapter(channel)
        buttons = adapter is not None and adapter.capabilities.limits.supports_buttons
        message = prompt_message(record, voice, buttons, self.context.clock.time())
        target = Target(channel, chat, thread)
        if ctx.target is not None and ctx.target.address == target.address:
            target = ctx.target  # in the turn's own chat: quote the message that asked
        report = await self.context.deliver(target, message, inbound_key=record.key)
        if report.status in _UNSEEN:
            return False
        self._count(record.agent, ApprovalReason.ASKED)
        if report.message_ids:
            await self._store_ids(record.id, report.message_ids)
        return True

    async def _store_ids(self, ident: str, ids: list[str]) -> None:
        if self.store is not None:
            await self.store.set_prompt(ident, ids)

    @property
    def waiting(self) -> int:
        """Turns of this process waiting for an answer right now."""
        return len(self._wake)

    def release(self) -> int:
        """Shutdown: turns waiting for an answer stop now and stay journaled (the next start
        runs them again and finds their prompts), and any that comes to wait later; returns
        how many were waiting."""
        self._released = True
        controls = list(self._controls.values())
        return sum(1 for c in controls if c.cancel(CancelReason.SHUTDOWN))

    # -- the answer's side (before the session queue) -----------------------------------------

    def wants(self, msg: InboundMessage, is_command: bool) -> bool:
        """Whether ``msg`` may answer a prompt: an approval button, or a bare yes/no (cheap)."""
        if self.store is None:
            return False
        if msg.choice is not None:
            return parse_press(msg.choice) is not None
        return not is_command and not msg.attachments and parse_reply(msg.text) is not None

    async def answer(self, msg: InboundMessage) -> ApprovalReason | None:
        """Decide a prompt with ``msg`` (a press, or a yes/no reply in a chat with a pending
        prompt); the reason it ended or was ignored, or None: not an answer, a normal message."""
        assert self.store is not None
        now = self.context.clock.time()
        edited = EDIT_OF in msg.extra
        press = parse_press(msg.choice)
        found = await self._answered(msg, press, now)
        if found is None:
            return None
        approve, record = found
        answer = Answer(msg.channel, msg.chat_id, msg.sender_id, approve, edited=edited)
        if record is None:
            reason = ApprovalReason.EDITED if edited else ApprovalReason.UNKNOWN
        else:
            reason = judge(record.state, record.expires_at, record.deciders, answer, now)
        if press is None and reason is ApprovalReason.NOT_APPROVER:
            return None  # someone else's "yes" in the chat is just a message
        state = _DECIDED.get(reason)
        if record is not None and state is not None:
            reason = await self._decide(record, state, msg, now) or reason
        agent = record.agent if record is not None else ""
        self._count(agent, reason)
        log.info(
            "approval answer" if state is not None else "approval answer ignored",
            extra={
                "channel": msg.channel,
                "chat": msg.chat_id,
                "sender": msg.sender_id,
                "key": msg.key,
                "approval": record.id if record is not None else None,
                "reason": reason.value,
            },
        )
        return reason

    async def _answered(
        self, msg: InboundMessage, press: tuple[bool, str] | None, now: float
    ) -> tuple[bool, ApprovalRecord | None] | None:
        """Approve or not, and the prompt answered: the pressed one, or the oldest pending in
        the chat for a yes/no reply; None when the message answers nothing."""
        assert self.store is not None
        if press is not None:
            approve, ident = press
            return approve, await self.store.get(ident)
        reply = parse_reply(msg.text)
        if reply is None:
            return None
        pending = await self.store.pending_in(msg.channel, msg.chat_id, now)
        return (reply, pending[0]) if pending else None

    async def _decide(
        self, record: ApprovalRecord, state: ApprovalState, msg: InboundMessage, now: float
    ) -> ApprovalReason | None:
        """Store the decision and wake the waiting turn; ALREADY_DECIDED when someone was
        first (None: the judged reason stands)."""
        assert self.store is not None
        by = f"{msg.channel}:{msg.sender_id}"
        decided, changed = await self.store.decide(record.id, state, by, now)
        if not changed:
            return ApprovalReason.ALREADY_DECIDED
        if decided is not None:
            wake = self._wake.get(record.id)
            if wake is not None:
                wake.set()
            # in the background: the adapter acks the press only after this returns
            self._spawn(self._close(decided, msg.sender_name or msg.sender_id))
        return None

    async def _close(self, record: ApprovalRecord, name: str) -> None:
        """Replace the prompt (its buttons) with how it ended."""
        channel, chat, thread = record.prompt
        voice = self.voices.for_channel(channel, record.language, record.agent)
        if record.state is ApprovalState.TIMED_OUT:
            wait = voice.wait(record.expires_at - record.created_at)
            text = voice.text(TextId.APPROVAL_TIMED_OUT, tool=record.tool, wait=wait)
        elif record.state is ApprovalState.CANCELLED:
            text = voice.text(TextId.APPROVAL_CANCELLED, tool=record.tool)
        else:
            text = voice.text(_CLOSED_TEXT[record.state], tool=record.tool, name=name)
        adapter = await self.context.channels.ready_adapter(channel)
        edits = adapter is not None and adapter.capabilities.edits
        with contextlib.suppress(Exception):  # the answer counts even if the edit fails
            await self.context.deliver(
                Target(channel, chat, thread),
                OutboundMessage((Text(text, markdown=False),)),
                inbound_key=record.key,
                edit_ids=list(record.prompt_ids)[:1] if edits else (),
            )

    def _count(self, agent: str, reason: ApprovalReason) -> None:
        tools = self.context.tools
        if tools is not None:
            tools.metrics.approvals.labels(agent=agent or "-", reason=reason.value).inc()


def prompt_message(
    record: ApprovalRecord, voice: Voice, buttons: bool, now: float
) -> OutboundMessage:
    """The prompt: the tool and its (masked, capped) arguments, then Approve / Deny buttons, or
    the yes/no hint on a channel without buttons."""
    text = voice.text(
        TextId.APPROVAL_PROMPT,
        tool=record.tool,
        arguments=shown_arguments(record.arguments),
        expires=voice.wait(max(0.0, record.expires_at - now)),
    )
    if record.taint:
        text += "\n" + voice.text(TextId.APPROVAL_TAINTED, sources=", ".join(record.taint))
    if not buttons:
        hint = voice.text(TextId.APPROVAL_REPLY_HINT)
        return OutboundMessage((Text(f"{text}\n{hint}", markdown=False),))
    row = Buttons(
        (
            Button(
                voice.text(TextId.APPROVAL_APPROVE), press_value(True, record.id), style="primary"
            ),
            Button(voice.text(TextId.APPROVAL_DENY), press_value(False, record.id), style="danger"),
        )
    )
    return OutboundMessage((Text(text, markdown=False), row))


async def _first(*aws: Awaitable[Any]) -> None:
    """Wait until the first of ``aws`` finishes; cancel the rest."""
    tasks = [asyncio.ensure_future(a) for a in aws]
    try:
        await asyncio.wait(tasks, return_when=asyncio.FIRST_COMPLETED)
    finally:
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
