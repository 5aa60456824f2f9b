"""Budgets as a feature: the turn meters, `/usage` in chat, `/api/usage` and the reset action,
its section of `/api/status`; its store on the gateway's state backend."""

from __future__ import annotations

import asyncio
import dataclasses
import logging
from collections.abc import Mapping, Sequence
from typing import Any

from chatgate.agents.litellm_import import litellm_module
from chatgate.budgets.actions import (
    BUDGETS_RESET,
    USAGE,
    BudgetReset,
    ResetArgs,
    UsageArgs,
    UsageReport,
)
from chatgate.budgets.ledger import Ledger
from chatgate.budgets.meter import Meters, who_of
from chatgate.budgets.personal import UsageCounters
from chatgate.budgets.report import agent_days, usage_rows, usage_text
from chatgate.budgets.rules import Rules
from chatgate.budgets.store import DB_FILE, BudgetStore, SqliteBudgetStore
from chatgate.config.loader import LoadedConfig
from chatgate.feature.base import Feature
from chatgate.feature.context import FeatureContext
from chatgate.feature.intake import CommandHandler
from chatgate.feature.turns import TurnMeters
from chatgate.model.messages import InboundMessage
from chatgate.operator.actions import AnyAction
from chatgate.operator.context import OperatorContext
from chatgate.policies.budgets import Scope
from chatgate.state.personal import PersonalData

log = logging.getLogger("chatgate.budgets")
USAGE_COMMAND = "usage"


def budget_store(loaded: LoadedConfig, client: object = None) -> BudgetStore:
    """The counters on the gateway's state backend (Redis: shared by every replica)."""
    gateway = loaded.config.gateway
    if gateway.store.backend == "redis":
        from chatgate.budgets.store_redis import RedisBudgetStore  # only replicas load redis

        return RedisBudgetStore(gateway, client)
    return SqliteBudgetStore(loaded.state_dir / DB_FILE)


class Budgets(Feature):
    name = "budgets"

    def __init__(self, context: FeatureContext) -> None:
        self.context = context
        self._warming: asyncio.Future[Any] | None = None
        self.store = budget_store(context.loaded, context.state.stores.client)
        self.ledger = Ledger(context.live, self.store, context.metrics)
        self.rules = Rules(context.live)
        self.meters = Meters(
            context.live,
            context.clock,
            self.store,
            self.ledger,
            self.rules,
            context.voices,
            context.routing,
            context.deliver,
            context.channels,
        )

    def personal_data(self) -> Sequence[PersonalData]:
        return (UsageCounters(self.store, self.context.routing.principal_of),)

    def turn_meters(self) -> TurnMeters | None:
        return self.meters

    def commands(self) -> Mapping[str, CommandHandler]:
        return {USAGE_COMMAND: self.usage_command}

    def actions(self) -> Sequence[AnyAction]:
        return (
            dataclasses.replace(USAGE, handler=self._usage),
            dataclasses.replace(BUDGETS_RESET, handler=self._reset),
        )

    async def open(self) -> None:
        await self.store.open()
        if any(r.limit_nano is not None or r.limit_tokens is not None for r in self.rules.all()):
            # an agent's first calls are estimated with litellm's token counter: import it
            # while idle (on its own thread) rather than inside the first budgeted turn
            self._warming = asyncio.ensure_future(litellm_module())
            self._warming.add_done_callback(_outcome_read)

    async def close(self) -> None:
        if self._warming is not None:
            self._warming.cancel()
        await self.store.close()

    async def forget(self, scope: str) -> int:
        """Delete every budget counter of scope id ``scope`` (a privacy erase, a reset)."""
        return await self.store.forget(scope)

    async def usage_command(self, msg: InboundMessage, principal: str) -> str:
        """`/usage`: this period's use and what is left, per rule that applies to the sender."""
        section = self.context.loaded.channels.get(msg.channel)
        agent = section.chat.agent if section is not None and section.chat is not None else ""
        session = self.context.routing.session_for(msg.reply_target) if msg.reply_target else ""
        who = who_of(msg, agent, session, self.context.routing)
        standings = await self.meters.standings(who)
        voice = self.context.voices.for_message(msg, agent)
        return usage_text(standings, voice, self.context.clock.time())

    async def _usage(self, ctx: OperatorContext, args: UsageArgs) -> UsageReport:
        counters = await self.store.counters()
        rules = {r.name: r for r in self.rules.all()}
        rows = usage_rows(counters, rules, by=args.by, period=args.period)
        return UsageReport(rows, agent_days(counters))

    async def _reset(self, ctx: OperatorContext, args: ResetArgs) -> BudgetReset:
        kind, _, rest = args.scope.partition(":")
        scope = rest if kind in {s.value for s in Scope} and rest else args.scope
        counters = await self.store.forget(scope)
        log.warning(  # the audit line: who was reset, how many counters
            "budget counters reset by the operator",
            extra={"scope": args.scope, "counters": counters},
        )
        return BudgetReset(args.scope, counters)

    def apply_config(self, loaded: LoadedConfig) -> None:
        self.rules.all()  # rebuilt from the new config (a lowered limit applies at once)

    async def status(self) -> Mapping[str, Any]:
        return {"budgets": [r.name for r in self.rules.all()]}


def _outcome_read(future: asyncio.Future[Any]) -> None:
    """A failed background import is not reported at exit: the turn that needs litellm
    imports it again and reports the failure there."""
    if not future.cancelled():
        future.exception()
