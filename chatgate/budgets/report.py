"""What `/usage` says in the chat and what `chatgate usage` / `/api/usage` list."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from chatgate.model.text_ids import TextId
from chatgate.policies.budgets import (
    AGENT_DAY,
    NANO,
    Rule,
    Standing,
    Usage,
    format_share,
    format_usd,
    split_key,
)
from chatgate.texts.voice import Voice


def _used_and_limit(rule: Rule, usage: Usage) -> tuple[str, str, str]:
    """(used, limit, share) of the rule's tightest limit, in words a user reads."""
    rows: list[tuple[float, str, str, str]] = []
    for used, limit, shown in (
        (usage.nano, rule.limit_nano, format_usd),
        (usage.tokens, rule.limit_tokens, lambda n: f"{n:,} tokens"),
        (usage.turns, rule.limit_turns, lambda n: f"{n:,} turns"),
    ):
        if limit is not None:
            ratio = used / limit if limit else 1.0
            rows.append((ratio, shown(used), shown(limit), format_share(used, limit)))
    _, used_text, limit_text, share_text = max(rows, key=lambda r: r[0])
    return used_text, limit_text, share_text


def usage_text(standings: Sequence[Standing], voice: Voice, now: float) -> str:
    if not standings:
        return voice.text(TextId.USAGE_NONE)
    lines = [voice.text(TextId.USAGE_TITLE)]
    for standing in standings:
        used, limit, share = _used_and_limit(standing.rule, standing.usage)
        wait = voice.wait(standing.ends - now)
        lines.append(
            voice.text(
                TextId.USAGE_LINE,
                rule=standing.rule.name,
                used=used,
                limit=limit,
                share=share,
                wait=wait,
            )
        )
    return "\n".join(lines)


def usage_rows(
    counters: Mapping[str, Usage],
    rules: Mapping[str, Rule],
    *,
    by: str | None = None,
    period: str | None = None,
) -> list[dict[str, Any]]:
    """One row per counter (or per scope id of the ``by`` kind, summed), biggest spend first."""
    rows: dict[tuple[str, ...], dict[str, Any]] = {}
    for key, usage in counters.items():
        name, scope, start = split_key(key)
        if name == AGENT_DAY:
            continue
        rule = rules.get(name)
        if period is not None and (rule is None or rule.period != period):
            continue
        if by is not None and (rule is None or rule.scope.value != by):
            continue
        group = (scope, start) if by is not None else (name, scope, start)
        row = rows.setdefault(
            group,
            {
                "rule": name if by is None else None,
                "scope": rule.scope.value if rule is not None else None,
                "id": scope,
                "period_start": start,
                "usd": 0.0,
                "tokens": 0,
                "turns": 0,
            },
        )
        row["usd"] += usage.nano / NANO
        row["tokens"] += usage.tokens
        row["turns"] += usage.turns
        if by is None and rule is not None:
            row["limit_usd"] = rule.limit_nano / NANO if rule.limit_nano is not None else None
            row["limit_tokens"] = rule.limit_tokens
            row["limit_turns"] = rule.limit_turns
    return sorted(rows.values(), key=lambda r: (-r["usd"], -r["tokens"], r["id"]))


def agent_days(counters: Mapping[str, Usage], days: int = 14) -> list[dict[str, Any]]:
    """Each agent's spend per UTC day (kept while any budget is configured), newest first."""
    rows = []
    for key, usage in counters.items():
        name, agent, day = split_key(key)
        if name == AGENT_DAY:
            rows.append(
                {
                    "agent": agent,
                    "day": day,
                    "usd": usage.nano / NANO,
                    "tokens": usage.tokens,
                    "turns": usage.turns,
                }
            )
    rows.sort(key=lambda r: (r["day"], r["agent"]), reverse=True)
    newest = sorted({str(r["day"]) for r in rows}, reverse=True)[:days]
    return [r for r in rows if r["day"] in newest]
