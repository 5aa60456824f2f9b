"""The budgets on the turn path: at the start of an agent call the ladder decides (refuse,
warn once, degrade to a cheaper agent); each model call is then admitted against every
applicable counter (its estimate reserved) and settled to the usage the provider reported."""

from __future__ import annotations

import itertools
import logging
import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from chatgate.agents.base import COST_NANO, AgentError
from chatgate.budgets.ledger import Ledger
from chatgate.budgets.rules import Rules
from chatgate.budgets.store import WARN_SUFFIX, BudgetStore, Spent, refusal_flag
from chatgate.clock import Clock
from chatgate.feature.ports import ChannelLookup, Deliver, LiveConfig, Routing
from chatgate.feature.turns import MeteredTurn
from chatgate.feature.voices import Voices
from chatgate.model.messages import InboundMessage, Target
from chatgate.model.outbound import OutboundMessage
from chatgate.model.reasons import FailureReason
from chatgate.model.text_ids import TextId
from chatgate.policies.budgets import (
    AGENT_DAY,
    NANO,
    Charge,
    Standing,
    Who,
    charge_for,
    format_share,
    plan,
    user_of,
)
from chatgate.texts.voice import Voice

log = logging.getLogger("chatgate.budgets")
_TICKETS = itertools.count()
_PROCESS = os.urandom(8).hex()  # tickets are unique across replicas and restarts by this
RESERVATION_SLACK_S = 30.0  # a reservation outlives its call's timeout by this, then expires
GROUP_REFUSAL_EVERY_S = 3600.0  # at most one refusal per user and group chat in this


def who_of(msg: InboundMessage, agent: str, session: str, routing: Routing) -> Who:
    chat = f"{msg.channel}:{msg.chat_id}"
    owner = msg.extra.get("owner")
    raw = f"{msg.channel}:{msg.sender_id}"
    address = routing.principal_of(raw)
    user = user_of(msg.platform, address, session, owner if isinstance(owner, str) else None, chat)
    return Who(user, chat, agent, msg.channel, raw)


@dataclass(frozen=True)
class _Ticket:
    id: str
    turns: int


@dataclass(frozen=True)
class _Ahead:
    """The first model call's reservation made as the turn began; ``refused``: the counter
    that had no room (nothing reserved, the first call is refused)."""

    ticket: _Ticket
    refused: str | None


def new_ticket_id() -> str:
    """A reservation's id, unique across replicas (the process's random prefix) and cheap."""
    return f"{_PROCESS}{next(_TICKETS):x}"


def reservation_ttl(live: LiveConfig, agent: str) -> float:
    config = live.loaded.config.agents.get(agent)
    return (config.timeout_s if config is not None else 60.0) + RESERVATION_SLACK_S


class Meters:
    """The budgets' `TurnMeters`: one `begin` per agent call."""

    def __init__(
        self,
        live: LiveConfig,
        clock: Clock,
        store: BudgetStore,
        ledger: Ledger,
        rules: Rules,
        voices: Voices,
        routing: Routing,
        deliver: Deliver,
        channels: ChannelLookup,
    ) -> None:
        self.live, self.clock, self.store, self.ledger = live, clock, store, ledger
        self.rules, self.voices, self.routing, self.deliver = rules, voices, routing, deliver
        self.channels = channels

    async def standings(self, who: Who) -> list[Standing]:
        now = self.clock.time()
        counters = self.rules.counters(who, now)
        if not counters:
            return []
        usage = await self.store.read([key for _, key, _ in counters], now)
        return [Standing(rule, key, usage[key], ends) for rule, key, ends in counters]

    async def _ahead(self, who: Who, agent: str) -> tuple[list[Standing], _Ahead | None]:
        """The standings, and with them (one store round trip) the reservation of the turn's
        first model call when the agent's estimate is known: the same atomic admission the
        call would make, made as the turn begins."""
        estimate = self.ledger.known_estimate(agent)
        if estimate is None:
            return await self.standings(who), None
        now = self.clock.time()
        counters = self.rules.counters(who, now)
        if not counters:
            return [], None
        nano, tokens = estimate
        charges = [Charge(key, r.limit_nano, r.limit_tokens, r.limit_turns, nano, tokens, 1)
                   for r, key, _ in counters]  # fmt: skip
        ticket = _Ticket(new_ticket_id(), 1)
        expires = now + reservation_ttl(self.live, agent)
        refused, usage = await self.store.reserve_reading(ticket.id, charges, now, expires)
        standings = [Standing(rule, key, usage[key], ends) for rule, key, ends in counters]
        return standings, _Ahead(ticket, refused)

    async def begin(
        self, msg: InboundMessage, agent: str, session: str, target: Target | None
    ) -> MeteredTurn:
        if not self.rules.all():  # no budgets: no one to look up, nothing to refuse or warn of
            bill = TurnBill(self, agent, (), msg, None, None)
            return MeteredTurn(agent, meter=bill, summary=bill.summary)
        who = who_of(msg, agent, session, self.routing)
        standings, ahead = await self._ahead(who, agent)
        voice = self.voices.for_message(msg, agent)
        decided = plan(standings)
        run_on = agent
        if decided.degrade_to is not None and decided.degrade_to in self.live.loaded.config.agents:
            run_on = decided.degrade_to
        if ahead is not None and (decided.refused is not None or run_on != agent):
            # refused, or estimated again at the cheaper agent's own price by its first call
            await self.release_ahead(ahead, standings)
            ahead = None
        if decided.refused is not None:
            refusal = await self.refusal(decided.refused, msg, who, voice)
            return MeteredTurn(agent, refusal=refusal)
        for standing in decided.warn:
            await self._warn(standing, msg, target, voice)
        bill = TurnBill(self, run_on, standings, msg, who, voice, ahead)
        return MeteredTurn(run_on, meter=bill, summary=bill.summary, release=bill.release)

    async def release_ahead(self, ahead: _Ahead, standings: Sequence[Standing]) -> None:
        if ahead.refused is None:
            await self.store.release(ahead.ticket.id, [s.key for s in standings])

    async def refusal(
        self, standing: Standing, msg: InboundMessage, who: Who, voice: Voice
    ) -> AgentError:
        """The budget_exhausted failure, with the words the user reads (nothing left, when it
        resets); in a group at most one per user and hour, else the turn ends silently."""
        now = self.clock.time()
        self.ledger.refusals.labels(rule=standing.rule.name).inc()
        detail = f"budget '{standing.rule.name}' is used up for {standing.key.split('|')[1]}"
        notice = voice.text(TextId.BUDGET_REFUSED, wait=voice.wait(standing.ends - now))
        if msg.chat_kind != "direct":
            key = refusal_flag(who.user, who.chat)
            if not await self.store.once(key, now, now + GROUP_REFUSAL_EVERY_S):
                notice = ""
            elif await self.privately(msg, notice):
                notice = ""  # the sender alone saw it; nothing in the group
        return AgentError(FailureReason.BUDGET_EXHAUSTED, detail, notice=notice)

    async def privately(self, msg: InboundMessage, text: str) -> bool:
        """``text`` to the sender alone where the platform can (a Slack ephemeral)."""
        adapter = await self.channels.ready_adapter(msg.channel)
        return adapter is not None and await adapter.tell_privately(msg, text)

    async def _warn(
        self, standing: Standing, msg: InboundMessage, target: Target | None, voice: Voice
    ) -> None:
        """The one notice per counter and period, across replicas."""
        if target is None:
            return
        now, ends = self.clock.time(), standing.ends
        if not await self.store.once(standing.key + WARN_SUFFIX, now, ends):
            return
        usage, rule = standing.usage, standing.rule
        used, limit = max(
            (
                (u, lim)
                for u, lim in (
                    (usage.nano, rule.limit_nano),
                    (usage.tokens, rule.limit_tokens),
                    (usage.turns, rule.limit_turns),
                )
                if lim is not None
            ),
            key=lambda p: p[0] / p[1] if p[1] else 1.0,
        )
        text = voice.text(
            TextId.BUDGET_WARN, share=format_share(used, limit), wait=voice.wait(ends - now)
        )
        if msg.chat_kind != "direct" and await self.privately(msg, text):
            return
        try:
            await self.deliver(target, OutboundMessage.from_text(text))
        except Exception:  # a notice must never cost the turn
            log.warning("budget warning not delivered", extra={"budget": rule.name})


class TurnBill:
    """One turn's `ModelMeter`: admits each model call and keeps the turn's totals."""

    def __init__(
        self,
        meters: Meters,
        agent: str,
        standings: Sequence[Standing],
        msg: InboundMessage,
        who: Who | None,
        voice: Voice | None,
        ahead: _Ahead | None = None,
    ) -> None:
        """``who`` and ``voice`` (for a refusal) may be None only when nothing is metered."""
        self.meters, self.agent, self.standings = meters, agent, tuple(standings)
        self._ahead = ahead  # the first call's reservation, made as the turn began
        self.msg, self.who, self.voice = msg, who, voice
        self.keys = [s.key for s in self.standings]
        if meters.rules.all():  # while budgets are kept, each agent's spend per day too
            self.keys.append(f"{AGENT_DAY}|{agent}|{meters.rules.utc_day(meters.clock.time())}")
        self.calls = self.tokens_in = self.tokens_out = self.nano = 0
        self.model: str | None = None
        self._counted = False  # the turn has reached the model (counted once in limit_turns)

    async def admit(self, model: str, messages: Sequence[Mapping[str, Any]]) -> object:
        meters, ahead, self._ahead = self.meters, self._ahead, None
        if ahead is not None:  # reserved as the turn began: no store round trip
            if ahead.refused is not None:
                standing = next(s for s in self.standings if s.key == ahead.refused)
                assert self.who is not None and self.voice is not None
                raise await meters.refusal(standing, self.msg, self.who, self.voice)
            self._counted = True
            return ahead.ticket
        turns = 0 if self._counted else 1
        ticket = _Ticket(new_ticket_id(), turns)
        if self.standings:
            nano, tokens = await meters.ledger.estimate(self.agent, model, messages)
            charges = [charge_for(s, nano, tokens, turns) for s in self.standings]
            now = meters.clock.time()
            expires = now + reservation_ttl(meters.live, self.agent)
            refused = await meters.store.reserve(ticket.id, charges, now, expires)
            if refused is not None:
                standing = next(s for s in self.standings if s.key == refused)
                assert self.who is not None and self.voice is not None
                raise await meters.refusal(standing, self.msg, self.who, self.voice)
        self._counted = True
        return ticket

    async def release(self) -> None:
        """The turn is over: a reservation made ahead that no model call used is dropped."""
        ahead, self._ahead = self._ahead, None
        if ahead is not None:
            await self.meters.release_ahead(ahead, self.standings)

    async def settle(self, ticket: object, model: str, usage: Mapping[str, int]) -> None:
        assert isinstance(ticket, _Ticket)
        tokens_in = int(usage.get("prompt_tokens", 0))
        tokens_out = int(usage.get("completion_tokens", 0))
        if not tokens_in and not tokens_out:
            tokens_in = int(usage.get("total_tokens", 0))
        ledger = self.meters.ledger
        reported = usage.get(COST_NANO)  # an audio call's own cost (priced per second, …)
        nano = (
            int(reported)
            if reported is not None
            else await ledger.cost_nano(self.agent, model, tokens_in, tokens_out)
        )
        self.calls += 1
        self.tokens_in += tokens_in
        self.tokens_out += tokens_out
        self.nano += nano
        self.model = model
        ledger.charged(self.agent, model, tokens_in, tokens_out, nano, average=reported is None)
        if self.keys:
            spent = Spent(nano, tokens_in + tokens_out, ticket.turns, average=reported is None)
            await self.meters.store.settle(ticket.id, self.keys, spent, self.agent)

    def summary(self) -> Mapping[str, Any]:
        return {
            "agent": self.agent,
            "model": self.model,
            "calls": self.calls,
            "tokens_in": self.tokens_in,
            "tokens_out": self.tokens_out,
            "cost_usd": self.nano / NANO,
        }
