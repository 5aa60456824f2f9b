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
        runtime: Runtime,
        scheduler: SessionScheduler,
        settle: Callable[[InboundMessage, asyncio.Future[TurnResult], Verdict], Awaitable[None]],
    ) -> None:
        self.rt = runtime
        self.scheduler = scheduler
        self._settle = settle
        self.voices = Voices(runtime)
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

    def identify(self, inbound: Inbound) -> Verdict | None:
        """One principal per person: configured alternate ids map to it (rate limits follow)."""
        address = f"{inbound.msg.channel}:{inbound.msg.sender_id}"
        inbound.principal = self.principals.get(address, address)
        return None

    def revive_target(self, inbound: Inbound) -> Awaitable[None] | None:
        """A chat that writes to us again is reachable again (it unblocked the bot); work an
        operator configured (a webhook, a scheduled run) says nothing about the chat."""
        target = inbound.msg.reply_target
        return None if target is None or inbound.hint.trusted else self._revive(target)

    async def _revive(self, target: Target) -> None:
        if await self.rt.dead_targets.kind(target) is not None:
            await self.rt.dead_targets.revive(target.address)

    def loop_guard(self, inbound: Inbound) -> Verdict | None:
        msg, runtime = inbound.msg, self.rt
        allowed = runtime.loop_guard.check(
            chat_key=f"{msg.channel}:{msg.chat_id}",
            sender_is_bot=msg.sender_is_bot,
            now=runtime.clock.monotonic(),
        )
        if msg.sender_is_bot and not allowed:
            return Verdict(Stage.LOOP_GUARD, DropReason.BOT_LOOP)
        return None

    def admission(self, inbound: Inbound) -> Awaitable[Verdict | None] | None:
        """Blocklist → allowlist → pairing → group policy, unless a configured route trusts it."""
        return None if inbound.hint.trusted else self._admission(inbound)

    async def _admission(self, inbound: Inbound) -> Verdict | None:
        msg, runtime, policy = inbound.msg, self.rt, inbound.policy.admission
        paired = (
            msg.chat_kind == "direct"
            and policy.dm_policy == "pairing"
            and msg.sender_id not in policy.allowed_users
            and await runtime.pairing.is_approved(msg.channel, msg.sender_id)
        )
        decision = decide_admission(
            AdmissionFacts(
                chat_kind=msg.chat_kind,
                sender_id=msg.sender_id,
                chat_id=msg.chat_id,
                is_mention=msg.is_mention,
                is_command=inbound.command is not None or msg.is_command,
                paired=paired,
            ),
            policy,
        )
        runtime.metrics.admission.labels(channel=msg.channel, reason=decision.reason.value).inc()
        if decision.issue_pairing_code:
            return await self._pairing_code(msg)
        if decision.observe:
            inbound.observe = inbound.unaddressed = True
            return None
        if decision.reason is AdmissionReason.GROUP_MENTION_ONLY and ALBUM_KEY in msg.extra:
            inbound.observe = inbound.unaddressed = (
                True  # a later part of its album may address the bot
            )
            inbound.held = Verdict(Stage.ADMISSION, decision.reason)
            return None
        if not decision.admit:
            return Verdict(Stage.ADMISSION, decision.reason)
        if msg.extra.get(CONTEXT_ONLY):  # e.g. a reaction kept as context: never answered
            inbound.observe = True
        return None

    async def _pairing_code(self, msg: InboundMessage) -> Verdict:
        runtime = self.rt
        decision = await runtime.pairing.request(
            msg.channel, msg.sender_id, msg.sender_name, msg.chat_id, runtime.clock.time()
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

    def stale(self, inbound: Inbound) -> Verdict | None:
        """A message that waited past the channel's stale.after_s is skipped or noticed; it
        stays journaled (and a skipped one is kept as context, like an observed message)."""
        if inbound.observe:
            return None
        action = stale_action(inbound.msg.received_at, self.rt.clock.time(), inbound.policy.stale)
        if action is StaleAction.ANSWER:
            return None
        if action is StaleAction.SKIP:
            inbound.observe = True
            return None
        notice = self.voices.for_message(inbound.msg).text(TextId.STALE_NOTICE)
        return Verdict(Stage.STALE, DropReason.STALE, notice)

    def rate_limit(self, inbound: Inbound) -> Verdict | None:
        # A resumed message was accepted (and counted) before the restart.
        if (
            inbound.hint.trusted
            or inbound.observe
            or inbound.resumed
            or inbound.command in CONTROL_COMMANDS
        ):
            return None
        msg, runtime = inbound.msg, self.rt
        limited = runtime.limiter.check(
            sender_key=inbound.principal,
            chat_key=f"{msg.channel}:{msg.chat_id}",
            now=runtime.clock.monotonic(),
        )
        if limited.allowed or limited.reason is None:
            return None
        now = runtime.clock.monotonic()
        last = self._rate_notices.get(inbound.principal)
        if last is not None and now - last < RATE_NOTICE_EVERY_S:
            return Verdict(Stage.RATE_LIMIT, limited.reason)  # told recently: stay quiet
        self._rate_notices[inbound.principal] = now
        if len(self._rate_notices) > 10_000:
            self._rate_notices = {
                k: v for k, v in self._rate_notices.items() if now - v < RATE_NOTICE_EVERY_S
            }
        return Verdict(
            Stage.RATE_LIMIT,
            limited.reason,
            self.voices.for_message(msg).rate_limited(limited.retry_after_s),
        )

    def memory_shed(self, inbound: Inbound) -> Verdict | None:
        if inbound.observe or not self.rt.memory.shedding:
            return None
        if inbound.command in CONTROL_COMMANDS or inbound.command is Command.NEW:
            return None
        text = self.voices.for_message(inbound.msg).failure(
            failure_reply(FailureReason.MEMORY_PRESSURE)
        )
        return Verdict(Stage.MEMORY, DropReason.MEMORY_PRESSURE, text)

    def route(self, inbound: Inbound) -> Verdict | None:
        """Which agent serves the conversation, and its session key."""
        inbound.agent, inbound.session = route(
            inbound.msg,
            self.bindings,
            inbound.policy.agent,
            inbound.hint.agent,
            per_user_in_groups=self.rt.config.gateway.sessions.per_user_in_groups,
        )
        return None

    def edit(self, inbound: Inbound) -> Verdict | Awaitable[Verdict] | None:
        """An edited message per its channel's `edits`: ignored, put in the place of the
        original while that still waits for its turn, or answered as a turn of its own. A
        deletion withdraws its message from the queue (never a turn itself)."""
        msg = inbound.msg
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
            command=inbound.command is not None or reads_as_command(msg.text, msg.is_command),
            original_queued=self.scheduler.waiting(inbound.session, original),
        )
        if action is EditAction.IGNORE or inbound.observe:  # an unanswered message's edit: no input
            return Verdict(Stage.EDIT, DropReason.EDITED_IGNORED)
        if action is EditAction.REPLACE:
            inbound.replaces = original
        return None

    async def _retract(self, message_key: str) -> Verdict:
        """A deletion: its message leaves the queue unanswered if its turn has not run."""
        verdict = Verdict(Stage.EDIT, DropReason.RETRACTED)
        job = self.scheduler.withdraw(message_key)
        if job is not None:
            await self._settle(job.msg, job.future, verdict)
        return verdict

    def command(self, inbound: Inbound) -> Verdict | Awaitable[Verdict] | None:
        if inbound.observe or inbound.command is None:
            return None
        if inbound.command is Command.STOP:
            return self._stop(inbound)
        if inbound.command is Command.HELP:
            help_text = self.voices.for_message(inbound.msg, inbound.agent).help()
            return Verdict.answered(Stage.COMMAND, Command.HELP.value, help_text)
        if inbound.command is Command.STATUS:
            return Verdict.answered(Stage.COMMAND, Command.STATUS.value, self._status_text(inbound))
        handler = self.command_handlers.get(inbound.command)
        return None if handler is None else self._handled(inbound, inbound.command, handler)

    async def _handled(self, inbound: Inbound, command: str, handler: CommandHandler) -> Verdict:
        return Verdict.answered(
            Stage.COMMAND, command, await handler(inbound.msg, inbound.principal)
        )

    async def _stop(self, inbound: Inbound) -> Verdict:
        cancelled, dropped = self.scheduler.stop(inbound.session)
        for job in dropped:
            await self._settle(job.msg, job.future, Verdict(Stage.COMMAND, DropReason.STOPPED))
        said = TextId.STOPPED if cancelled or dropped else TextId.NOTHING_TO_STOP
        text = self.voices.for_message(inbound.msg, inbound.agent).text(said)
        return Verdict.answered(Stage.COMMAND, Command.STOP.value, text)

    def _status_text(self, inbound: Inbound) -> str:
        cfg = self.rt.config.agents.get(inbound.agent)
        warm = self.rt.cache.get(inbound.session)
        depth = self.scheduler.depth(inbound.session)
        return cmd.status_text(
            self.voices.for_message(inbound.msg, inbound.agent),
            agent=inbound.agent,
            model=getattr(cfg, "model", None),
            history=len(warm.transcript) if warm else 0,
            queued=max(0, depth - 1),
            running=depth > 0,
        )

    def degraded(self, inbound: Inbound) -> Verdict | None:
        """Fail closed: work for a degraded provider or a parked delivery channel is told so."""
        if inbound.observe:
            return None
        runtime, msg = self.rt, inbound.msg
        target = msg.reply_target
        if (
            target is not None
            and target.channel != msg.channel
            and runtime.channels.is_unavailable(target.channel)
        ):
            owner = runtime.degraded.find(OwnerKind.CHANNEL, target.channel)
            hint = (
                owner.hint
                if owner
                else f"channel '{target.channel}' is not running: see `chatgate status`"
            )
            text = self.voices.for_message(msg, inbound.agent).failure(
                failure_reply(FailureReason.UNAVAILABLE, hint=hint)
            )
            # The target channel cannot carry the notice; the caller gets it in the result.
            return Verdict(Stage.DEGRADED, FailureReason.UNAVAILABLE, reply=text)
        agent = runtime.agents.get(inbound.agent)
        provider = agent.provider_id() if agent is not None else None
        if provider is None:
            return None
        blocking = runtime.degraded.blocking(
            OwnerKind.PROVIDER, provider, runtime.clock.monotonic()
        )
        if blocking is None:
            return None
        text = self.voices.for_message(msg, inbound.agent).failure(
            failure_reply(FailureReason.UNAVAILABLE, hint=blocking.hint)
        )
        return Verdict(Stage.DEGRADED, FailureReason.UNAVAILABLE, text)

    def enqueue(self, inbound: Inbound) -> Verdict | Awaitable[None] | None:
        if inbound.observe:
            kind = JobKind.OBSERVE
        else:
            kind = JobKind.NEW_SESSION if inbound.command is Command.NEW else JobKind.TURN
        target = None if inbound.observe else inbound.msg.reply_target
        job = Job(
            kind,
            inbound.msg,
            inbound.future,
            inbound.session,
            inbound.agent,
            target,
            inbound.accepted,
            ephemeral=inbound.hint.ephemeral,
            resumed=inbound.resumed,
            debounce_s=0.0
            if inbound.resumed
            else burst_window(inbound.policy.debounce_s, ALBUM_KEY in inbound.msg.extra),
            observed=inbound.observed,
            album=_album(inbound),
            unjoined=None
            if inbound.held is None
            else functools.partial(self._settle, inbound.msg, inbound.future, inbound.held),
        )
        if inbound.replaces is not None:
            replaced = self.scheduler.replace(job, inbound.replaces)
            if replaced is None:  # its turn started meanwhile: as if the edit came too late
                return Verdict(Stage.EDIT, DropReason.EDITED_IGNORED)
            return self._settle(
                replaced.msg, replaced.future, Verdict(Stage.EDIT, DropReason.EDIT_REPLACED)
            )
        if self.scheduler.enqueue(job, capped=not inbound.resumed):
            return None
        text = self.voices.for_message(inbound.msg, inbound.agent).text(TextId.QUEUE_FULL)
        return Verdict(Stage.QUEUE, DropReason.QUEUE_FULL, text)


def _album(inbound: Inbound) -> str | None:
    """The album of a part that is a turn's input or context only for not addressing the bot
    (not one kept as context for another reason, e.g. a chat a human took over)."""
    group = inbound.msg.extra.get(ALBUM_KEY)
    joins = not inbound.observe or (inbound.unaddressed and inbound.observed == Stage.OBSERVE.value)
    return f"{inbound.msg.channel}:{inbound.msg.chat_id}:{group}" if group and joins else None
