"""The budgets' operator actions: `chatgate usage` (`/api/usage`) and `chatgate budgets reset
SCOPE:ID` (audited). Declared here with their shapes so the CLI can parse them; the feature
binds the handlers to its store."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from chatgate.operator.actions import Action, Command, DashboardPart, Route, arg
from chatgate.operator.context import NeedsDaemon, OperatorContext
from chatgate.policies.budgets import Scope

GROUP_HELP = {"budgets": "spend budgets"}


@dataclass(frozen=True)
class UsageArgs:
    by: str | None = arg(None, cli="option", help="group by user, chat, agent or channel")
    period: str | None = arg(None, cli="option", help="only rules of this period: day, week, month")

    def problem(self) -> str | None:
        if self.by is not None and self.by not in {s.value for s in Scope}:
            return "--by is one of user, chat, agent, channel, global"
        if self.period is not None and self.period not in ("day", "week", "month"):
            return "--period is one of day, week, month"
        return None


@dataclass(frozen=True)
class ResetArgs:
    scope: str = arg(help="SCOPE:ID, e.g. user:telegram:42, chat:slack:C1, agent:default")


@dataclass(frozen=True)
class UsageReport:
    rows: list[dict[str, Any]] = field(default_factory=list)
    agent_days: list[dict[str, Any]] = field(default_factory=list)  # each agent's spend per day

    def to_json(self) -> dict[str, Any]:
        return {"rows": self.rows, "agent_days": self.agent_days}


@dataclass(frozen=True)
class BudgetReset:
    scope: str
    counters: int

    def to_json(self) -> dict[str, Any]:
        return {"scope": self.scope, "counters": self.counters, "found": self.counters > 0}


async def _needs_daemon(ctx: OperatorContext, args: Any) -> Any:
    raise NeedsDaemon("budgets are read by the running daemon")


USAGE = Action(
    "usage", UsageArgs, UsageReport, _needs_daemon,
    Route("GET", "/api/usage"),
    Command("usage", help="spend per budget counter this period", json_flag=True, offline=False),
    dashboard=DashboardPart("usage", empty=UsageReport()),
)  # fmt: skip
BUDGETS_RESET = Action(
    "budgets_reset", ResetArgs, BudgetReset, _needs_daemon,
    Route("POST", "/api/budgets/reset"),
    Command("budgets", "reset", help="start a scope's budget counters over", offline=False),
)  # fmt: skip
ACTIONS = (USAGE, BUDGETS_RESET)
