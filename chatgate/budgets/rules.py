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
                start, end = period_bounds(rule.period, rule.timezone, now)
                key = counter_key(rule, scope_id(rule, who), start.date().isoformat())
                out.append((rule, key, end.timestamp()))
        return out
