"""The budgets' pure rules: who the user is, which rules apply, the calendar period, the ladder
and admission, money in words that never read as 0.00."""

from __future__ import annotations

from datetime import datetime
from zoneinfo import ZoneInfo

import pytest

from chatgate.policies.budgets import (
    Charge,
    Price,
    Rule,
    Rung,
    Scope,
    Standing,
    Usage,
    Who,
    admits,
    applies,
    counter_key,
    format_usd,
    plan,
    rung,
    scope_id,
    split_key,
    usd_to_nano,
    user_of,
)

WHO = Who("telegram:42", "telegram:-100", "default", "telegram", "telegram:9")
END = datetime(2026, 12, 7, tzinfo=ZoneInfo("UTC")).timestamp()


@pytest.mark.parametrize(
    ("platform", "owner", "expected"),
    [
        ("telegram", None, "telegram:42"),
        ("webhook", None, "agent:default:webhook:gh"),
        ("schedule", "slack:U1", "slack:U1"),
        ("schedule", None, "telegram:-100"),
    ],
)
def test_who_the_user_is(platform: str, owner: str | None, expected: str) -> None:
    got = user_of(platform, "telegram:42", "agent:default:webhook:gh", owner, "telegram:-100")
    assert got == expected


@pytest.mark.parametrize(
    ("rule", "applies_"),
    [
        (Rule("r", Scope.USER, limit_turns=1), True),
        (Rule("r", Scope.USER, limit_turns=1, channels=frozenset({"slack"})), False),
        (Rule("r", Scope.USER, limit_turns=1, agents=frozenset({"other"})), False),
        (Rule("r", Scope.USER, limit_turns=1, exempt_users=frozenset({"telegram:42"})), False),
        (Rule("r", Scope.USER, limit_turns=1, exempt_users=frozenset({"telegram:9"})), False),
    ],
)
def test_which_rules_apply(rule: Rule, applies_: bool) -> None:
    assert applies(rule, WHO) is applies_


@pytest.mark.parametrize(
    ("scope", "expected"),
    [
        (Scope.USER, "telegram:42"),
        (Scope.CHAT, "telegram:-100"),
        (Scope.AGENT, "default"),
        (Scope.CHANNEL, "telegram"),
        (Scope.GLOBAL, "*"),
    ],
)
def test_scope_ids(scope: Scope, expected: str) -> None:
    assert scope_id(Rule("r", scope, limit_turns=1), WHO) == expected


def test_counter_keys_split_back_even_with_colons_in_the_scope() -> None:
    key = counter_key(Rule("per-user", Scope.USER, limit_turns=1), "matrix:@a:b.org", "2026-12-06")
    assert split_key(key) == ("per-user", "matrix:@a:b.org", "2026-12-06")


LADDER = Rule("r", Scope.USER, limit_turns=10, warn_at=0.5, degrade_to="cheap", degrade_at=0.8)


@pytest.mark.parametrize(
    ("turns", "expected"),
    [(0, Rung.NONE), (4, Rung.NONE), (5, Rung.WARN), (8, Rung.DEGRADE), (10, Rung.REFUSE)],
)
def test_the_ladder(turns: int, expected: Rung) -> None:
    assert rung(LADDER, Usage(turns=turns)) is expected


def test_the_strictest_rule_decides() -> None:
    degrade = Standing(LADDER, "a", Usage(turns=9), END)
    exhausted = Standing(Rule("b", Scope.CHAT, limit_turns=3), "b", Usage(turns=3), END)
    assert plan([degrade, exhausted]).refused is exhausted
    decided = plan([degrade])
    assert decided.degrade_to == "cheap" and decided.warn == (degrade,)


@pytest.mark.parametrize(
    ("spent", "reserved", "ask", "ok"),
    [(8, 0, 2, True), (9, 0, 2, False), (6, 2, 2, True), (6, 3, 2, False)],
)
def test_admission(spent: int, reserved: int, ask: int, ok: bool) -> None:
    charge = Charge("k", 10, None, None, ask, 0, 0)
    assert admits(charge, Usage(nano=spent, reserved_nano=reserved)) is ok


@pytest.mark.parametrize(
    ("usd", "shown"),
    [(0.0, "$0"), (0.0042, "$0.0042"), (0.5, "$0.50"), (12.345, "$12.35"), (1.2e-7, "$0.00000012")],
)
def test_money_never_reads_as_zero(usd: float, shown: str) -> None:
    assert format_usd(usd_to_nano(usd)) == shown


def test_prices_per_million_tokens() -> None:
    assert Price(0.15, 0.60).cost_nano(1_000_000, 1_000_000) == usd_to_nano(0.75)
