"""The stages a journaled message walks, in order, until one settles it or it is queued.

identify → revive target → loop guard → [features' gates before admission: approval answers] →
admission → [features' gates after it: taken over] → stale → rate limit → memory shed → route →
edit → chat command → degraded owners → session queue.
Each stage reads and fills the message's `Inbound` record and returns None (go on) or a
`Verdict` (the message ends here: dropped, or answered with a notice), which the pipeline's
single `settle` turns into journal, metrics, log line and result.
"""

from __future__ import annotations

import asyncio
import functools
from collections.abc import Awaitable, Callable, Mapping

from chatgate.feature.intake import (
    Command,
    CommandHandler,
    GateSlot,
    Inbound,
    StageFn,
    Verdict,
)
from chatgate.feature.voices import Voices
from chatgate.gateway.intake import commands as cmd
from chatgate.gateway.intake.session_queue import SessionScheduler
from chatgate.gateway.runtime import Runtime
from chatgate.gateway.supervision.degraded import OwnerKind
from chatgate.gateway.turn.job import Job, JobKind
from chatgate.model.messages import ALBUM_KEY, InboundMessage, Target
from chatgate.model.reasons import AdmissionReason, DropReason, FailureReason
from chatgate.model.results import Stage, TurnResult
from chatgate.model.text_ids import TextId
from chatgate.policies.admission import AdmissionFacts, decide_admission
from chatgate.policies.bursts import burst_window
from chatgate.policies.edits import (
    EDIT_MODE,
    EDIT_OF,
    RETRACTS,
    EditAction,
    EditMode,
    edit_action,
    reads_as_command,
)
from chatgate.policies.failure import failure_reply
from chatgate.policies.pairing import IssueOutcome
from chatgate.policies.reactions import CONTEXT_ONLY
from chatgate.policies.routing import Binding, route
from chatgate.policies.staleness import StaleAction, stale_action
from chatgate.state.records import JournalState

RATE_NOTICE_EVERY_S = 60.0
# Cheap commands a user must always be able to send, even while limited or shed.
CONTROL_COMMANDS = frozenset({Command.STOP, Command.HELP, Command.STATUS})


class Stages:
    """The stage functions over the runtime; `Pipeline` runs them in `order()`."""

    def __init__(
        self,
        rt: Runtime,
        scheduler: SessionScheduler,
        settle: Callable[[InboundMessage, asyncio.Future[TurnResult], Verdict], Awaitable[None]],
    ) -> None:
        self.rt = rt
        self.scheduler = scheduler
        self._settle = settle
        self.voices = Voices(rt)
        self.bindings: tuple[Binding, ...] = ()
        self.principals: Mapping[str, str] = {}
        self._rate_notices: dict[str, float] = {}
        # Commands a feature answers: (message, principal) → the reply text.
        self.command_handlers: dict[str, CommandHandler] = {}
        self.gates: dict[GateSlot, tuple[StageFn, ...]] = {}  # features' gates by their slot
        self._order = self._stages()

    def plug(
        self, gates: dict[GateSlot, tuple[StageFn, ...]], commands: dict[str, CommandHandler]
    ) -> None:
        """Take the features' gates and commands (the builder's seam)."""
        self.gates = gates
        self.command_handlers = commands
        self._order = self._stages()

    def order(self) -> tuple[StageFn, ...]:
        return self._order

    def _stages(self) -> tuple[StageFn, ...]:
        return (
            self.identify,
            self.revive_target,
            self.loop_guard,
            *self.gates.get(GateSlot.BEFORE_ADMISSION, ()),
            self.admission,
            *self.gates.get(GateSlot.AFTER_ADMISSION, ()),
            self.stale,
            self.rate_limit,
            self.memory_shed,
            self.route,
            self.edit,
            self.command,
            self.degraded,
            self.enqueue,
        )

    def identify(self, ib: Inbound) -> Verdict | None:
        """One principal per person: configured alternate ids map to it (rate limits follow)."""
        address = f"{ib.msg.channel}:{ib.msg.sender_id}"
        ib.principal = self.principals.get(address, address)
        return None

    def revive_target(self, ib: Inbound) -> Awaitable[None] | None:
        """A chat that writes to us again is reachable again (it unblocked the bot); work an
        operator configured (a webhook, a scheduled run) says nothing about the chat."""
        target = ib.msg.reply_target
        return None if target is None or ib.hint.trusted else self._revive(target)

    async def _revive(self, target: Target) -> None:
        if await self.rt.dead_targets.kind(target) is not None:
            await self.rt.dead_targets.revive(target.address)

    def loop_guard(self, ib: Inbound) -> Verdict | None:
        msg, rt = ib.msg, self.rt
        allowed = rt.loop_guard.check(
            chat_key=f"{msg.channel}:{msg.chat_id}",
            sender_is_bot=msg.sender_is_bot,
            now=rt.clock.monotonic(),
        )
        if msg.sender_is_bot and not allowed:
            return Verdict(Stage.LOOP_GUARD, DropReason.BOT_LOOP)
        return None

    def admission(self, ib: Inbound) -> Awaitable[Verdict | None] | None:
        """Blocklist → allowlist → pairing → group policy, unless a configured route trusts it."""
        return None if ib.hint.trusted else self._admission(ib)

    async def _admission(self, ib: Inbound) -> Verdict | None:
        msg, rt, policy = ib.msg, self.rt, ib.policy.admission
        paired = (
            msg.chat_kind == "direct"
            and policy.dm_policy == "pairing"
            and msg.sender_id not in policy.allowed_users
            and await rt.pairing.is_approved(msg.channel, msg.sender_id)
        )
        decision = decide_admission(
            AdmissionFacts(
                chat_kind=msg.chat_kind,
                sender_id=msg.sender_id,
                chat_id=msg.chat_id,
                is_mention=msg.is_mention,
                is_command=ib.command is not None or msg.is_command,
                paired=paired,
            ),
            policy,
        )
        rt.metrics.admission.labels(channel=msg.channel, reason=decision.reason.value).inc()
        if decision.issue_pairing_code:
            return await self._pairing_code(msg)
        if decision.observe:
            ib.observe = ib.unaddressed = True
            return None
        if decision.reason is AdmissionReason.GROUP_MENTION_ONLY and ALBUM_KEY in msg.extra:
            ib.observe = ib.unaddressed = True  # a later part of its album may address the bot
            ib.held = Verdict(Stage.ADMISSION, decision.reason)
            return None
        if not decision.admit:
            return Verdict(Stage.ADMISSION, decision.reason)
        if msg.extra.get(CONTEXT_ONLY):  # e.g. a reaction kept as context: never answered
            ib.observe = True
        return None

    async def _pairing_code(self, msg: InboundMessage) -> Verdict:
        rt = self.rt
        decision = await rt.pairing.request(
            msg.channel, msg.sender_id, msg.sender_name, msg.chat_id, rt.clock.time()
        )
        if decision.outcome is IssueOutcome.TOO_MANY_PENDING or decision.code is None:
            text = self.voices.for_message(msg).text(TextId.PAIRING_FULL)
        else:
            text = cmd.pairing_text(
                self.voices.for_message(msg), msg.channel, decision.code, msg.sender_name
            )
        return Verdict(
            Stage.ADMISSION, AdmissionReason.PAIRING_REQUIRED, text, JournalState.DONE, counted=True
        )

    def stale(self, ib: Inbound) -> Verdict | None:
        """A message that waited past the channel's stale.after_s is skipped or noticed; it
        stays journaled (and a skipped one is kept as context, like an observed message)."""
        if ib.observe:
            return None
        action = stale_action(ib.msg.received_at, self.rt.clock.time(), ib.policy.stale)
        if action is StaleAction.ANSWER:
            return None
        if action is StaleAction.SKIP:
            ib.observe = True
            return None
        notice = self.voices.for_message(ib.msg).text(TextId.STALE_NOTICE)
        return Verdict(Stage.STALE, DropReason.STALE, notice)

    def rate_limit(self, ib: Inbound) -> Verdict | None:
        # A resumed message was accepted (and counted) before the restart.
        if ib.hint.trusted or ib.observe or ib.resumed or ib.command in CONTROL_COMMANDS:
            return None
        msg, rt = ib.msg, self.rt
        limited = rt.limiter.check(
            sender_key=ib.principal,
            chat_key=f"{msg.channel}:{msg.chat_id}",
            now=rt.clock.monotonic(),
        )
        if limited.allowed or limited.reason is None:
            return None
        now = rt.clock.monotonic()
        last = self._rate_notices.get(ib.principal)
        if last is not None and now - last < RATE_NOTICE_EVERY_S:
            return Verdict(Stage.RATE_LIMIT, limited.reason)  # told recently: stay quiet
        self._rate_notices[ib.principal] = now
        if len(self._rate_notices) > 10_000:
            self._rate_notices = {
                k: v for k, v in self._rate_notices.items() if now - v < RATE_NOTICE_EVERY_S
            }
        return Verdict(
            Stage.RATE_LIMIT,
            limited.reason,
            self.voices.for_message(msg).rate_limited(limited.retry_after_s),
        )

    def memory_shed(self, ib: Inbound) -> Verdict | None:
        if ib.observe or not self.rt.memory.shedding:
            return None
        if ib.command in CONTROL_COMMANDS or ib.command is Command.NEW:
            return None
        text = self.voices.for_message(ib.msg).failure(failure_reply(FailureReason.MEMORY_PRESSURE))
        return Verdict(Stage.MEMORY, DropReason.MEMORY_PRESSURE, text)

    def route(self, ib: Inbound) -> Verdict | None:
        """Which agent serves the conversation, and its session key."""
        ib.agent, ib.session = route(
            ib.msg,
            self.bindings,
            ib.policy.agent,
            ib.hint.agent,
            per_user_in_groups=self.rt.config.gateway.sessions.per_user_in_groups,
        )
        return None

    def edit(self, ib: Inbound) -> Verdict | Awaitable[Verdict] | None:
        """An edited message per its channel's `edits`: ignored, put in the place of the
        original while that still waits for its turn, or answered as a turn of its own. A
        deletion withdraws its message from the queue (never a turn itself)."""
        msg = ib.msg
        retracted = msg.extra.get(RETRACTS)
        if isinstance(retracted, str):
            return self._retract(retracted)
        original = msg.extra.get(EDIT_OF)
        if not isinstance(original, str):
            return None
        try:
            mode = EditMode(msg.extra.get(EDIT_MODE, EditMode.NEW_TURN))
        except ValueError:
            mode = EditMode.IGNORE
        action = edit_action(
            mode,
            command=ib.command is not None or reads_as_command(msg.text, msg.is_command),
            original_queued=self.scheduler.waiting(ib.session, original),
        )
        if action is EditAction.IGNORE or ib.observe:  # an unanswered message's edit: no input
            return Verdict(Stage.EDIT, DropReason.EDITED_IGNORED)
        if action is EditAction.REPLACE:
            ib.replaces = original
        return None

    async def _retract(self, message_key: str) -> Verdict:
        """A deletion: its message leaves the queue unanswered if its turn has not run."""
        verdict = Verdict(Stage.EDIT, DropReason.RETRACTED)
        job = self.scheduler.withdraw(message_key)
        if job is not None:
            await self._settle(job.msg, job.future, verdict)
        return verdict

    def command(self, ib: Inbound) -> Verdict | Awaitable[Verdict] | None:
        if ib.observe or ib.command is None:
            return None
        if ib.command is Command.STOP:
            return self._stop(ib)
        if ib.command is Command.HELP:
            help_text = self.voices.for_message(ib.msg, ib.agent).help()
            return Verdict.answered(Stage.COMMAND, Command.HELP.value, help_text)
        if ib.command is Command.STATUS:
            return Verdict.answered(Stage.COMMAND, Command.STATUS.value, self._status_text(ib))
        handler = self.command_handlers.get(ib.command)
        return None if handler is None else self._handled(ib, ib.command, handler)

    async def _handled(self, ib: Inbound, command: str, handler: CommandHandler) -> Verdict:
        return Verdict.answered(Stage.COMMAND, command, await handler(ib.msg, ib.principal))

    async def _stop(self, ib: Inbound) -> Verdict:
        cancelled, dropped = self.scheduler.stop(ib.session)
        for job in dropped:
            await self._settle(job.msg, job.future, Verdict(Stage.COMMAND, DropReason.STOPPED))
        said = TextId.STOPPED if cancelled or dropped else TextId.NOTHING_TO_STOP
        text = self.voices.for_message(ib.msg, ib.agent).text(said)
        return Verdict.answered(Stage.COMMAND, Command.STOP.value, text)

    def _status_text(self, ib: Inbound) -> str:
        cfg = self.rt.config.agents.get(ib.agent)
        warm = self.rt.cache.get(ib.session)
        depth = self.scheduler.depth(ib.session)
        return cmd.status_text(
            self.voices.for_message(ib.msg, ib.agent),
            agent=ib.agent,
            model=getattr(cfg, "model", None),
            history=len(warm.transcript) if warm else 0,
            queued=max(0, depth - 1),
            running=depth > 0,
        )

    def degraded(self, ib: Inbound) -> Verdict | None:
        """Fail closed: work for a degraded provider or a parked delivery channel is told so."""
        if ib.observe:
            return None
        rt, msg = self.rt, ib.msg
        target = msg.reply_target
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
            text = self.voices.for_message(msg, ib.agent).failure(
                failure_reply(FailureReason.UNAVAILABLE, hint=hint)
            )
            # The target channel cannot carry the notice; the caller gets it in the result.
            return Verdict(Stage.DEGRADED, FailureReason.UNAVAILABLE, reply=text)
        agent = rt.agents.get(ib.agent)
        provider = agent.provider_id() if agent is not None else None
        if provider is None:
            return None
        blocking = rt.degraded.blocking(OwnerKind.PROVIDER, provider, rt.clock.monotonic())
        if blocking is None:
            return None
        text = self.voices.for_message(msg, ib.agent).failure(
            failure_reply(FailureReason.UNAVAILABLE, hint=blocking.hint)
        )
        return Verdict(Stage.DEGRADED, FailureReason.UNAVAILABLE, text)

    def enqueue(self, ib: Inbound) -> Verdict | Awaitable[None] | None:
        if ib.observe:
            kind = JobKind.OBSERVE
        else:
            kind = JobKind.NEW_SESSION if ib.command is Command.NEW else JobKind.TURN
        target = None if ib.observe else ib.msg.reply_target
        job = Job(
            kind,
            ib.msg,
            ib.future,
            ib.session,
            ib.agent,
            target,
            ib.accepted,
            ephemeral=ib.hint.ephemeral,
            resumed=ib.resumed,
            debounce_s=0.0
            if ib.resumed
            else burst_window(ib.policy.debounce_s, ALBUM_KEY in ib.msg.extra),
            observed=ib.observed,
            album=_album(ib),
            unjoined=None
            if ib.held is None
            else functools.partial(self._settle, ib.msg, ib.future, ib.held),
        )
        if ib.replaces is not None:
            replaced = self.scheduler.replace(job, ib.replaces)
            if replaced is None:  # its turn started meanwhile: as if the edit came too late
                return Verdict(Stage.EDIT, DropReason.EDITED_IGNORED)
            return self._settle(
                replaced.msg, replaced.future, Verdict(Stage.EDIT, DropReason.EDIT_REPLACED)
            )
        if self.scheduler.enqueue(job, capped=not ib.resumed):
            return None
        text = self.voices.for_message(ib.msg, ib.agent).text(TextId.QUEUE_FULL)
        return Verdict(Stage.QUEUE, DropReason.QUEUE_FULL, text)


def _album(ib: Inbound) -> str | None:
    """The album of a part that is a turn's input or context only for not addressing the bot
    (not one kept as context for another reason, e.g. a chat a human took over)."""
    group = ib.msg.extra.get(ALBUM_KEY)
    joins = not ib.observe or (ib.unaddressed and ib.observed == Stage.OBSERVE.value)
    return f"{ib.msg.channel}:{ib.msg.chat_id}:{group}" if group and joins else None
