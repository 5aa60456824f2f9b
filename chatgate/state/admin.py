"""Operator reads over the state protocols: session listings and the decision trail (`why`).

The operator actions (`chatgate.operator`) answer `why` through here, in the daemon and in the
CLI against the store itself.
"""

from __future__ import annotations

import time
from collections.abc import Iterable, Mapping
from typing import Any

from chatgate.model.reasons import TakeoverReason
from chatgate.policies.approvals import ApprovalState
from chatgate.policies.schedules import SCHEDULE_PLATFORM
from chatgate.state.approvals import KV_NAME as APPROVALS
from chatgate.state.approvals import ApprovalStore
from chatgate.state.factory import State
from chatgate.state.records import (
    TERMINAL,
    JournalEntry,
    JournalState,
    TranscriptLine,
    receipt_key,
)
from chatgate.tracing import TRACE_ID

RECEIPT_ORDER = ("sent", "delivered", "read")


async def sessions_list(state: State, limit: int = 200) -> dict[str, Any]:
    return {"sessions": [s.to_dict() for s in await state.sessions.recent(limit)]}


async def session_show(state: State, key: str) -> dict[str, Any]:
    lines = await state.sessions.transcript(key)
    messages = [line.to_dict() for line in lines] if lines is not None else []
    return {"found": lines is not None, "key": key, "messages": messages}


async def why(
    state: State, channel: str, message_id: str | None, user: str | None
) -> dict[str, Any]:
    """The decision trail of one message, or of a user's latest messages."""
    entries = await state.journal.find(channel, message_id=message_id, sender_id=user)
    trails = [trail(e) for e in entries]
    keys = [receipt_key(i) for e in entries for i in e.delivery_ids]
    found = await state.facts.get_many(channel, keys, time.time()) if keys else {}
    approvals = state.stores.kv.get(APPROVALS)
    for entry, item in zip(entries, trails, strict=True):
        receipts = {i: found[receipt_key(i)] for i in entry.delivery_ids if receipt_key(i) in found}
        if receipts:
            item["receipts"] = receipts
            item["summary"] += receipt_summary(receipts.values())
        if isinstance(approvals, ApprovalStore) and entry.state not in TERMINAL:
            await _waiting(approvals, entry, item)
    await _human_replies(state, entries, trails)
    return {"trails": trails}


async def _human_replies(
    state: State, entries: list[JournalEntry], trails: list[dict[str, Any]]
) -> None:
    """An operator's replies as the bot (a human took the chat over), each on the trail of the
    message it followed in its conversation: who answered when the bot did not."""
    by_session: dict[str, list[tuple[JournalEntry, dict[str, Any]]]] = {}
    for entry, item in zip(entries, trails, strict=True):
        if entry.session:
            by_session.setdefault(entry.session, []).append((entry, item))
    for session, found in by_session.items():
        transcript = await state.sessions.transcript(session) or []
        if not any(x.human for x in transcript):
            continue
        after = _human_lines_after(transcript)
        for entry, item in found:
            replies = after.get(entry.key)
            if replies:
                item["human_replies"] = [
                    {"by": x.human, "at": x.at, "text": x.content[:200]} for x in replies
                ]
                who = ", ".join(dict.fromkeys(str(x.human) for x in replies))
                item["summary"] += f"; a human replied as the bot ({who})"


def _human_lines_after(transcript: list[TranscriptLine]) -> dict[str, list[TranscriptLine]]:
    """A user line's key → the lines a human wrote as the bot after it."""
    after: dict[str, list[TranscriptLine]] = {}
    current: list[TranscriptLine] | None = None
    for line in transcript:
        if line.role == "user":
            current = after.setdefault(line.source, []) if line.source else None
        elif line.human and current is not None:
            current.append(line)
    return after


async def _waiting(store: ApprovalStore, entry: JournalEntry, item: dict[str, Any]) -> None:
    """A turn not finished yet may be waiting for someone to approve a tool call."""
    prompts = await store.for_message(entry.key)
    if not prompts:
        return
    item["approvals"] = [p.to_dict() for p in prompts]
    pending = [p for p in prompts if p.state is ApprovalState.PENDING]
    if pending:
        shown = item["approvals"][prompts.index(pending[-1])]
        item["summary"] += (
            f"; waiting for approval of {shown['tool']} (asked in {shown['asked_in']})"
        )


def receipt_summary(receipts: Iterable[Mapping[str, Any]]) -> str:
    """What the platform later reported about the sent messages: the least progressed one
    (a reply is read only when every part is), or a failure with its reason."""
    listed = list(receipts)
    failed = [r for r in listed if r.get("status") == "failed"]
    if failed:
        return f"; the platform reported it failed: {failed[0].get('error') or 'no reason given'}"
    ranks = [RECEIPT_ORDER.index(r["status"]) for r in listed if r.get("status") in RECEIPT_ORDER]
    return f"; {RECEIPT_ORDER[min(ranks)]} per the platform" if ranks else ""


def trail(entry: JournalEntry) -> dict[str, Any]:
    """One message's fate in a sentence an operator can act on, plus the raw trail fields."""
    summary = fate(entry)
    media = [m for m in (entry.reply or {}).get("media") or () if m.get("message") == entry.key]
    if media:
        summary += "; files: " + ", ".join(f"{m['name']} → {m['reason']}" for m in media)
    out: dict[str, Any] = {
        "key": entry.key,
        "received_at": entry.received_at,
        "state": entry.state.value,
        "stage": entry.stage,
        "reason": entry.reason,
        "delivery": entry.delivery,
        "summary": summary,
        "delivery_ids": entry.delivery_ids,
        **({"media": media} if media else {}),
    }
    tools = (entry.reply or {}).get("tools")
    if isinstance(tools, dict) and tools.get("calls"):
        out["tools"] = tools
        out["summary"] = f"{summary}; {tool_summary(tools)}"
    usage = (entry.reply or {}).get("usage")
    if isinstance(usage, dict) and usage.get("calls"):
        out["usage"] = usage
        out["summary"] = f"{out['summary']}; {usage_summary(usage)}"
    trace_id = entry.message.extra.get(TRACE_ID)
    if isinstance(trace_id, str):
        out["trace_id"] = trace_id
    return out


def usage_summary(usage: dict[str, Any]) -> str:
    """``2 model calls (cheap), 310 tokens in / 42 out, $0.000046`` (the budgets' accounting)."""
    calls = int(usage.get("calls") or 0)
    cost = float(usage.get("cost_usd") or 0.0)
    return (
        f"{calls} model call{'s' if calls != 1 else ''} ({usage.get('agent')}), "
        f"{usage.get('tokens_in', 0)} tokens in / {usage.get('tokens_out', 0)} out, ${cost:.6f}"
    )


def fate(entry: JournalEntry) -> str:
    """What became of the message, in one sentence."""
    state, reason = entry.state, entry.reason
    if state is JournalState.DROPPED:
        return f"dropped at {entry.stage}: {reason}"
    if reason == TakeoverReason.PAUSED:
        return _held(entry)
    if state is JournalState.DONE:
        return f"answered ({reason})" + _delivered(entry.delivery)
    if state is JournalState.ANSWERED:
        return f"answered ({reason}), delivery not finished yet"
    return "accepted, turn not finished yet"


def _held(entry: JournalEntry) -> str:
    """A message that came while a human had taken the chat over."""
    if entry.message.platform == SCHEDULE_PLATFORM:
        return "scheduled run held, not run (paused: a human took over the chat)"
    target = entry.message.reply_target
    if entry.message.answers_elsewhere and target is not None:
        return (
            f"held, not run: its answer goes to {target.channel}:{target.chat_id}, "
            "paused (a human took over the chat)"
        )
    return "kept as context, not answered (paused: a human took over the chat)"


def _delivered(delivery: str | None) -> str:
    if delivery == "sent":
        return ", delivered"
    if not delivery:
        return ""
    in_dlq = ", in DLQ" if delivery in ("undelivered", "dead_target") else ""
    return f", delivery {delivery}{in_dlq}"


def tool_summary(tools: Mapping[str, Any]) -> str:
    """``3 tool calls (2 ok, 1 timeout)`` from a turn's journaled tool trail."""
    counts: dict[str, int] = {}
    for call in tools.get("trail") or []:
        status = str(call.get("status"))
        counts[status] = counts.get(status, 0) + 1
    detail = ", ".join(f"{n} {status}" for status, n in counts.items())
    calls = int(tools.get("calls", 0))
    return f"{calls} tool call{'s' if calls != 1 else ''}" + (f" ({detail})" if detail else "")
