"""Spend budgets as pure decisions: which rules apply to a turn, whose counter it charges, the
calendar period a counter belongs to, and the ladder (warn → degrade → refuse).

Money is counted in integer nano-USD (``NANO`` per dollar) so that limits and charges add up
exactly on every backend (a Lua number and a SQLite integer agree; 0.002 × 5 is 0.01).
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from enum import StrEnum

NANO = 1_000_000_000  # nano-USD per USD
GLOBAL_SCOPE = "*"
AGENT_DAY = "@agent-day"  # the implicit counter of each agent's spend per UTC day (the dashboard)
SCHEDULE_PLATFORM = "schedule"
WEBHOOK_PLATFORM = "webhook"


def usd_to_nano(usd: float) -> int:
    return round(usd * NANO)


def nano_to_usd(nano: int) -> float:
    return nano / NANO


@dataclass(frozen=True)
class Price:
    """USD per million tokens in and out."""

    input_per_mtok: float
    output_per_mtok: float

    def cost_nano(self, tokens_in: int, tokens_out: int) -> int:
        # USD per Mtok is nano-USD per thousandth of a token: × 1000 per token.
        return round(
            tokens_in * self.input_per_mtok * 1000 + tokens_out * self.output_per_mtok * 1000
        )


class Scope(StrEnum):
    USER = "user"
    CHAT = "chat"
    AGENT = "agent"
    CHANNEL = "channel"
    GLOBAL = "global"


@dataclass(frozen=True)
class Rule:
    name: str
    scope: Scope
    period: str = "day"  # day | week | month
    timezone: str = "UTC"
    limit_nano: int | None = None
    limit_tokens: int | None = None
    limit_turns: int | None = None
    warn_at: float | None = 0.8
    degrade_to: str | None = None
    degrade_at: float = 0.9
    exempt_users: frozenset[str] = frozenset()
    channels: frozenset[str] = frozenset()
    agents: frozenset[str] = frozenset()


@dataclass(frozen=True)
class Who:
    """Whose turn it is: the user (``CHANNEL:ID``, a webhook's session key, a job's owner),
    the chat (``CHANNEL:CHAT``), the agent and the channel."""

    user: str
    chat: str
    agent: str
    channel: str
    address: str = ""  # the sender's own CHANNEL:ID when `user` is a configured identity


def user_of(
    platform: str,
    address: str,
    session: str,
    owner: str | None,
    chat: str,
) -> str:
    """Who the user of a turn is: a scheduled run's job owner (else its target chat), a webhook
    route's session key, else the sender's ``CHANNEL:ID`` (``address``, canonical)."""
    if platform == SCHEDULE_PLATFORM:
        return owner or chat
    if platform == WEBHOOK_PLATFORM:
        return session
    return address


def applies(rule: Rule, who: Who) -> bool:
    if rule.channels and who.channel not in rule.channels:
        return False
    if rule.agents and who.agent not in rule.agents:
        return False
    return who.user not in rule.exempt_users and who.address not in rule.exempt_users


def scope_id(rule: Rule, who: Who) -> str:
    return {
        Scope.USER: who.user,
        Scope.CHAT: who.chat,
        Scope.AGENT: who.agent,
        Scope.CHANNEL: who.channel,
        Scope.GLOBAL: GLOBAL_SCOPE,
    }[rule.scope]


def counter_key(rule: Rule, scope: str, start: str) -> str:
    """A counter per rule name, scope id and period start (an ISO date)."""
    return f"{rule.name}|{scope}|{start}"


def split_key(key: str) -> tuple[str, str, str]:
    """(rule, scope id, period start) of a counter key (rule names and dates hold no ``|``)."""
    rule, rest = key.split("|", 1)
    scope, start = rest.rsplit("|", 1)
    return rule, scope, start


@dataclass(frozen=True)
class Usage:
    """A counter: settled spend plus what calls in flight have reserved."""

    nano: int = 0
    tokens: int = 0
    turns: int = 0
    reserved_nano: int = 0
    reserved_tokens: int = 0
    reserved_turns: int = 0


def _limits(rule: Rule, usage: Usage) -> Iterable[tuple[int, int]]:
    """(used, limit) for each limit the rule sets; used counts settled spend only."""
    for used, limit in (
        (usage.nano, rule.limit_nano),
        (usage.tokens, rule.limit_tokens),
        (usage.turns, rule.limit_turns),
    ):
        if limit is not None:
            yield used, limit


def share(rule: Rule, usage: Usage) -> float:
    """The largest used share of the rule's limits (1.0 and more: exhausted)."""
    shares = [(used / limit) if limit > 0 else math.inf for used, limit in _limits(rule, usage)]
    return max(shares, default=0.0)


class Rung(StrEnum):
    NONE = "none"
    WARN = "warn"
    DEGRADE = "degrade"
    REFUSE = "refuse"


def rung(rule: Rule, usage: Usage) -> Rung:
    used = share(rule, usage)
    if used >= 1.0:
        return Rung.REFUSE
    if rule.degrade_to is not None and used >= rule.degrade_at:
        return Rung.DEGRADE
    if rule.warn_at is not None and used >= rule.warn_at:
        return Rung.WARN
    return Rung.NONE


@dataclass(frozen=True)
class Standing:
    """One applicable rule with its counter for this period."""

    rule: Rule
    key: str
    usage: Usage
    ends: float  # when the period renews (epoch seconds)

    @property
    def rung(self) -> Rung:
        return rung(self.rule, self.usage)


@dataclass(frozen=True)
class Plan:
    """What the ladder decides for a turn: refuse (by ``refused``), run on ``degrade_to``, and
    which counters are due their one warning."""

    refused: Standing | None = None
    degrade_to: str | None = None
    warn: tuple[Standing, ...] = ()


def plan(standings: Sequence[Standing]) -> Plan:
    """The strictest rule decides: any exhausted rule refuses (the one resetting last names the
    wait); else the rule with the largest used share among those degrading picks the agent."""
    refused = [s for s in standings if s.rung is Rung.REFUSE]
    if refused:
        return Plan(refused=max(refused, key=lambda s: s.ends))
    degrading = [s for s in standings if s.rung is Rung.DEGRADE]
    target = (
        max(degrading, key=lambda s: share(s.rule, s.usage)).rule.degrade_to if degrading else None
    )
    warn = tuple(s for s in standings if s.rung in (Rung.WARN, Rung.DEGRADE))
    return Plan(degrade_to=target, warn=warn)


@dataclass(frozen=True)
class Charge:
    """What one model call asks of one counter: the limits to hold and the estimate to reserve."""

    key: str
    limit_nano: int | None
    limit_tokens: int | None
    limit_turns: int | None
    nano: int
    tokens: int
    turns: int


def charge_for(standing: Standing, nano: int, tokens: int, turns: int) -> Charge:
    rule = standing.rule
    return Charge(
        standing.key, rule.limit_nano, rule.limit_tokens, rule.limit_turns, nano, tokens, turns
    )


def admits(charge: Charge, usage: Usage) -> bool:
    """``spent + reserved + estimate <= limit`` for every limit the counter holds."""
    for used, reserved, ask, limit in (
        (usage.nano, usage.reserved_nano, charge.nano, charge.limit_nano),
        (usage.tokens, usage.reserved_tokens, charge.tokens, charge.limit_tokens),
        (usage.turns, usage.reserved_turns, charge.turns, charge.limit_turns),
    ):
        if limit is not None and used + reserved + ask > limit:
            return False
    return True


def format_usd(nano: int) -> str:
    """Dollars with enough digits that a small amount never reads as 0.00."""
    usd = nano / NANO
    if nano == 0:
        return "$0"
    if usd >= 1:
        return f"${usd:,.2f}"
    digits = max(2, 1 - math.floor(math.log10(usd)))  # two significant digits at least
    return f"${usd:.{min(digits, 9)}f}"


def format_share(used: int, limit: int) -> str:
    if limit <= 0:
        return "100 %"
    pct = 100 * used / limit
    return f"{pct:.1f} %" if pct < 10 else f"{pct:.0f} %"
