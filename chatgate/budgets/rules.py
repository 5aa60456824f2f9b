"""The configured budget rules as policy values, rebuilt when the config is reloaded (a lowered
limit applies at once), and the counters a turn's rules charge."""

from __future__ import annotations

from chatgate.budgets.periods import period_bounds
from chatgate.config.budget_models import BudgetRuleConfig
from chatgate.config.loader import LoadedConfig
from chatgate.feature.ports import LiveConfig
from chatgate.policies.budgets import (
    Rule,
    Scope,
    Who,
    applies,
    counter_key,
    scope_id,
    usd_to_nano,
)


def rule_of(cfg: BudgetRuleConfig) -> Rule:
    return Rule(
        name=cfg.name,
        scope=Scope(cfg.scope),
        period=cfg.period,
        timezone=cfg.timezone,
        limit_nano=usd_to_nano(cfg.limit_usd) if cfg.limit_usd is not None else None,
        limit_tokens=cfg.limit_tokens,
        limit_turns=cfg.limit_turns,
        warn_at=cfg.warn_at,
        degrade_to=cfg.degrade_to,
        degrade_at=cfg.degrade_at,
        exempt_users=frozenset(cfg.exempt_users),
        channels=frozenset(cfg.channels),
        agents=frozenset(cfg.agents),
    )


class Rules:
    def __init__(self, live: LiveConfig) -> None:
        self.live = live
        self._from: LoadedConfig | None = None
        self._rules: tuple[Rule, ...] = ()
        # (period, zone) -> (start, end epoch s, start ISO date): kept until the period ends
        self._periods: dict[tuple[str, str], tuple[float, float, str]] = {}

    def all(self) -> tuple[Rule, ...]:
        loaded = self.live.loaded
        if loaded is not self._from:
            self._rules = tuple(rule_of(r) for r in loaded.config.budgets)
            self._from = loaded
        return self._rules

    def counters(self, who: Who, now: float) -> list[tuple[Rule, str, float]]:
        """(rule, counter key, period end) of every rule that applies to ``who`` now."""
        out = []
        for rule in self.all():
            if applies(rule, who):
                start, end = self._period(rule, now)
                out.append((rule, counter_key(rule, scope_id(rule, who), start), end))
        return out

    def utc_day(self, now: float) -> str:
        """The UTC date (ISO) holding ``now``: the agents' spend-per-day counters."""
        return self._bounds("day", "UTC", now)[0]

    def _period(self, rule: Rule, now: float) -> tuple[str, float]:
        return self._bounds(rule.period, rule.timezone, now)

    def _bounds(self, period: str, zone: str, now: float) -> tuple[str, float]:
        """(start ISO date, end epoch s) of the period holding ``now``; computed once per
        period and zone (date arithmetic on every turn is measurable)."""
        known = self._periods.get((period, zone))
        if known is not None and known[0] <= now < known[1]:
            return known[2], known[1]
        start, end = period_bounds(period, zone, now)
        kept = (start.timestamp(), end.timestamp(), start.date().isoformat())
        self._periods[(period, zone)] = kept
        return kept[2], kept[1]
